//! [`GruCell`] (one step of a gated recurrent unit) and [`Gru`] (the cell run over a
//! sequence).

use super::init;
use super::module::{Module, parameter};
use crate::check;
use crate::tensor::Tensor;

/// One step of a gated recurrent unit with PyTorch's exact equations and parameter layout,
/// like `torch.nn.GRUCell(input_size, hidden_size)`:
///
/// ```text
/// r  = σ(W_ir x + b_ir + W_hr h + b_hr)          reset gate
/// z  = σ(W_iz x + b_iz + W_hz h + b_hz)          update gate
/// n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))  candidate
/// h' = (1 − z) ⊙ n + z ⊙ h
/// ```
///
/// The three gates' weights are stacked in the order r, z, n: `weight_ih` is `[3H, I]`
/// (rows `0..H` are `W_ir`), `weight_hh` is `[3H, H]`, and the biases are `[3H]`. Note that
/// the reset gate multiplies `W_hn h + b_hn` as a whole, so `b_hn` cannot be folded into
/// `b_in`.
///
/// ```
/// use engine::nn::{GruCell, GruConfig};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let cell = GruCell::new(GruConfig { input_size: 3, hidden_size: 5 });
/// let h = cell.forward(&Tensor::ones(&[2, 3]), &Tensor::zeros(&[2, 5]));
/// assert_eq!(h.shape(), &[2, 5]);
/// ```
#[derive(Debug)]
pub struct GruCell {
    weight_ih: Tensor,
    weight_hh: Tensor,
    bias_ih: Tensor,
    bias_hh: Tensor,
}

/// The settings of a [`GruCell`] or a [`Gru`], named as in `torch.nn.GRUCell`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GruConfig {
    /// The size of each input vector (no default: must be set).
    pub input_size: usize,
    /// The size of the hidden state (no default: must be set).
    pub hidden_size: usize,
}

impl GruCell {
    /// A cell initialised as PyTorch does: every parameter from `U(-1/√H, 1/√H)`.
    #[track_caller]
    pub fn new(config: GruConfig) -> GruCell {
        Self::new_in("GruCell::new", config)
    }

    #[track_caller]
    fn new_in(op: &str, config: GruConfig) -> GruCell {
        check::positive(op, "input_size", config.input_size);
        check::positive(op, "hidden_size", config.hidden_size);
        let (i, h) = (config.input_size, config.hidden_size);
        let bound = 1.0 / (h as f32).sqrt();
        let draw = |shape: &[usize]| init::uniform(shape, -bound, bound);
        GruCell::from_weights(
            &draw(&[3 * h, i]),
            &draw(&[3 * h, h]),
            &draw(&[3 * h]),
            &draw(&[3 * h]),
        )
    }

    /// A cell with the given parameters (`[3H, I]`, `[3H, H]`, `[3H]`, `[3H]`, gates in the
    /// order r, z, n), made parameters (see [`parameter`](super::parameter)).
    #[track_caller]
    pub fn from_weights(
        weight_ih: &Tensor,
        weight_hh: &Tensor,
        bias_ih: &Tensor,
        bias_hh: &Tensor,
    ) -> GruCell {
        let op = "GruCell::from_weights";
        check::rank(op, "weight_ih ([3 * hidden, input])", weight_ih.shape(), 2);
        let rows = weight_ih.shape()[0];
        check::ensure(rows.is_multiple_of(3) && rows > 0, op, || {
            format!(
                "weight_ih must have 3 * hidden_size rows (gates r, z, n), found shape {:?}",
                weight_ih.shape()
            )
        });
        let h = rows / 3;
        // A function, not a closure, so that `#[track_caller]` reaches the caller's line.
        #[track_caller]
        fn expect(name: &str, t: &Tensor, shape: &[usize], h: usize) {
            check::ensure(t.shape() == shape, "GruCell::from_weights", || {
                format!(
                    "{name} must have shape {shape:?} for hidden_size {h}, found {:?}",
                    t.shape()
                )
            });
        }
        expect("weight_hh", weight_hh, &[3 * h, h], h);
        expect("bias_ih", bias_ih, &[3 * h], h);
        expect("bias_hh", bias_hh, &[3 * h], h);
        GruCell {
            weight_ih: parameter(weight_ih),
            weight_hh: parameter(weight_hh),
            bias_ih: parameter(bias_ih),
            bias_hh: parameter(bias_hh),
        }
    }

