//! `to`: a tensor's values copied to another device, as an op that gradients flow through.

use crate::device::Device;
use crate::op::Op;
use crate::tensor::Tensor;

impl Tensor {
    /// The same values on `device`, like PyTorch's `x.to(device)`: `self` itself when it
    /// is there already, else a copy (an upload to a GPU, or a read-back from one).
    ///
    /// It is an op like any other: the gradient of the copy flows back to `self`, on
    /// `self`'s device. To make a parameter that lives on a GPU, move the values first and
    /// mark the copy: `Tensor::randn([3, 2]).to(&gpu).requires_grad_()`.
    ///
    /// ```
    /// use engine::{Device, Tensor};
    /// let x = Tensor::from_vec(vec![1.0, 2.0], [2]);
    /// let there = x.to(&Device::best());
    /// assert_eq!(there.to(&Device::Cpu).to_vec(), vec![1.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn to(&self, device: &Device) -> Tensor {
        if self.device() == *device {
            return self.clone();
        }
        let op = Op::To(self.clone());
        match device {
            Device::Cpu => Tensor::from_op(self.to_vec(), self.shape().to_vec(), op),
            #[cfg(feature = "wgpu")]
            Device::Gpu(gpu) => {
                let values = self.buffer();
                let buffer =
                    crate::gpu::GpuBuffer::upload(gpu, "to", values.as_slice());
                Tensor::from_gpu("to", buffer, self.shape().to_vec(), Some(op))
            }
            #[cfg(not(feature = "wgpu"))]
            Device::Gpu(gpu) => match *gpu {},
        }
    }
}
