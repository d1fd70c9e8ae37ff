//! The [`Module`] trait: what every layer can say about its parameters and its mode.

use super::state_dict::{LoadError, StateDict};
use crate::grad_mode::no_grad;
use crate::tensor::Tensor;

/// A layer or a model: something that owns named parameters and may behave differently in
/// training and in evaluation (dropout does).
///
/// Only [`list_parameters`](Module::list_parameters) must be written; a layer whose
/// behaviour depends on the mode also overrides [`set_training`](Module::set_training), and
/// a container forwards `set_training` to its children. `forward` is not part of the trait,
/// because layers take different inputs (a GRU cell takes an input and a hidden state).
///
/// **Modes.** Every module starts in training mode, as in PyTorch: dropout is on. Call
/// [`eval`](Module::eval) before measuring or decoding, and [`train`](Module::train) to go
/// back.
///
/// **Tied parameters.** One tensor may serve two layers (an embedding table reused as the
/// output projection). [`named_parameters`](Module::named_parameters),
/// [`parameters`](Module::parameters) and [`num_parameters`](Module::num_parameters) list
/// it once, under the first name it has, as PyTorch does; an optimizer built from
/// `parameters()` therefore steps it once.
///
/// ```
/// use engine::nn::{Dropout, DropoutConfig, Linear, LinearConfig, Module, prefixed};
/// use engine::Tensor;
///
/// /// A two-part model: a container lists its children's parameters under their names.
/// struct Head {
///     proj: Linear,
///     drop: Dropout,
/// }
///
/// impl Module for Head {
///     fn list_parameters(&self) -> Vec<(String, Tensor)> {
///         prefixed("proj", &self.proj)
///     }
///     fn set_training(&mut self, training: bool) {
///         self.drop.set_training(training);
///     }
/// }
///
/// let mut head = Head {
///     proj: Linear::new(LinearConfig { in_features: 3, out_features: 2, ..Default::default() }),
///     drop: Dropout::new(DropoutConfig { p: 0.1 }),
/// };
/// let names: Vec<String> = head.named_parameters().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["proj.weight", "proj.bias"]);
/// assert!(head.drop.is_training()); // a new module trains
/// head.eval();
/// assert!(!head.drop.is_training());
/// ```
pub trait Module {
    /// Every parameter under every name it has, in a fixed order: the one method a module
    /// must write. Names follow PyTorch's: `"weight"`, `"bias"`, and `"child.weight"` inside
    /// a container (see [`prefixed`]). A tied tensor appears once per name here; the other
    /// methods remove the repeats.
    fn list_parameters(&self) -> Vec<(String, Tensor)>;

