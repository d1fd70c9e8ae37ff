//! Keeping the last attention weights of a module, for plotting.

use std::sync::Mutex;

use engine::Tensor;

/// Implemented by every attention module: the weights of its most recent forward pass.
pub trait AttentionWeights {
    /// The attention weights of the last `forward` (detached from the graph), or `None`
    /// before the first call. The shape is documented on each module.
    fn last_attention_weights(&self) -> Option<Tensor>;
}

/// A slot holding the last weights a module computed. Detached, so keeping them does not
/// keep the whole graph alive.
#[derive(Debug, Default)]
pub(crate) struct WeightsSlot(Mutex<Option<Tensor>>);

impl WeightsSlot {
    pub(crate) fn store(&self, weights: &Tensor) {
        *self.0.lock().expect("weights slot poisoned") = Some(weights.detach());
    }

    pub(crate) fn get(&self) -> Option<Tensor> {
        self.0.lock().expect("weights slot poisoned").clone()
    }
}
