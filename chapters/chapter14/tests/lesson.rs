//! The lesson's claims, checked: grids cover their work, the CPU replay of the tiled kernel
//! computes the definition (and, with the `wgpu` feature, what the engine's GPU kernel
//! computes), the traffic formula counts what the replay reads, and the cost model and the
//! sample file behave as the page says.

use chapter14::*;

#[test]
fn an_elementwise_grid_gives_every_element_to_exactly_one_invocation() {
    // Small limits so that the 2-D spread is exercised: at most 3 workgroups of 4 per row
    // and 3 rows, so up to 36 elements.
    for n in [0, 1, 4, 5, 12, 13, 25, 35, 36] {
        let g = elementwise_grid(n, 4, 3);
        assert!(g.x <= 3 && g.y <= 3 && g.z == 1, "n = {n}: {g:?}");
        let mut hits = vec![0; n];
        for wy in 0..g.y {
            for wx in 0..g.x {
                for local in 0..4 {
                    let i = invocation_index(&g, (wx, wy), local, 4);
                    if i < n {
                        hits[i] += 1;
                    }
                }
            }
        }
        assert!(hits.iter().all(|&h| h == 1), "n = {n}: {hits:?}");
        // No more than one spare workgroup per row.
        assert!(g.groups() < n.div_ceil(4) + g.y, "n = {n}: {g:?}");
    }
    // Just past WebGPU's limit, two even rows rather than a full one and a near-empty one.
    let g = elementwise_grid(65_536 * 256, GROUP, MAX_GROUPS_PER_DIM);
    assert_eq!((g.x, g.y), (32_768, 2));
}

#[test]
fn a_matmul_grid_has_one_workgroup_per_output_tile() {
    assert_eq!(matmul_grid(1024, 1024, 1, 64), Grid { x: 16, y: 16, z: 1 });
    assert_eq!(matmul_grid(65, 129, 3, 64), Grid { x: 3, y: 2, z: 3 });
    assert_eq!(matmul_grid(0, 5, 1, 128).groups(), 0);
}

#[test]
fn the_replay_of_the_tiled_kernel_computes_the_definition_bit_for_bit() {
    // It adds the same products in the same order (k ascending, one fused multiply-add
    // each); the zeros padding the last step add +0, which changes nothing.
    for (m, k, n) in [
        (1, 1, 1),
        (37, 50, 45),
        (64, 16, 64),
        (65, 17, 129),
        (3, 0, 4),
        (130, 9, 2),
    ] {
        let (a, b) = (seeded(m * k, 1), seeded(k * n, 2));
        let definition = naive_matmul(&a, &b, (m, k, n));
        for tiling in [Tiling::TILE64, Tiling::TILE128] {
            let tiled = tiled_matmul(&a, &b, (m, k, n), tiling);
            assert_eq!(tiled, definition, "[{m}, {k}] · [{k}, {n}], {tiling:?}");
        }
    }
    // And the definition is a matrix product: [[1, 2], [3, 4]] · [[5, 6], [7, 8]].
    let c = tiled_matmul(
        &[1.0, 2.0, 3.0, 4.0],
        &[5.0, 6.0, 7.0, 8.0],
        (2, 2, 2),
        Tiling::TILE64,
    );
    assert_eq!(c, vec![19.0, 22.0, 43.0, 50.0]);
}

#[test]
fn each_step_copies_four_values_of_a_and_of_b_per_invocation() {
    for tiling in [Tiling::TILE64, Tiling::TILE128] {
        assert_eq!(tiling.tile() * tiling.step(), 4 * INVOCATIONS);
    }
    assert_eq!((Tiling::TILE64.tile(), Tiling::TILE64.step()), (64, 16));
    assert_eq!((Tiling::TILE128.tile(), Tiling::TILE128.step()), (128, 8));
}

#[test]
fn the_traffic_formula_counts_the_copies() {
    // One workgroup, one step: a 64 × 16 block of A and a 16 × 64 block of B.
    assert_eq!(
        main_memory_reads(64, 16, 64, Tiling::TILE64),
        (2 * 64 * 64 * 16, 2 * 64 * 16)
    );
    // Square products divisible by the tile: the tile size fewer reads than the naive kernel.
    for (n, tiling) in [
        (1024, Tiling::TILE64),
        (1024, Tiling::TILE128),
        (4096, Tiling::TILE128),
    ] {
        let (naive, tiled) = main_memory_reads(n, n, n, tiling);
        assert_eq!(naive, tiled * tiling.tile(), "{n}, {tiling:?}");
    }
    // Edges are paid in whole tiles: [65, 1] · [1, 65] still copies 2 × 2 tiles of 64 × 16.
    assert_eq!(
        main_memory_reads(65, 1, 65, Tiling::TILE64).1,
        4 * 2 * 64 * 16
    );
}

fn model() -> CostModel {
    CostModel {
        cpu_flops: 100e9,
        gpu_flops: 10e12,
        launch_seconds: 10e-6,
        upload_bytes_per_second: 10e9,
        readback_bytes_per_second: 5e9,
    }
}

