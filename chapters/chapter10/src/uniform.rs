//! Pitfall 2: attention weights that stay almost uniform, and the fixes a debugging
//! guide suggests for them, each measured on the [`task`](crate::task).
//!
//! A [`Setup`] is one way to build and train additive attention on the task: its
//! hidden size, how `v` and the projections start, a LayerNorm before the activation
//! or not, the activation, weight normalisation, the learning rate and its warmup,
//! and gradient clipping. [`train`] runs it from a seed and records a [`History`]:
//! the loss and every parameter's gradient norm at each step, and on a held-out batch
//! every [`EVAL_EVERY`] steps, the weights' normalised entropy and the share of
//! queries whose largest weight is on the right key.

use attention::{Fill, masked_softmax};
use engine::nn::{
    LayerNorm, LayerNormConfig, Linear, LinearConfig, Module, WeightNorm, init,
};
use engine::optim::{
    Adam, AdamConfig, LinearWarmup, Optimizer, Sgd, SgdConfig, clip_grad_norm,
};
use engine::{Activation, Tensor, no_grad};

use crate::task::{Alignment, Batch, KEY_SIZE, QUERY_SIZE, alignment};

/// How `v`, the score vector of `v · f(W_q q + W_k k)`, starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum VInit {
    /// Uniform in `±1/√h`: what `nn.Linear(h, 1)` gives it, d2l's choice.
    Uniform,
    /// Normal with the given standard deviation (a debugging guide suggests 0.02).
    Normal(f32),
}

/// How the projections `W_q` and `W_k` start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProjectionInit {
    /// `nn.Linear`'s default, uniform in `±1/√in`.
    Default,
    /// Xavier (Glorot) uniform, `±√(6 / (in + out))`.
    Xavier,
}

/// The optimizer of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Optim {
    /// Adam with PyTorch's defaults but the learning rate: its step is about the
    /// learning rate whatever the gradient's size, so it shrugs off large gradients.
    Adam,
    /// Plain SGD: its step is the gradient times the learning rate, so a large
    /// gradient is a large step.
    Sgd,
}

/// One way to build and train additive attention on the task.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    /// The hidden size `h` of the energies.
    pub hidden: usize,
    /// How `v` starts.
    pub v_init: VInit,
    /// How `W_q` and `W_k` start.
    pub projection_init: ProjectionInit,
    /// A LayerNorm over `h` on `W_q q + W_k k`, before the activation.
    pub layer_norm: bool,
    /// The activation of the energies.
    pub activation: Activation,
    /// `W_q` and `W_k` as [`WeightNorm`] layers.
    pub weight_norm: bool,
    /// The optimizer.
    pub optim: Optim,
    /// The learning rate after the warmup.
    pub lr: f32,
    /// Steps of linear warmup from 0 (0: none).
    pub warmup: usize,
    /// Clip the gradients' global norm to this value each step.
    pub clip: Option<f32>,
    /// Training steps, of [`BATCH`] examples each.
    pub steps: usize,
}

impl Default for Setup {
    /// The baseline: `h = 32` (twice the query size), d2l's initialisation, `tanh`,
    /// Adam at 0.01 without warmup or clipping, 300 steps.
    fn default() -> Setup {
        Setup {
            hidden: 32,
            v_init: VInit::Uniform,
            projection_init: ProjectionInit::Default,
            layer_norm: false,
            activation: Activation::Tanh,
            weight_norm: false,
            optim: Optim::Adam,
            lr: 0.01,
            warmup: 0,
            clip: None,
            steps: 300,
        }
    }
}

/// Examples per training step.
pub const BATCH: usize = 32;
/// Steps between two evaluations on the held-out batch.
pub const EVAL_EVERY: usize = 25;
/// Examples in the held-out batch.
pub const HELD_OUT: usize = 256;

/// A projection, plain or weight-normalised.
#[derive(Debug)]
enum Projection {
    Plain(Linear),
    Normalised(WeightNorm),
}

impl Projection {
    fn forward(&self, x: &Tensor) -> Tensor {
        match self {
            Projection::Plain(l) => l.forward(x),
            Projection::Normalised(l) => l.forward(x),
        }
    }

    fn parameters(&self) -> Vec<Tensor> {
        match self {
            Projection::Plain(l) => l.parameters(),
            Projection::Normalised(l) => l.parameters(),
        }
    }
}

/// Additive attention built to a [`Setup`]: `softmax(v · f(norm(W_q q + W_k k)))`
/// over the real keys.
#[derive(Debug)]
pub struct Scorer {
    w_q: Projection,
    w_k: Projection,
    v: Tensor,
    norm: Option<LayerNorm>,
    activation: Activation,
}

impl Scorer {
    /// A scorer initialised as `setup` says, from this thread's seeded generator.
    pub fn new(setup: &Setup) -> Scorer {
        let h = setup.hidden;
        let projection = |inputs: usize| {
            let linear = Linear::new(LinearConfig {
                in_features: inputs,
                out_features: h,
                bias: false,
            });
            if setup.projection_init == ProjectionInit::Xavier {
                let w = init::xavier_uniform([h, inputs], 1.0);
                no_grad(|| linear.weight().assign(&w));
            }
            if setup.weight_norm {
                Projection::Normalised(WeightNorm::new(linear, Some(0)))
            } else {
                Projection::Plain(linear)
            }
        };
        let (w_q, w_k) = (projection(QUERY_SIZE), projection(KEY_SIZE));
        let bound = 1.0 / (h as f32).sqrt();
        let v = match setup.v_init {
            VInit::Uniform => init::uniform([h], -bound, bound),
            VInit::Normal(std) => init::normal([h], 0.0, std),
        }
        .requires_grad_();
        let norm = setup.layer_norm.then(|| {
            LayerNorm::new(LayerNormConfig {
                dim: h,
                ..Default::default()
            })
        });
        Scorer {
            w_q,
            w_k,
            v,
            norm,
            activation: setup.activation,
        }
    }

