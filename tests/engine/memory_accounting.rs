//! Exact byte counts for live tensors and the peak since a reset.

use engine::{Tensor, memory};

#[test]
fn allocating_and_dropping_known_sizes_is_counted_exactly() {
    let base = memory::live_bytes();
    let a = Tensor::zeros([10, 10]); // 100 × 4 bytes
    assert_eq!(memory::live_bytes() - base, 400);
    let b = Tensor::ones([3, 7, 2]); // 42 × 4 bytes
    assert_eq!(memory::live_bytes() - base, 400 + 168);
    drop(a);
    assert_eq!(memory::live_bytes() - base, 168);
    drop(b);
    assert_eq!(memory::live_bytes(), base);
}

#[test]
fn peak_remembers_the_largest_moment_since_reset() {
    let base = memory::live_bytes();
    memory::reset_peak();
    {
        let _big = Tensor::zeros([1000]); // 4000 bytes
    }
    let _small = Tensor::zeros([10]); // 40 bytes
    assert_eq!(memory::peak_bytes(), base + 4000);
    memory::reset_peak();
    assert_eq!(memory::peak_bytes(), base + 40);
}

#[test]
fn reshape_and_detach_share_the_buffer_and_cost_nothing() {
    let a = Tensor::zeros([4, 8]);
    let before = memory::live_bytes();
    let r = a.reshape([8, 4]);
    let d = a.detach();
    assert_eq!(memory::live_bytes(), before);
    drop(a);
    drop(r);
    assert_eq!(
        memory::live_bytes(),
        before,
        "the buffer lives while one handle does"
    );
    drop(d);
    assert_eq!(memory::live_bytes(), before - 128);
}

#[test]
fn an_op_result_costs_its_own_size() {
    let a = Tensor::ones([2, 3]);
    let b = Tensor::ones([3, 5]);
    let before = memory::live_bytes();
    let c = a.matmul(&b); // [2, 5]
    assert_eq!(memory::live_bytes() - before, 40);
    drop(c);
    assert_eq!(memory::live_bytes(), before);
}

#[test]
fn dropping_the_loss_frees_the_graph_it_kept_alive() {
    let w = Tensor::ones([16]).requires_grad_();
    let before = memory::live_bytes();
    let loss = (&w * 2.0).exp().sum(); // keeps the scalar 2, w·2, exp(w·2), the sum
    assert!(memory::live_bytes() > before);
    drop(loss);
    assert_eq!(memory::live_bytes(), before);
}

#[test]
fn a_buffer_freed_on_another_thread_is_credited_to_its_own_thread() {
    let before = memory::live_bytes();
    let t = Tensor::zeros([256]);
    std::thread::spawn(move || drop(t)).join().unwrap();
    assert_eq!(memory::live_bytes(), before);
}

#[test]
fn a_reservation_counts_what_it_holds_as_it_grows_shrinks_and_drops() {
    use engine::memory::Reservation;
    let before = memory::live_bytes();
    memory::reset_peak();
    let mut held = Reservation::new();
    assert_eq!((held.values(), memory::live_bytes()), (0, before));
    held.resize("test", 100, String::new);
    assert_eq!(held.values(), 100);
    assert_eq!(memory::live_bytes() - before, 400);
    held.resize("test", 250, String::new);
    assert_eq!(memory::live_bytes() - before, 1000);
    assert_eq!(memory::peak_bytes() - before, 1000);
    held.resize("test", 30, String::new);
    assert_eq!(held.values(), 30);
    assert_eq!(memory::live_bytes() - before, 120);
    assert_eq!(memory::peak_bytes() - before, 1000, "the peak remembers");
    assert_eq!(format!("{held:?}"), "Reservation(120 bytes)");
    drop(held);
    assert_eq!(memory::live_bytes(), before);
}

#[test]
fn a_reservation_grown_on_another_thread_moves_its_bytes_there() {
    use engine::memory::Reservation;
    let before = memory::live_bytes();
    let mut held = Reservation::new();
    held.resize("test", 100, String::new);
    let held = std::thread::spawn(move || {
        let there = memory::live_bytes();
        held.resize("test", 150, String::new);
        // All 150 values now belong to this thread, and are credited back to it.
        assert_eq!(memory::live_bytes() - there, 600);
        held
    })
    .join()
    .unwrap();
    assert_eq!(
        memory::live_bytes(),
        before,
        "this thread's 400 bytes went with it"
    );
    drop(held);
    assert_eq!(memory::live_bytes(), before);
}

#[test]
fn a_reservation_refused_by_the_budget_is_unchanged() {
    use engine::memory::Reservation;
    let mut held = Reservation::new();
    held.resize("test", 10, String::new);
    let live = memory::live_bytes();
    memory::set_budget(Some(live + 40));
    held.resize("test", 20, String::new); // exactly 40 bytes more: fits
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        held.resize("my_cache", 21, || "one value too many".into())
    }));
    memory::set_budget(None);
    let payload = refused.expect_err("over the budget");
    let message = payload.downcast_ref::<String>().unwrap();
    assert!(
        message.starts_with(
            "my_cache: one value too many needs 4 bytes (1 values of 4 bytes)"
        ),
        "{message}"
    );
    assert_eq!(held.values(), 20);
    assert_eq!(memory::live_bytes(), live + 40);
    // Under a budget already exceeded, keeping or shrinking a reservation is always allowed.
    memory::set_budget(Some(0));
    held.resize("test", 20, String::new);
    held.resize("test", 5, String::new);
    memory::set_budget(None);
    assert_eq!(
        memory::live_bytes() + 20,
        live,
        "5 values where 10 were counted"
    );
}