    /// The next hidden state `[B, H]` from an input `x: [B, I]` and the hidden state
    /// `h: [B, H]`.
    #[track_caller]
    pub fn forward(&self, x: &Tensor, h: &Tensor) -> Tensor {
        let (i, hs) = (self.input_size(), self.hidden_size());
        check::ensure(
            x.rank() == 2 && x.shape()[1] == i,
            "GruCell::forward",
            || {
                format!(
                    "the input must have shape [batch, {i}] (input_size {i}), found {:?}",
                    x.shape()
                )
            },
        );
        let b = x.shape()[0];
        check::ensure(h.shape() == [b, hs], "GruCell::forward", || {
            format!(
                "the hidden state must have shape [{b}, {hs}] (batch {b} from the input {:?}, hidden_size {hs}), found {:?}",
                x.shape(),
                h.shape()
            )
        });
        self.step(&self.project_input(x), h)
    }

    /// `x W_ihᵀ + b_ih` for `x: [..., I]`: the part of every gate that does not depend on
    /// the hidden state, `[..., 3H]`.
    fn project_input(&self, x: &Tensor) -> Tensor {
        x.matmul(&self.weight_ih.transpose(0, 1)) + &self.bias_ih
    }

    /// One step, given the input's projection `gi: [B, 3H]` and the hidden state `h`.
    fn step(&self, gi: &Tensor, h: &Tensor) -> Tensor {
        let hs = self.hidden_size();
        let gh = h.matmul(&self.weight_hh.transpose(0, 1)) + &self.bias_hh;
        let gate = |t: &Tensor, k: usize| t.narrow(-1, k * hs, hs);
        let r = (gate(gi, 0) + gate(&gh, 0)).sigmoid();
        let z = (gate(gi, 1) + gate(&gh, 1)).sigmoid();
        let n = (gate(gi, 2) + &r * gate(&gh, 2)).tanh();
        (1.0 - &z) * n + z * h
    }

    /// The size of each input vector, `I`.
    pub fn input_size(&self) -> usize {
        self.weight_ih.shape()[1]
    }

    /// The size of the hidden state, `H`.
    pub fn hidden_size(&self) -> usize {
        self.weight_hh.shape()[1]
    }

    /// Input-to-hidden weights of the gates r, z, n, stacked: `[3H, I]`.
    pub fn weight_ih(&self) -> &Tensor {
        &self.weight_ih
    }

    /// Hidden-to-hidden weights of the gates r, z, n, stacked: `[3H, H]`.
    pub fn weight_hh(&self) -> &Tensor {
        &self.weight_hh
    }

    /// Input-side biases of the gates r, z, n, stacked: `[3H]`.
    pub fn bias_ih(&self) -> &Tensor {
        &self.bias_ih
    }

    /// Hidden-side biases of the gates r, z, n, stacked: `[3H]`.
    pub fn bias_hh(&self) -> &Tensor {
        &self.bias_hh
    }
}

impl Module for GruCell {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        vec![
            ("weight_ih".to_string(), self.weight_ih.clone()),
            ("weight_hh".to_string(), self.weight_hh.clone()),
            ("bias_ih".to_string(), self.bias_ih.clone()),
            ("bias_hh".to_string(), self.bias_hh.clone()),
        ]
    }
}

