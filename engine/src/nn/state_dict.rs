//! [`StateDict`]: parameter values by name, and [`LoadError`]: why they did not load.

use std::fmt;

use crate::tensor::Tensor;

/// Parameter values by name, in a fixed order: what [`Module::state_dict`] returns and
/// [`Module::load_state_dict`] takes (and what a checkpoint stores). Names follow PyTorch's
/// `state_dict()` keys, so weights move between the two by name. Loading a state copies
/// its values into the module, which never shares or changes the state's tensors.
///
/// Editing a checkpoint's state before loading it: [`remove`](StateDict::remove),
/// [`rename`](StateDict::rename), and [`with_prefix`](StateDict::with_prefix) for one part
/// of a model.
///
/// [`Module::state_dict`]: super::Module::state_dict
/// [`Module::load_state_dict`]: super::Module::load_state_dict
///
/// ```
/// use engine::nn::StateDict;
/// use engine::Tensor;
///
/// let mut state = StateDict::from([("W_q.weight", Tensor::zeros([4, 4]))]);
/// state.insert("W_k.weight", Tensor::ones([4, 4]));
/// assert_eq!(state.names().collect::<Vec<_>>(), ["W_q.weight", "W_k.weight"]);
/// assert_eq!(state.get("W_k.weight").unwrap().shape(), &[4, 4]);
/// ```
#[derive(Clone, Debug, Default)]
pub struct StateDict {
    entries: Vec<(String, Tensor)>,
}

impl StateDict {
    /// An empty state.
    pub fn new() -> StateDict {
        StateDict::default()
    }

    /// Adds `tensor` under `name`, replacing an entry of that name if there is one.
    pub fn insert(&mut self, name: impl Into<String>, tensor: Tensor) {
        let name = name.into();
        match self.entries.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = tensor,
            None => self.entries.push((name, tensor)),
        }
    }

    /// The tensor stored under `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, t)| t)
    }

    /// The names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// The entries, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.entries.iter().map(|(n, t)| (n.as_str(), t))
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Takes the entry `name` out and returns its tensor, or `None` when there is no such
    /// entry; the other entries keep their order. Python's `state.pop(name, None)`.
    ///
    /// ```
    /// use engine::nn::StateDict;
    /// use engine::Tensor;
    ///
    /// let mut state = StateDict::from([
    ///     ("proj.weight", Tensor::ones([2, 2])),
    ///     ("proj.bias", Tensor::zeros([2])),
    ///     ("step", Tensor::scalar(7.0)),
    /// ]);
    /// assert_eq!(state.remove("step").unwrap().item(), 7.0);
    /// assert!(state.remove("step").is_none());
    /// assert_eq!(state.names().collect::<Vec<_>>(), ["proj.weight", "proj.bias"]);
    /// ```
    pub fn remove(&mut self, name: &str) -> Option<Tensor> {
        let i = self.entries.iter().position(|(n, _)| n == name)?;
        Some(self.entries.remove(i).1)
    }

    /// Renames the entry `from` to `to`, keeping its place in the order, and returns
    /// `true`; returns `false` and changes nothing when there is no entry `from`. An
    /// entry already named `to` is replaced (dropped), as Python's
    /// `state[to] = state.pop(from)` replaces it. Renaming an entry to its own name keeps
    /// it.
    ///
    /// ```
    /// use engine::nn::StateDict;
    /// use engine::Tensor;
    ///
    /// // A GRU checkpoint written with the old `cell.` names, renamed to nn.GRU's.
    /// let mut state = StateDict::from([
    ///     ("rnn.cell.weight_ih", Tensor::ones([6, 3])),
    ///     ("rnn.cell.bias_ih", Tensor::zeros([6])),
    /// ]);
    /// assert!(state.rename("rnn.cell.weight_ih", "rnn.weight_ih_l0"));
    /// assert!(!state.rename("rnn.cell.weight_hh", "rnn.weight_hh_l0")); // not there
    /// assert_eq!(state.names().collect::<Vec<_>>(), ["rnn.weight_ih_l0", "rnn.cell.bias_ih"]);
    /// ```
    pub fn rename(&mut self, from: &str, to: impl Into<String>) -> bool {
        let to = to.into();
        let Some(i) = self.entries.iter().position(|(n, _)| n == from) else {
            return false;
        };
        if from != to {
            let replaced = self.entries.iter().position(|(n, _)| *n == to);
            self.entries[i].0 = to;
            if let Some(j) = replaced {
                self.entries.remove(j);
            }
        }
        true
    }

    /// The entries whose names start with `prefix`, with `prefix` cut off, in their order:
    /// the state of one part of a model (PyTorch users write
    /// `{k.removeprefix(p): v for k, v in state.items() if k.startswith(p)}`).
    ///
    /// The match is on the plain string, so give the separator too: `"encoder."` selects
    /// `"encoder.rnn.weight_ih_l0"` as `"rnn.weight_ih_l0"` but not `"encoder2.weight"`,
    /// which `"encoder"` would select as `"2.weight"`. A name equal to `prefix` would
    /// become the empty name and is left out. `self` is not changed, and the result holds
    /// the same tensor handles (loading a state copies the values anyway).
    ///
    /// ```
    /// use engine::nn::StateDict;
    /// use engine::Tensor;
    ///
    /// let state = StateDict::from([
    ///     ("model.encoder.embedding.weight", Tensor::zeros([5, 2])),
    ///     ("model.decoder.dense.weight", Tensor::zeros([3, 2])),
    ///     ("model.encoder.rnn.weight_ih_l0", Tensor::zeros([6, 2])),
    ///     ("model.encoder2.weight", Tensor::zeros([1])),
    /// ]);
    /// let encoder = state.with_prefix("model.encoder.");
    /// assert_eq!(encoder.names().collect::<Vec<_>>(), ["embedding.weight", "rnn.weight_ih_l0"]);
    /// assert_eq!(state.len(), 4);
    /// ```
    pub fn with_prefix(&self, prefix: &str) -> StateDict {
        self.entries
            .iter()
            .filter_map(|(n, t)| {
                n.strip_prefix(prefix)
                    .filter(|rest| !rest.is_empty())
                    .map(|rest| (rest.to_string(), t.clone()))
            })
            .collect()
    }
}

