//! The exercises of chapter 14, held to hand-computed values and to properties. They run
//! against the reference solutions by default and against `src/exercises.rs` with
//! `--features exercises`.

use chapter14::exercises::{batch_launches, transfer_share, transposed_copy_order};
use chapter14::{CostModel, Tiling};

#[test]
fn exercise_1_batch_launches_cover_the_batch_once_within_the_limit() {
    assert_eq!(batch_launches(5, 2), vec![(0, 2), (2, 2), (4, 1)]);
    assert_eq!(batch_launches(4, 4), vec![(0, 4)]);
    assert_eq!(batch_launches(0, 3), vec![]);
    for (batch, max) in [(1, 1), (70_000, 65_535), (131_070, 65_535), (10, 3)] {
        let launches = batch_launches(batch, max);
        let mut next = 0;
        for &(first, count) in &launches {
            assert_eq!(first, next, "batch {batch}, max {max}: {launches:?}");
            assert!(
                count >= 1 && count <= max,
                "batch {batch}, max {max}: {launches:?}"
            );
            next += count;
        }
        assert_eq!(next, batch);
        assert_eq!(launches.len(), batch.div_ceil(max));
    }
}

#[test]
fn exercise_2_the_transposed_copy_reads_consecutive_addresses_and_fills_the_block_once()
 {
    for tiling in [Tiling::TILE64, Tiling::TILE128] {
        let (tile, bk) = (tiling.tile(), tiling.step());
        let mut seen = vec![false; tile * bk];
        for e in 0..tile * bk {
            let (mm, kk) = transposed_copy_order(e, tile, bk);
            assert!(mm < tile && kk < bk, "{e}: ({mm}, {kk})");
            assert!(!seen[kk * tile + mm], "{e}: ({mm}, {kk}) copied twice");
            seen[kk * tile + mm] = true;
            // A transposed A is stored [k, m]: address kk·M + mm. Value e + 1 must sit
            // right after value e, except where a row of the block ends.
            if (e + 1) % tile != 0 {
                assert_eq!(
                    transposed_copy_order(e + 1, tile, bk),
                    (mm + 1, kk),
                    "{e}"
                );
            }
        }
    }
    assert_eq!(transposed_copy_order(0, 64, 16), (0, 0));
    assert_eq!(transposed_copy_order(65, 64, 16), (1, 1));
}

#[test]
fn exercise_3_transfer_share_is_the_moving_time_over_the_whole() {
    let model = CostModel {
        cpu_flops: 1e11,
        gpu_flops: 1e13,
        launch_seconds: 1e-5,
        upload_bytes_per_second: 1e10,
        readback_bytes_per_second: 5e9,
    };
    // n = 1000: compute 1e-5 + 2e-4 s; moving 2 · 4e6 / 1e10 + 4e6 / 5e9 = 1.6e-3 s.
    let share = transfer_share(&model, 1000);
    assert!((share - 1.6e-3 / (1.6e-3 + 2.1e-4)).abs() < 1e-9, "{share}");
    // Transfers grow as n², compute as n³: past the sizes where the launch dominates, the
    // share falls as n grows.
    assert!(transfer_share(&model, 4000) < share);
    assert!(transfer_share(&model, 16_000) < transfer_share(&model, 4000));
    // At n = 100 the launch (10 µs) is most of the compute: 1.6e-5 of 2.62e-5 s moving.
    let small = transfer_share(&model, 100);
    assert!(
        (small - 1.6e-5 / (1.6e-5 + 1.02e-5)).abs() < 1e-9,
        "{small}"
    );
}
