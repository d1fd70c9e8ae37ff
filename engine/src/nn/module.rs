//! The [`Module`] trait: what every layer can say about its parameters and its mode.

use crate::tensor::Tensor;

/// A layer or a model: something that owns named parameters and may behave differently in
/// training and in evaluation (dropout does).
///
/// Only [`named_parameters`](Module::named_parameters) must be written; a layer whose
/// behaviour depends on the mode also overrides [`set_training`](Module::set_training), and
/// a container forwards `set_training` to its children. `forward` is not part of the trait,
/// because layers take different inputs (a GRU cell takes an input and a hidden state).
///
/// ```
/// use engine::nn::{Dropout, Linear, Module, prefixed};
/// use engine::Tensor;
///
/// /// A two-part model: a container lists its children's parameters under their names.
/// struct Head {
///     proj: Linear,
///     drop: Dropout,
/// }
///
/// impl Module for Head {
///     fn named_parameters(&self) -> Vec<(String, Tensor)> {
///         prefixed("proj", &self.proj)
///     }
///     fn set_training(&mut self, training: bool) {
///         self.drop.set_training(training);
///     }
/// }
///
/// let mut head = Head { proj: Linear::new(3, 2, true), drop: Dropout::new(0.1) };
/// let names: Vec<String> = head.named_parameters().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["proj.weight", "proj.bias"]);
/// head.eval();
/// assert!(!head.drop.is_training());
/// ```
pub trait Module {
    /// Every parameter with its name, in a fixed order. Names follow PyTorch's
    /// `named_parameters()`: `"weight"`, `"bias"`, and `"child.weight"` inside a container.
    fn named_parameters(&self) -> Vec<(String, Tensor)>;

    /// Every parameter, in the order of [`named_parameters`](Module::named_parameters). The
    /// handles share values with the layer, so an optimizer holding them updates the layer.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters()
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }

    /// The total number of parameter elements (what PyTorch users sum with `p.numel()`).
    fn num_parameters(&self) -> usize {
        self.parameters().iter().map(Tensor::numel).sum()
    }

    /// Switches training mode on or off. The default does nothing, which is right for a
    /// layer that behaves the same in both modes; containers forward it to their children.
    fn set_training(&mut self, training: bool) {
        let _ = training;
    }

    /// Training mode, like PyTorch's `model.train()`.
    fn train(&mut self) {
        self.set_training(true);
    }

    /// Evaluation mode, like PyTorch's `model.eval()`.
    fn eval(&mut self) {
        self.set_training(false);
    }

    /// Forgets the gradient of every parameter, like PyTorch's `model.zero_grad()`.
    fn zero_grad(&self) {
        for p in self.parameters() {
            p.zero_grad();
        }
    }
}

/// The named parameters of `child`, each name prefixed by `prefix` and a dot, the way a
/// container names its children's parameters (`"cell.weight_ih"`).
///
/// ```
/// use engine::nn::{LayerNorm, prefixed};
/// let names: Vec<String> = prefixed("norm", &LayerNorm::new(4)).into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["norm.weight", "norm.bias"]);
/// ```
pub fn prefixed(prefix: &str, child: &(impl Module + ?Sized)) -> Vec<(String, Tensor)> {
    child
        .named_parameters()
        .into_iter()
        .map(|(name, t)| (format!("{prefix}.{name}"), t))
        .collect()
}

/// Makes a tensor a parameter: a leaf that requires a gradient, like wrapping it in
/// PyTorch's `nn.Parameter`.
///
/// A tensor that already is such a leaf is returned as the same handle, so the caller
/// keeps seeing its gradient and its updates; any other tensor is detached from its graph
/// first (its values are shared, not copied).
///
/// ```
/// use engine::nn::parameter;
/// use engine::Tensor;
/// let w = parameter(&Tensor::ones(&[2]));
/// assert!(w.requires_grad() && w.is_leaf());
/// assert!(parameter(&w).same(&w));
/// ```
pub fn parameter(t: &Tensor) -> Tensor {
    if t.is_leaf() && t.requires_grad() {
        t.clone()
    } else {
        t.detach().requires_grad_()
    }
}