#[test]
fn the_cost_model_adds_a_launch_and_the_transfers() {
    let m = model();
    // n = 1000: 2e9 operations; 4 MB per matrix.
    assert!((m.cpu_seconds(1000) - 0.02).abs() < 1e-12);
    assert!((m.gpu_seconds(1000, false) - (10e-6 + 2e-4)).abs() < 1e-12);
    let transfers = 2.0 * 4e6 / 10e9 + 4e6 / 5e9;
    assert!((m.gpu_seconds(1000, true) - (10e-6 + 2e-4 + transfers)).abs() < 1e-12);
    // Tiny products lose to the launch, large ones win: the break-even is where they cross.
    let n = m.break_even().unwrap();
    assert!(m.gpu_seconds(n, true) < m.cpu_seconds(n));
    assert!(m.gpu_seconds(n / 2, true) >= m.cpu_seconds(n / 2));
    // A GPU no faster than the CPU never pays off.
    let slow = CostModel {
        gpu_flops: 100e9,
        ..m
    };
    assert_eq!(slow.break_even(), None);
}

#[test]
fn a_sample_survives_its_file_format_and_gives_its_rates() {
    let sample = Sample {
        cpu: "a CPU, 2 cores".into(),
        gpu: "a GPU, Vulkan (DiscreteGpu)".into(),
        rows: vec![
            Row {
                kind: Kind::Matmul,
                size: 1000,
                cpu: Some(0.02),
                gpu: Some(2e-4),
            },
            Row {
                kind: Kind::Launch,
                size: 1,
                cpu: Some(1e-7),
                gpu: Some(1e-5),
            },
            Row {
                kind: Kind::Upload,
                size: 1 << 20,
                cpu: None,
                gpu: Some(1e-4),
            },
            Row {
                kind: Kind::Readback,
                size: 1 << 20,
                cpu: None,
                gpu: Some(2e-4),
            },
        ],
    };
    let back = Sample::parse(&sample.to_text()).unwrap();
    assert_eq!(back, sample);
    let table = sample.table();
    assert!(table.contains("| matmul [1000, 1000] · [1000, 1000] | 20.00 ms | 200.0 µs | 100.0 GFLOP/s | 10000.0 GFLOP/s |"), "{table}");
    assert!(
        table.contains("| upload 1.00 MiB | — | 100.0 µs |  | 10.49 GB/s |"),
        "{table}"
    );
    let m = sample.cost_model().unwrap();
    assert!((m.cpu_flops - 100e9).abs() < 1.0 && (m.gpu_flops - 10e12).abs() < 10.0);
    assert!((m.readback_bytes_per_second - (1 << 20) as f64 / 2e-4).abs() < 1.0);
    // Without a GPU column there is no model.
    let cpu_only = Sample {
        rows: vec![Row {
            gpu: None,
            ..sample.rows[0]
        }],
        ..sample
    };
    assert_eq!(cpu_only.cost_model(), None);
    assert!(
        Sample::parse("cpu\tx\ngpu\ty\nmatmul\tten\t1\t-\n")
            .unwrap_err()
            .contains("whole number")
    );
}

#[test]
fn the_committed_sample_is_complete() {
    let sample = Sample::committed();
    assert!(!sample.cpu.is_empty() && !sample.gpu.is_empty());
    for (kind, size) in measure::plan(false) {
        let row = sample
            .row(kind, size)
            .unwrap_or_else(|| panic!("{} missing", kind.label(size)));
        let transfer = matches!(kind, Kind::Upload | Kind::Readback);
        assert_eq!(row.cpu.is_some(), !transfer, "{}", kind.label(size));
        assert!(
            row.gpu.is_some(),
            "{}: the committed run had a GPU",
            kind.label(size)
        );
    }
}

#[test]
fn every_measurement_runs_on_the_cpu() {
    // Not a timing test: each measurement runs and gives a positive time.
    for kind in [
        Kind::Matmul,
        Kind::Launch,
        Kind::SdpaForward,
        Kind::MultiHeadTraining,
    ] {
        let seconds = measure::time_on(&engine::Device::Cpu, kind, 8);
        assert!(seconds > 0.0, "{kind:?}");
    }
}

/// With the `wgpu` feature: the engine's GPU kernel gives what the replay gives, to
/// rounding (a GPU may or may not fuse the multiply-add; the order is the same).
#[test]
fn the_engine_gpu_kernel_agrees_with_the_replay() {
    if !cfg!(feature = "wgpu") {
        return;
    }
    let gpu = engine::Device::gpu()
        .expect("the wgpu feature needs a GPU adapter for this test");
    for (m, k, n) in [(37, 50, 45), (130, 70, 200)] {
        let (a, b) = (seeded(m * k, 3), seeded(k * n, 4));
        let replay = tiled_matmul(&a, &b, (m, k, n), Tiling::TILE64);
        let on_gpu = engine::Tensor::from_vec(a, [m, k])
            .to(&gpu)
            .matmul(&engine::Tensor::from_vec(b, [k, n]).to(&gpu))
            .to_vec();
        for (i, (&r, &g)) in replay.iter().zip(&on_gpu).enumerate() {
            assert!(
                (r - g).abs() <= 1e-5 * (1.0 + r.abs()),
                "[{m}, {k}] · [{k}, {n}] entry {i}: {r} against {g}"
            );
        }
    }
}
