//! What the fill value does beyond the forward pass: the gradients of a training step
//! when a row is fully masked, and which fill values a 16-bit float can hold at all.

use engine::Tensor;

/// What one backward pass of [`a_training_step`] gives.
#[derive(Clone, Debug)]
pub struct StepGradients {
    /// The loss.
    pub loss: f32,
    /// `dL/dvalues`, `[2, 3, 1]` flattened: one gradient per value vector (per key).
    pub values: Vec<f32>,
    /// `dL/dw` for the parameter `w` that every example shares.
    pub shared: f32,
}

// ANCHOR: a_training_step
/// One forward and backward pass through attention over 3 keys for a batch of 2
/// examples, one query each; example 0 may see 2 keys, example 1 none (an empty
/// sequence). `attend` turns the scores `[2, 1, 3]` into weights under that mask;
/// `loss_weights` says how much each example's output counts in the loss (0 to leave
/// it out, as a masked loss does).
pub fn a_training_step(
    attend: impl Fn(&Tensor) -> Tensor,
    loss_weights: [f32; 2],
) -> StepGradients {
    let scores = Tensor::from_vec(vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0], [2, 1, 3]);
    // The values come from a parameter shared by the whole batch, as a projection's
    // weights are: values = x · w.
    let w = Tensor::from_vec(vec![0.5], [1]).requires_grad_();
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3, 1]);
    let values = &x * &w; //                                          [2, 3, 1]
    values.retain_grad();
    let weights = attend(&scores); //                                 [2, 1, 3]
    let outputs = weights.bmm(&values); //                            [2, 1, 1]
    let counts = Tensor::from_vec(loss_weights.to_vec(), [2, 1, 1]);
    let loss = (&outputs * &counts).sum();
    loss.backward();
    StepGradients {
        loss: loss.item(),
        values: values.grad().expect("retained").to_vec(),
        shared: w.grad().expect("a leaf").item(),
    }
}
// ANCHOR_END: a_training_step

// ANCHOR: float_format
/// A binary floating-point format: 1 sign bit, `exponent_bits`, `mantissa_bits` (the
/// stored fraction bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FloatFormat {
    /// The format's name.
    pub name: &'static str,
    /// Bits of the exponent.
    pub exponent_bits: i32,
    /// Bits of the fraction (the leading 1 is implicit).
    pub mantissa_bits: i32,
}

/// IEEE half precision, `f16`: 5 exponent bits, 10 fraction bits.
pub const F16: FloatFormat = FloatFormat {
    name: "f16",
    exponent_bits: 5,
    mantissa_bits: 10,
};

/// bfloat16: `f32`'s 8 exponent bits with only 7 fraction bits.
pub const BF16: FloatFormat = FloatFormat {
    name: "bf16",
    exponent_bits: 8,
    mantissa_bits: 7,
};

/// IEEE single precision, `f32`, the engine's only type: 8 exponent bits, 23 fraction
/// bits.
pub const F32: FloatFormat = FloatFormat {
    name: "f32",
    exponent_bits: 8,
    mantissa_bits: 23,
};

impl FloatFormat {
    /// The largest exponent of a finite number: the all-ones exponent is kept for
    /// infinities and NaN, so it is `2^(e−1) − 1` (15 for `f16`).
    pub fn max_exponent(self) -> i32 {
        (1 << (self.exponent_bits - 1)) - 1
    }

    /// The largest finite value, `(2 − 2^−m) · 2^max_exponent`: every fraction bit
    /// set (65504 for `f16`). Computed in `f64`, which holds every one of these
    /// exactly.
    pub fn largest_finite(self) -> f64 {
        (2.0 - 2f64.powi(-self.mantissa_bits)) * 2f64.powi(self.max_exponent())
    }

    /// Whether `x` becomes ±infinity when rounded to this format (round to nearest,
    /// ties to even): from half a step above the largest finite value on, `(2 −
    /// 2^−(m+1)) · 2^max_exponent` (65520 for `f16`), the nearest candidate is
    /// infinity.
    pub fn overflows(self, x: f64) -> bool {
        let threshold = (2.0 - 2f64.powi(-(self.mantissa_bits + 1)))
            * 2f64.powi(self.max_exponent());
        x.abs() >= threshold
    }
}
// ANCHOR_END: float_format