impl<K: Into<String>> FromIterator<(K, Tensor)> for StateDict {
    fn from_iter<I: IntoIterator<Item = (K, Tensor)>>(iter: I) -> Self {
        let mut state = StateDict::new();
        for (name, t) in iter {
            state.insert(name, t);
        }
        state
    }
}

impl<K: Into<String>, const N: usize> From<[(K, Tensor); N]> for StateDict {
    fn from(entries: [(K, Tensor); N]) -> Self {
        entries.into_iter().collect()
    }
}

/// Why [`Module::load_state_dict`](super::Module::load_state_dict) refused a state: every
/// problem at once, named.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadError {
    /// Parameters of the module that the state does not hold.
    pub missing: Vec<String>,
    /// Names in the state that the module has no parameter for.
    pub unexpected: Vec<String>,
    /// `(name, the module's shape, the state's shape)` where they differ.
    pub mismatched: Vec<(String, Vec<usize>, Vec<usize>)>,
}

impl LoadError {
    pub(crate) fn is_empty(&self) -> bool {
        self.missing.is_empty()
            && self.unexpected.is_empty()
            && self.mismatched.is_empty()
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "load_state_dict: the state does not fit the module")?;
        for (name, expected, found) in &self.mismatched {
            write!(
                f,
                "\n  {name}: expected shape {expected:?}, found {found:?}"
            )?;
        }
        if !self.missing.is_empty() {
            write!(f, "\n  missing: {}", self.missing.join(", "))?;
        }
        if !self.unexpected.is_empty() {
            write!(f, "\n  unexpected: {}", self.unexpected.join(", "))?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}

/// Builds a module out of a [`StateDict`]'s tensors: each call takes one named tensor and
/// checks its shape, every problem is collected, and [`finish`](StateReader::finish)
/// reports them all (and any name nobody took). This is what the `from_state_dict`
/// constructors use.
///
/// **Loading copies.** As in PyTorch, a module owns its parameters: every tensor taken is
/// a *copy* of the state's values, a fresh leaf that requires a gradient, whatever the
/// state held (plain tensors, as [`Module::state_dict`](super::Module::state_dict) and
/// checkpoints give, or tensors that require gradients). Training the module never
/// changes the state's tensors, and their gradients stay theirs. (To make two layers share
/// one tensor on purpose, weight tying, the layers' `from_weights` constructors take the
/// tensor itself.)
///
/// ```
/// use engine::nn::{LinearConfig, StateDict, StateReader};
/// use engine::Tensor;
///
/// let state = StateDict::from([("proj.weight", Tensor::zeros([2, 3]))]);
/// let mut reader = StateReader::new(&state);
/// let proj = reader.linear("proj", LinearConfig { in_features: 3, out_features: 2, bias: false });
/// reader.finish().unwrap();
/// assert_eq!(proj.weight().shape(), &[2, 3]);
/// assert!(proj.weight().requires_grad()); // a parameter, although the state's tensor is plain
/// assert!(!proj.weight().same(state.get("proj.weight").unwrap())); // a copy
///
/// let mut reader = StateReader::new(&state);
/// reader.linear("proj", LinearConfig { in_features: 4, out_features: 2, bias: true });
/// let err = reader.finish().unwrap_err().to_string();
/// assert!(err.contains("proj.weight: expected shape [2, 4], found [2, 3]"), "{err}");
/// assert!(err.contains("missing: proj.bias"), "{err}");
/// ```
#[derive(Debug)]
pub struct StateReader<'a> {
    state: &'a StateDict,
    taken: Vec<String>,
    error: LoadError,
}

