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
