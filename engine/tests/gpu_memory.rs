//! GPU memory: buffers freed by tensors go to the GPU's pool and come back for the next
//! tensor of their size, the pool keeps at most 1 GiB (releasing its largest buffers
//! first), and a tensor larger than one kernel can address is refused with a message. Its own test binary, so that no other test allocates on the GPU meanwhile (the
//! counts are the GPU's, for the whole process). Compiled only with the `wgpu` feature.

#![cfg(feature = "wgpu")]

#[path = "devices/harness.rs"]
mod harness;

use engine::{Device, Tensor};

#[test]
fn freed_buffers_are_pooled_and_reused_and_oversized_tensors_are_refused() {
    let Some(Device::Gpu(gpu)) = harness::test_gpu() else {
        return;
    };
    let device = Device::Gpu(gpu.clone());
    the_pool_keeps_at_most_1_gib_releasing_the_largest_buffers_first(&device);
    let (live, pooled) = (gpu.live_bytes(), gpu.pooled_bytes());
    let x = Tensor::zeros([1000, 1000]).to(&device); // 4,000,000 bytes
    assert_eq!(gpu.live_bytes(), live + 4_000_000);
    drop(x);
    assert_eq!(gpu.live_bytes(), live);
    assert_eq!(gpu.pooled_bytes(), pooled + 4_000_000);
    // The next tensor of that size takes the pooled buffer.
    let y = Tensor::ones([2000, 500]).to(&device);
    assert_eq!(gpu.pooled_bytes(), pooled);
    assert_eq!(y.sum().item(), 1_000_000.0); // and holds its own values, not the old ones
    drop(y);

    // The largest tensor one kernel can address is allowed (checked where that is small
    // enough to allocate in a test: 128 MiB on lavapipe), one value more is refused.
    let most = (gpu.max_binding_bytes() / 4) as usize;
    if gpu.max_binding_bytes() <= 256 << 20 {
        let largest = Tensor::zeros([most]).to(&device);
        assert_eq!(largest.numel(), most);
    }
    let too_many = most + 1;
    let refuse =
        std::panic::AssertUnwindSafe(|| Tensor::zeros([too_many]).to(&device));
    let message = std::panic::catch_unwind(refuse)
        .err()
        .and_then(|e| e.downcast_ref::<String>().cloned())
        .expect("an oversized tensor is refused with a message");
    assert!(
        message.starts_with(&format!("to: the result holds {too_many} values")),
        "{message}"
    );
    assert!(
        message.contains("more than one kernel can address on this GPU"),
        "{message}"
    );
}

/// The pool's limit, 1 GiB of freed buffers, held exactly: with nothing pooled yet, eight
/// freed buffers of 128 MiB fill it to the byte and stay; a ninth makes it overflow, and a
/// buffer of the largest size is released.
fn the_pool_keeps_at_most_1_gib_releasing_the_largest_buffers_first(device: &Device) {
    let Device::Gpu(gpu) = device else {
        unreachable!("a GPU device")
    };
    const LIMIT: u64 = 1 << 30;
    const CHUNK: u64 = 128 << 20;
    assert!(
        gpu.max_binding_bytes() >= CHUNK,
        "a GPU addresses 128 MiB at once"
    );
    assert_eq!(gpu.pooled_bytes(), 0, "this runs first, on an empty pool");
    let live = gpu.live_bytes();
    let buffers: Vec<Tensor> = (0..9)
        .map(|_| Tensor::zeros([(CHUNK / 4) as usize]).to(device))
        .collect();
    assert_eq!(gpu.live_bytes(), live + 9 * CHUNK);
    let mut buffers = buffers.into_iter();
    for _ in 0..8 {
        drop(buffers.next());
    }
    assert_eq!(
        gpu.pooled_bytes(),
        LIMIT,
        "exactly the limit: nothing released"
    );
    drop(buffers.next());
    assert_eq!(gpu.pooled_bytes(), LIMIT, "one over: one buffer released");
    assert_eq!(gpu.live_bytes(), live);
    // A small buffer beside them: the pool overflows again and releases a large one, so
    // the small one stays.
    drop(Tensor::zeros([1000]).to(device));
    assert_eq!(gpu.pooled_bytes(), LIMIT - CHUNK + 4000);
    // Empty the pool of the large buffers for the rest of the test: they are reused.
    let again: Vec<Tensor> = (0..7)
        .map(|_| Tensor::zeros([(CHUNK / 4) as usize]).to(device))
        .collect();
    assert_eq!(gpu.pooled_bytes(), 4000);
    drop(again);
}