    /// The attention weights `[B, Q, K]` of a batch.
    pub fn weights(&self, batch: &Batch) -> Tensor {
        let q = self.w_q.forward(&batch.queries);
        let k = self.w_k.forward(&batch.keys);
        let scores = match &self.norm {
            // The LayerNorm needs every q̃ + k̃ pair: the broadcast form.
            Some(norm) => {
                let pairs = norm.forward(&(q.unsqueeze(2) + k.unsqueeze(1)));
                self.activation
                    .apply(&pairs)
                    .matmul(&self.v.unsqueeze(1))
                    .squeeze(-1)
            }
            None => q.additive_scores_with(&k, &self.v, self.activation),
        };
        masked_softmax(&scores, &batch.mask(), Fill::Safe)
    }

    /// The parameters in groups, for gradient norms: `W_q`, `W_k`, `v`, and the
    /// LayerNorm's when there is one.
    pub fn groups(&self) -> Vec<(&'static str, Vec<Tensor>)> {
        let mut groups = vec![
            ("W_q", self.w_q.parameters()),
            ("W_k", self.w_k.parameters()),
            ("v", vec![self.v.clone()]),
        ];
        if let Some(norm) = &self.norm {
            groups.push(("norm", norm.parameters()));
        }
        groups
    }

    /// Every parameter.
    pub fn parameters(&self) -> Vec<Tensor> {
        self.groups().into_iter().flat_map(|(_, p)| p).collect()
    }
}

/// The task's loss for weights `[B, Q, K]`: the mean of `−ln(weight on the right
/// key)`.
pub fn loss(weights: &Tensor, batch: &Batch) -> Tensor {
    -(weights * &batch.one_hot).sum_dim(-1).log().mean()
}

/// One evaluation on the held-out batch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eval {
    /// The step it was taken after (0: before training).
    pub step: usize,
    /// The entropy and accuracy of the weights.
    pub alignment: Alignment,
}

/// What a training run recorded.
#[derive(Clone, Debug, PartialEq)]
pub struct History {
    /// The loss of every step's batch.
    pub losses: Vec<f32>,
    /// The gradient norm of each group ([`Scorer::groups`]) at every step, before any
    /// clipping: `grad_norms[step][group]`.
    pub grad_norms: Vec<Vec<f32>>,
    /// The names of the groups.
    pub groups: Vec<&'static str>,
    /// The evaluations, every [`EVAL_EVERY`] steps and at the end.
    pub evals: Vec<Eval>,
    /// The first step whose loss was not finite, if any; training stopped there.
    pub diverged_at: Option<usize>,
}

impl History {
    /// The last evaluation.
    pub fn last(&self) -> Alignment {
        self.evals.last().expect("an evaluation").alignment
    }
}

/// The Euclidean norm of the gradients of `params` together (0 for none yet).
fn grad_norm(params: &[Tensor]) -> f32 {
    params
        .iter()
        .filter_map(|p| p.grad().ok())
        .map(|g| g.to_vec().iter().map(|x| x * x).sum::<f32>())
        .sum::<f32>()
        .sqrt()
}

/// Trains a [`Scorer`] built to `setup` from `seed`, and records its [`History`].
pub fn train(setup: &Setup, seed: u64) -> History {
    engine::manual_seed(seed);
    let held_out = Batch::draw(HELD_OUT);
    let scorer = Scorer::new(setup);
    let params = scorer.parameters();
    let mut opt: Box<dyn Optimizer> = match setup.optim {
        Optim::Adam => Box::new(Adam::new(
            params.clone(),
            AdamConfig {
                lr: setup.lr,
                ..Default::default()
            },
        )),
        Optim::Sgd => Box::new(Sgd::new(
            params.clone(),
            SgdConfig {
                lr: setup.lr,
                ..Default::default()
            },
        )),
    };
    let schedule = LinearWarmup::new(setup.lr, setup.warmup);
    let groups = scorer.groups();
    let mut history = History {
        losses: Vec::new(),
        grad_norms: Vec::new(),
        groups: groups.iter().map(|(name, _)| *name).collect(),
        evals: Vec::new(),
        diverged_at: None,
    };
    let evaluate = |step| Eval {
        step,
        alignment: no_grad(|| alignment(&scorer.weights(&held_out), &held_out)),
    };
    history.evals.push(evaluate(0));
    for step in 0..setup.steps {
        let batch = Batch::draw(BATCH);
        let loss = loss(&scorer.weights(&batch), &batch);
        let value = loss.item();
        history.losses.push(value);
        if !value.is_finite() {
            history.diverged_at = Some(step);
            break;
        }
        loss.backward();
        history
            .grad_norms
            .push(groups.iter().map(|(_, p)| grad_norm(p)).collect());
        if let Some(max) = setup.clip {
            clip_grad_norm(&params, max);
        }
        opt.set_lr(schedule.lr_at(step));
        opt.step();
        opt.zero_grad();
        if (step + 1) % EVAL_EVERY == 0 || step + 1 == setup.steps {
            history.evals.push(evaluate(step + 1));
        }
    }
    history
}
