//! [`Embedding`]: a table of learned vectors looked up by id.

use super::init;
use super::module::{Module, parameter};
use crate::check;
use crate::tensor::Tensor;

/// A lookup table of `vocab` vectors of size `dim`, like `torch.nn.Embedding`.
///
/// Ids are `f32` tensors holding whole numbers (the engine has one element type). An id
/// used several times in a batch collects the gradient of every use.
///
/// ```
/// use engine::nn::Embedding;
/// use engine::Tensor;
///
/// let table = Tensor::from_vec(vec![0.0, 0.0, 1.0, 1.0, 2.0, 2.0], &[3, 2]);
/// let emb = Embedding::from_weights(&table);
/// let ids = Tensor::from_vec(vec![2.0, 0.0, 2.0], &[1, 3]);
/// let y = emb.forward(&ids);
/// assert_eq!(y.shape(), &[1, 3, 2]);
/// assert_eq!(y.to_vec(), vec![2.0, 2.0, 0.0, 0.0, 2.0, 2.0]);
/// ```
#[derive(Debug)]
pub struct Embedding {
    weight: Tensor,
}

/// The settings of an [`Embedding`], named as in `torch.nn.Embedding`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EmbeddingConfig {
    /// The number of distinct ids, the table's rows (no default: must be set).
    pub num_embeddings: usize,
    /// The size of each vector (no default: must be set).
    pub embedding_dim: usize,
}

impl Embedding {
    /// A table drawn from `N(0, 1)`, as PyTorch initialises it.
    ///
    /// ```
    /// use engine::nn::{Embedding, EmbeddingConfig};
    /// let emb = Embedding::new(EmbeddingConfig { num_embeddings: 10, embedding_dim: 4 });
    /// assert_eq!(emb.weight().shape(), &[10, 4]);
    /// ```
    #[track_caller]
    pub fn new(config: EmbeddingConfig) -> Embedding {
        let EmbeddingConfig {
            num_embeddings,
            embedding_dim,
        } = config;
        check::positive("Embedding::new", "num_embeddings", num_embeddings);
        check::positive("Embedding::new", "embedding_dim", embedding_dim);
        Embedding::from_weights(&init::normal(
            [num_embeddings, embedding_dim],
            0.0,
            1.0,
        ))
    }

    /// An embedding that uses the given table `[vocab, dim]` as its parameter (shared, not
    /// copied: see [`parameter`](super::parameter)), e.g. to tie it to an output layer.
    #[track_caller]
    pub fn from_weights(weight: &Tensor) -> Embedding {
        check::rank(
            "Embedding::from_weights",
            "the weight ([vocab, dim])",
            weight.shape(),
            2,
        );
        Embedding {
            weight: parameter(weight),
        }
    }

    /// The vectors of `ids` (any shape `[...]`, whole numbers in `0..vocab`), shaped
    /// `[..., dim]`.
    #[track_caller]
    pub fn forward(&self, ids: &Tensor) -> Tensor {
        Tensor::embedding(ids, &self.weight)
    }

    /// The table, `[vocab, dim]`.
    pub fn weight(&self) -> &Tensor {
        &self.weight
    }

    /// The number of rows (distinct ids).
    pub fn vocab(&self) -> usize {
        self.weight.shape()[0]
    }

    /// The size of each vector.
    pub fn dim(&self) -> usize {
        self.weight.shape()[1]
    }
}

impl Module for Embedding {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        vec![("weight".to_string(), self.weight.clone())]
    }
}