/// A single-layer GRU run over a batch-first sequence, like
/// `torch.nn.GRU(input_size, hidden_size, batch_first=True)`.
///
/// It is one [`GruCell`] applied at every time step. Its parameters have `nn.GRU`'s names
/// for layer 0, `weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0` (the cell's
/// `weight_ih`… with `_l0` appended), so an `nn.GRU(I, H, batch_first=True)` state dict
/// loads as it is:
///
/// ```
/// use engine::nn::{Gru, GruConfig, Module, StateDict};
/// use engine::Tensor;
///
/// let gru = Gru::new(GruConfig { input_size: 3, hidden_size: 4 });
/// let names: Vec<String> = gru.named_parameters().into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]);
/// let pytorch = StateDict::from([
///     ("weight_ih_l0", Tensor::zeros([12, 3])),
///     ("weight_hh_l0", Tensor::zeros([12, 4])),
///     ("bias_ih_l0", Tensor::zeros([12])),
///     ("bias_hh_l0", Tensor::zeros([12])),
/// ]);
/// gru.load_state_dict(&pytorch).unwrap();
/// ```
///
/// ```
/// use engine::nn::{Gru, GruConfig};
/// use engine::Tensor;
///
/// engine::manual_seed(0);
/// let gru = Gru::new(GruConfig { input_size: 3, hidden_size: 4 });
/// let (outputs, last) = gru.forward(&Tensor::ones(&[2, 5, 3]), None);
/// assert_eq!(outputs.shape(), &[2, 5, 4]);
/// assert_eq!(last.to_vec(), outputs.narrow(1, 4, 1).to_vec());
/// ```
#[derive(Debug)]
pub struct Gru {
    cell: GruCell,
}

impl Gru {
    /// A GRU whose cell is initialised as [`GruCell::new`].
    #[track_caller]
    pub fn new(config: GruConfig) -> Gru {
        Gru::from_cell(GruCell::new_in("Gru::new", config))
    }

    /// A GRU that runs the given cell (e.g. one built with [`GruCell::from_weights`]).
    pub fn from_cell(cell: GruCell) -> Gru {
        Gru { cell }
    }

    /// Runs over `x: [B, T, I]` from the hidden state `h0: [B, H]` (zeros when `None`),
    /// returning every step's hidden state `[B, T, H]` and the last one `[B, H]`.
    #[track_caller]
    pub fn forward(&self, x: &Tensor, h0: Option<&Tensor>) -> (Tensor, Tensor) {
        let (i, hs) = (self.cell.input_size(), self.cell.hidden_size());
        check::ensure(
            x.rank() == 3 && x.shape()[2] == i && x.shape()[1] > 0,
            "Gru::forward",
            || {
                format!(
                    "the input must have shape [batch, time, {i}] (batch first, input_size {i}, at least one step), found {:?}",
                    x.shape()
                )
            },
        );
        let (b, steps) = (x.shape()[0], x.shape()[1]);
        let mut h = match h0 {
            Some(h0) => {
                check::ensure(h0.shape() == [b, hs], "Gru::forward", || {
                    format!(
                        "the initial hidden state must have shape [{b}, {hs}] (batch, hidden_size), found {:?}",
                        h0.shape()
                    )
                });
                h0.clone()
            }
            None => Tensor::zeros([b, hs]).to(&x.device()),
        };
        // The input side of every gate does not depend on the hidden state, so all time
        // steps are projected in one matrix product instead of T small ones.
        let gi = self.cell.project_input(x);
        let mut outputs = Vec::with_capacity(steps);
        for t in 0..steps {
            h = self.cell.step(&gi.narrow(1, t, 1).squeeze(1), &h);
            outputs.push(h.clone());
        }
        (Tensor::stack(&outputs, 1), h)
    }

    /// The cell applied at each step.
    pub fn cell(&self) -> &GruCell {
        &self.cell
    }
}

impl Module for Gru {
    /// The cell's parameters under `nn.GRU`'s names: `weight_ih_l0` and so on.
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        self.cell
            .list_parameters()
            .into_iter()
            .map(|(name, t)| (format!("{name}_l0"), t))
            .collect()
    }
}
