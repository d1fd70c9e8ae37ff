//! GPU memory: buffers freed by tensors go to the GPU's pool and come back for the next
//! tensor of their size, and a tensor larger than one kernel can address is refused with a
//! message. Its own test binary, so that no other test allocates on the GPU meanwhile (the
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

    let too_many = (gpu.max_binding_bytes() / 4 + 1) as usize;
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
