//! [`clip_grad_norm`]: rescaling gradients whose combined norm is too large.

use super::optimizer::check_non_negative;
use crate::grad_mode::no_grad;
use crate::tensor::Tensor;

/// Scales the gradients of `params` down so that their combined L2 norm is at most
/// `max_norm`, like `torch.nn.utils.clip_grad_norm_`, and returns the norm measured before
/// clipping.
///
/// The norm is `√(Σ g²)` over every element of every gradient. Every gradient is then
/// multiplied by `min(1, max_norm / (norm + 1e-6))` (PyTorch's formula; the `1e-6` avoids
/// dividing by zero), so gradients change only when the norm exceeds `max_norm`.
/// Parameters without a gradient are skipped; with no gradient at all the norm is `0.0`.
///
/// ```
/// use engine::optim::clip_grad_norm;
/// use engine::Tensor;
///
/// let w = Tensor::zeros(&[2]).requires_grad_();
/// (&w * &Tensor::from_vec(vec![3.0, 4.0], &[2])).sum().backward();
/// let norm = clip_grad_norm(&[w.clone()], 1.0);
/// assert_eq!(norm, 5.0);
/// let g = w.grad().unwrap().to_vec();
/// assert!((g[0] - 0.6).abs() < 1e-6 && (g[1] - 0.8).abs() < 1e-6);
/// ```
#[track_caller]
pub fn clip_grad_norm(params: &[Tensor], max_norm: f32) -> f32 {
    check_non_negative("clip_grad_norm", "max_norm", max_norm);
    let grads: Vec<(&Tensor, Tensor)> = params
        .iter()
        .filter_map(|p| p.grad().ok().map(|g| (p, g)))
        .collect();
    // Summed in f64 so the many small squares of a large model do not lose precision.
    // Folded from +0.0: `sum()` of no terms is -0.0 for floats, and √(-0.0) is -0.0.
    // A gradient on a GPU is summed there (in f32) and only its total read back, rather
    // than all its values.
    let squares: f64 = grads
        .iter()
        .flat_map(|(_, g)| match g.device() {
            crate::Device::Cpu => g
                .to_vec()
                .iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .collect(),
            _ => vec![f64::from(no_grad(|| g.square().sum().item()))],
        })
        .fold(0.0, |total, square| total + square);
    let norm = squares.sqrt() as f32;
    let coef = max_norm / (norm + 1e-6);
    if coef < 1.0 {
        for (p, g) in grads {
            p.set_grad(Some(no_grad(|| g * coef)));
        }
    }
    norm
}