impl<'a> StateReader<'a> {
    /// A reader over `state`.
    pub fn new(state: &'a StateDict) -> Self {
        StateReader {
            state,
            taken: Vec::new(),
            error: LoadError::default(),
        }
    }

    /// True when the state holds an entry `name` (taken or not): how a module that
    /// accepts two layouts of its parameters tells which one it was given.
    pub fn contains(&self, name: &str) -> bool {
        self.state.get(name).is_some()
    }

    /// A copy of the tensor named `name`, which must have `shape`: a fresh leaf that
    /// requires a gradient (see the type's documentation). When it is missing or has
    /// another shape the problem is recorded and zeros of `shape` stand in (never returned
    /// to the caller of `from_state_dict`, since `finish` then fails).
    pub fn tensor(&mut self, name: &str, shape: &[usize]) -> Tensor {
        self.taken.push(name.to_string());
        match self.state.get(name) {
            Some(t) if t.shape() == shape => {
                Tensor::from_vec(t.to_vec(), shape).requires_grad_()
            }
            Some(t) => {
                self.error.mismatched.push((
                    name.to_string(),
                    shape.to_vec(),
                    t.shape().to_vec(),
                ));
                Tensor::zeros(shape)
            }
            None => {
                self.error.missing.push(name.to_string());
                Tensor::zeros(shape)
            }
        }
    }

    /// A [`Linear`](super::Linear) layer from `{prefix}.weight` (and `{prefix}.bias` when
    /// `config.bias`), shaped by `config`.
    pub fn linear(
        &mut self,
        prefix: &str,
        config: super::LinearConfig,
    ) -> super::Linear {
        let weight = self.tensor(
            &format!("{prefix}.weight"),
            &[config.out_features, config.in_features],
        );
        let bias = config
            .bias
            .then(|| self.tensor(&format!("{prefix}.bias"), &[config.out_features]));
        super::Linear::from_weights(&weight, bias.as_ref())
    }

    /// Every problem found, or `Ok` when every tensor was there with its shape and every
    /// name in the state was taken.
    pub fn finish(mut self) -> Result<(), LoadError> {
        for name in self.state.names() {
            if !self.taken.iter().any(|t| t == name) {
                self.error.unexpected.push(name.to_string());
            }
        }
        if self.error.is_empty() {
            Ok(())
        } else {
            Err(self.error)
        }
    }
}
