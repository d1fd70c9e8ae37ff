//! `add`, `sub`, `mul`, `div` with NumPy broadcasting, the operators that call them
//! (`&a + &b`, `&x * 2.0`, `1.0 - &x`), and comparisons that build masks.

use std::ops;

use super::elementwise_fn::BinaryFn;
use crate::check;
use crate::cpu::elementwise;
use crate::memory;
use crate::op::Op;
use crate::tensor::Tensor;

impl Tensor {
    /// Applies a binary function with broadcasting; `op` is what autograd records (or
    /// `None` for comparisons, whose result is a constant mask).
    #[track_caller]
    pub(crate) fn binary(&self, rhs: &Tensor, f: BinaryFn, op: Option<Op>) -> Tensor {
        let out = check::broadcast(f.name(), self.shape(), rhs.shape());
        let _device = check::device(f.name(), &[self, rhs]);
        #[cfg(feature = "wgpu")]
        if _device.is_gpu() {
            let (a, b) = (self.to(&_device).on_gpu(), rhs.to(&_device).on_gpu());
            let (a, b) = (a.expect("on the GPU"), b.expect("on the GPU"));
            let data = crate::gpu::kernels::binary(
                f,
                (&a, self.shape()),
                (&b, rhs.shape()),
                &out,
            );
            return Tensor::from_gpu(f.name(), data, out, op);
        }
        memory::ensure_can_allocate(f.name(), &out);
        let (a, b) = (self.buffer(), rhs.buffer());
        let (a, b) = ((a.as_slice(), self.shape()), (b.as_slice(), rhs.shape()));
        // One loop per function, chosen once: with the function a constant, each loop is
        // plain arithmetic that the compiler vectorises, where a `match` per element is not.
        macro_rules! zip {
            ($f:expr) => {
                elementwise::zip_broadcast(a.0, a.1, b.0, b.1, &out, $f)
            };
        }
        let data = match f {
            BinaryFn::Add => zip!(|x, y| BinaryFn::Add.apply(x, y)),
            BinaryFn::Sub => zip!(|x, y| BinaryFn::Sub.apply(x, y)),
            BinaryFn::Mul => zip!(|x, y| BinaryFn::Mul.apply(x, y)),
            BinaryFn::Div => zip!(|x, y| BinaryFn::Div.apply(x, y)),
            other => zip!(|x, y| other.apply(x, y)),
        };
        match op {
            Some(op) => Tensor::from_op(data, out, op),
            None => Tensor::from_parts(f.name(), data, out),
        }
    }

    /// Elementwise `self + rhs`, broadcasting as NumPy does. Same as `&self + &rhs`.
    #[track_caller]
    pub fn add(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Add, Some(Op::Add(self.clone(), rhs.clone())))
    }

    /// Elementwise `self - rhs`, with broadcasting.
    #[track_caller]
    pub fn sub(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Sub, Some(Op::Sub(self.clone(), rhs.clone())))
    }

    /// Elementwise `self * rhs`, with broadcasting.
    #[track_caller]
    pub fn mul(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Mul, Some(Op::Mul(self.clone(), rhs.clone())))
    }

    /// Elementwise `self / rhs`, with broadcasting.
    #[track_caller]
    pub fn div(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Div, Some(Op::Div(self.clone(), rhs.clone())))
    }

    /// The elementwise larger of `self` and `rhs`, with broadcasting, like
    /// `torch.maximum`. The gradient goes to the larger operand, half to each on a tie (as
    /// in PyTorch). A NaN on either side gives NaN.
    ///
    /// ```
    /// use engine::Tensor;
    /// let x = Tensor::from_vec(vec![-2.0, 0.5, 3.0], [3]);
    /// let floor = Tensor::scalar(0.0);
    /// assert_eq!(x.maximum(&floor).to_vec(), vec![0.0, 0.5, 3.0]); // relu, written out
    /// ```
    #[track_caller]
    pub fn maximum(&self, rhs: &Tensor) -> Tensor {
        let op = Op::Maximum(self.clone(), rhs.clone());
        self.binary(rhs, BinaryFn::Maximum, Some(op))
    }

    /// The elementwise smaller of `self` and `rhs`, with broadcasting, like
    /// `torch.minimum`; gradients as in [`maximum`](Tensor::maximum).
    #[track_caller]
    pub fn minimum(&self, rhs: &Tensor) -> Tensor {
        let op = Op::Minimum(self.clone(), rhs.clone());
        self.binary(rhs, BinaryFn::Minimum, Some(op))
    }

    /// Mask of `self > rhs` (1.0 where true, 0.0 elsewhere), with broadcasting. Masks are
    /// constants: no gradient flows through a comparison.
    #[track_caller]
    pub fn gt(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Gt, None)
    }

    /// Mask of `self >= rhs`; see [`Tensor::gt`].
    #[track_caller]
    pub fn ge(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Ge, None)
    }

    /// Mask of `self < rhs`; see [`Tensor::gt`].
    #[track_caller]
    pub fn lt(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Lt, None)
    }

    /// Mask of `self <= rhs`; see [`Tensor::gt`].
    #[track_caller]
    pub fn le(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Le, None)
    }

    /// Mask of `self == rhs` (exact equality); see [`Tensor::gt`].
    #[track_caller]
    pub fn eq_mask(&self, rhs: &Tensor) -> Tensor {
        self.binary(rhs, BinaryFn::Eq, None)
    }
}

/// Implements an operator for every combination of owned and borrowed tensors and `f32`,
/// so formulas read as formulas: `&a + &b`, `a * 2.0`, `1.0 - &x`.
macro_rules! impl_operator {
    ($trait:ident, $method:ident) => {
        impl ops::$trait<&Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                Tensor::$method(self, rhs)
            }
        }
        impl ops::$trait<Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                Tensor::$method(self, &rhs)
            }
        }
        impl ops::$trait<&Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                Tensor::$method(&self, rhs)
            }
        }
        impl ops::$trait<Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                Tensor::$method(&self, &rhs)
            }
        }
        impl ops::$trait<f32> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: f32) -> Tensor {
                Tensor::$method(self, &Tensor::scalar(rhs))
            }
        }
        impl ops::$trait<f32> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: f32) -> Tensor {
                Tensor::$method(&self, &Tensor::scalar(rhs))
            }
        }
        impl ops::$trait<&Tensor> for f32 {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                Tensor::$method(&Tensor::scalar(self), rhs)
            }
        }
        impl ops::$trait<Tensor> for f32 {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                Tensor::$method(&Tensor::scalar(self), &rhs)
            }
        }
    };
}

impl_operator!(Add, add);
impl_operator!(Sub, sub);
impl_operator!(Mul, mul);
impl_operator!(Div, div);

impl ops::Neg for &Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        Tensor::neg(self)
    }
}

impl ops::Neg for Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        Tensor::neg(&self)
    }
}