    /// Every distinct parameter with its name, like PyTorch's `named_parameters()`: a tensor
    /// reachable under several names (tied weights) is listed once, under its first name.
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        let mut unique: Vec<(String, Tensor)> = Vec::new();
        for (name, t) in self.list_parameters() {
            if !unique.iter().any(|(_, seen)| seen.same(&t)) {
                unique.push((name, t));
            }
        }
        unique
    }

    /// Every distinct parameter, in the order of
    /// [`named_parameters`](Module::named_parameters). The handles share values with the
    /// layer, so an optimizer holding them updates the layer.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters()
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }

    /// The total number of elements of the distinct parameters (what PyTorch users sum with
    /// `p.numel()` over `model.parameters()`).
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

    /// Moves every parameter to `device`, in place, like PyTorch's `model.to(device)`:
    /// each keeps its identity (an optimizer made before the move still updates it), and
    /// loses any gradient it had. Inputs must then be moved too: an op refuses tensors on
    /// two devices.
    ///
    /// ```
    /// use engine::nn::{Linear, LinearConfig, Module};
    /// use engine::{Device, Tensor};
    ///
    /// let layer = Linear::new(LinearConfig { in_features: 3, out_features: 2, ..Default::default() });
    /// let device = Device::best();
    /// layer.to_device(&device);
    /// let y = layer.forward(&Tensor::ones([4, 3]).to(&device));
    /// assert_eq!(y.device(), device);
    /// ```
    fn to_device(&self, device: &crate::Device) {
        for p in self.parameters() {
            p.move_to(device);
        }
    }

    /// Forgets the gradient of every parameter, like PyTorch's `model.zero_grad()`.
    fn zero_grad(&self) {
        for p in self.parameters() {
            p.zero_grad();
        }
    }

    /// A copy of every parameter's values under every name it has (a tied tensor appears
    /// under each of its names, as in PyTorch's `state_dict()`). Later training does not
    /// change the copy.
    fn state_dict(&self) -> StateDict {
        self.list_parameters()
            .into_iter()
            .map(|(name, t)| (name, Tensor::from_vec(t.to_vec(), t.shape())))
            .collect()
    }

    /// Copies values into the parameters by name, like PyTorch's
    /// `load_state_dict(state, strict=True)`: every parameter must be given, no other name
    /// may appear, and each shape must match. Nothing is changed unless everything fits.
    ///
    /// This is how any module is built from given weights: make it with `new(config)`,
    /// then load.
    ///
    /// ```
    /// use engine::nn::{Linear, LinearConfig, Module, StateDict};
    /// use engine::Tensor;
    ///
    /// let layer = Linear::new(LinearConfig { in_features: 2, out_features: 1, ..Default::default() });
    /// let state = StateDict::from([
    ///     ("weight", Tensor::from_vec(vec![1.0, 2.0], [1, 2])),
    ///     ("bias", Tensor::from_vec(vec![0.5], [1])),
    /// ]);
    /// layer.load_state_dict(&state).unwrap();
    /// assert_eq!(layer.forward(&Tensor::ones([1, 2])).item(), 3.5);
    ///
    /// let wrong = StateDict::from([("weight", Tensor::zeros([2, 2]))]);
    /// let err = layer.load_state_dict(&wrong).unwrap_err().to_string();
    /// assert!(err.contains("weight: expected shape [1, 2], found [2, 2]"), "{err}");
    /// assert!(err.contains("missing: bias"), "{err}");
    /// ```
    fn load_state_dict(&self, state: &StateDict) -> Result<(), LoadError> {
        load_named(self.list_parameters(), state)
    }
}

/// The listed parameters of `child`, each name prefixed by `prefix` and a dot, the way a
/// container names its children's parameters (`"rnn.weight_ih_l0"`, `"proj.weight"`).
///
/// ```
/// use engine::nn::{LayerNorm, LayerNormConfig, prefixed};
/// let norm = LayerNorm::new(LayerNormConfig { dim: 4, ..Default::default() });
/// let names: Vec<String> = prefixed("norm", &norm).into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["norm.weight", "norm.bias"]);
/// ```
pub fn prefixed(
    prefix: &str,
    child: &(impl Module + ?Sized),
) -> Vec<(String, Tensor)> {
    child
        .list_parameters()
        .into_iter()
        .map(|(name, t)| (format!("{prefix}.{name}"), t))
        .collect()
}

/// Makes a tensor a parameter: a leaf that requires a gradient, like wrapping it in
/// PyTorch's `nn.Parameter`.
///
/// A tensor that already is such a leaf is returned as the same handle, so the caller
/// keeps seeing its gradient and its updates (this is how two layers tie one weight); any
/// other tensor is detached from its graph first (its values are shared, not copied).
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

/// What [`Module::load_state_dict`] does by default, for the given named parameters: a
/// module that overrides it (to accept other names) renames and calls this.
pub(crate) fn load_named(
    params: Vec<(String, Tensor)>,
    state: &StateDict,
) -> Result<(), LoadError> {
    let mut error = LoadError::default();
    for (name, p) in &params {
        match state.get(name) {
            None => error.missing.push(name.clone()),
            Some(t) if t.shape() != p.shape() => error.mismatched.push((
                name.clone(),
                p.shape().to_vec(),
                t.shape().to_vec(),
            )),
            Some(_) => {}
        }
    }
    for name in state.names() {
        if !params.iter().any(|(n, _)| n == name) {
            error.unexpected.push(name.to_string());
        }
    }
    if !error.is_empty() {
        return Err(error);
    }
    no_grad(|| {
        for (name, p) in &params {
            p.assign(state.get(name).expect("checked above"));
        }
    });
    Ok(())
}
