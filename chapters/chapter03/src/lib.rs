//! # Chapter 3: attention pooling
//!
//! The code of the third lesson (the page is `book/src/ch03-attention-pooling.md`):
//! attention as a weighted average of values, the weights coming from how similar a
//! query is to each key. The setting is d2l's: Nadaraya–Watson kernel regression on a
//! small 1-D data set, where the training inputs are the keys, their targets the
//! values, and the points where we want a prediction the queries.
//!
//! 1. [`Dataset`] and [`true_function`]: the seeded regression data.
//! 2. [`attention_pool`]: the general form `f(q) = Σᵢ α(q, kᵢ) vᵢ`;
//!    [`average_pooling`], its baseline with uniform weights; [`mse`], the measure of
//!    a fit.
//! 3. [`gaussian_scores`] and [`nadaraya_watson`]: the non-parametric estimator,
//!    weights `softmax(−(q − kᵢ)² / 2σ²)` for every query against every key at once.
//! 4. [`leave_one_out`], [`NwKernelRegression`] and [`train`]: a learned kernel width
//!    `w`, trained by gradient descent on leave-one-out predictions.
//! 5. [`effective_keys`] and [`width_sweep`]: reading a row of weights, and what too
//!    wide and too narrow a kernel do.
//! 6. [`naive_softmax`] and [`stable_softmax`]: why a softmax subtracts the largest
//!    score.
//! 7. [`charts`]: the figures; [`tour`]: everything the page prints
//!    (`cargo run -p chapter03`).
//!
//! The exercises are in [`exercises`]: out of the box the reference solutions run;
//! with `--features exercises` your own `src/exercises.rs` does.

use engine::nn::{Module, parameter};
use engine::optim::{Adam, AdamConfig, Optimizer};
use engine::{Tensor, no_grad};

pub mod charts;

/// The exercises of this chapter: the reference solutions, or with `--features
/// exercises` the learner's file `src/exercises.rs`.
#[cfg(not(any(feature = "exercises", feature = "alternatives")))]
#[path = "solutions.rs"]
pub mod exercises;

/// The exercises of this chapter: the learner's file `src/exercises.rs`.
#[cfg(feature = "exercises")]
#[path = "exercises.rs"]
pub mod exercises;

/// The exercises of this chapter, with `--features alternatives`: a second solution to
/// each, written apart from the reference, which the same tests must accept.
#[cfg(all(feature = "alternatives", not(feature = "exercises")))]
#[path = "alternatives.rs"]
pub mod exercises;

#[cfg(all(feature = "exercises", feature = "alternatives"))]
compile_error!(
    "chapter03: the features `exercises` and `alternatives` each choose the exercises module; turn on one of them"
);

// ANCHOR: data
/// The function the regression should recover, d2l's `f(x) = 2 sin x + x^0.8`. The
/// sine and the power are the `libm` crate's, which give the same bits on every
/// platform (the standard library's call the system's maths library, which may not).
pub fn true_function(x: f32) -> f32 {
    2.0 * libm::sinf(x) + libm::powf(x, 0.8)
}

/// [`true_function`] applied to every element of `x` (no gradient: this makes data).
pub fn true_function_of(x: &Tensor) -> Tensor {
    let values = x.to_vec().into_iter().map(true_function).collect();
    Tensor::from_vec(values, x.shape())
}

/// A 1-D regression problem: noisy samples of [`true_function`] to learn from, and
/// evenly spaced points where the prediction is compared with the truth.
///
/// In the language of attention, the training inputs are the **keys**, the training
/// targets the **values**, and the test inputs the **queries**.
#[derive(Clone, Debug)]
pub struct Dataset {
    /// Training inputs `[n_train]`, drawn uniformly from `[0, 5)` and sorted: the
    /// keys.
    pub x_train: Tensor,
    /// Training targets `[n_train]`: `f(x) + ε` with `ε ~ N(0, 0.5²)`: the values.
    pub y_train: Tensor,
    /// Test inputs `[n_test]`, evenly spaced from 0 (`0, 5/n_test, …`): the queries.
    pub x_test: Tensor,
    /// The noise-free truth at the test inputs, `f(x_test)`: what a prediction should
    /// be.
    pub y_test: Tensor,
}

impl Dataset {
    /// Draws a data set from this thread's generator: seed it first with
    /// [`engine::manual_seed`] for the same data every time.
    pub fn generate(n_train: usize, n_test: usize) -> Dataset {
        let mut xs = Tensor::rand([n_train], 0.0, 5.0).to_vec();
        xs.sort_by(f32::total_cmp); // sorted keys make the heatmaps readable
        let x_train = Tensor::from_vec(xs, [n_train]);
        let noise = Tensor::normal([n_train], 0.0, 0.5);
        let y_train = true_function_of(&x_train) + noise;
        // Exactly n_test points.
        let x_test = Tensor::arange(n_test) * (5.0 / n_test as f32);
        let y_test = true_function_of(&x_test);
        Dataset {
            x_train,
            y_train,
            x_test,
            y_test,
        }
    }
}
// ANCHOR_END: data

// ANCHOR: attention_pool
/// Attention pooling in its general form: `f(q) = Σᵢ α(q, kᵢ) vᵢ`, the weights of
/// each query (a row of `weights`) times the values, summed over the keys.
///
/// | argument | shape |
/// |---|---|
/// | `weights` | `[Q, K]`, each row non-negative and summing to 1 |
/// | `values` | `[K]` (the same for every query) or `[Q, K]` (a row per query) |
/// | result | `[Q]`, one prediction per query |
pub fn attention_pool(weights: &Tensor, values: &Tensor) -> Tensor {
    // [Q, K] ⊙ [K] → [Q, K], summed over the keys → [Q]
    (weights * values).sum_dim(-1)
}

/// The baseline: every key gets the same weight `1/K`, whatever the query, so every
/// prediction is the mean of the values.
pub fn average_pooling(queries: &Tensor, values: &Tensor) -> Tensor {
    let (q, k) = (queries.size(0), values.size(0));
    let uniform = Tensor::full([q, k], 1.0 / k as f32); // [Q, K], rows sum to 1
    attention_pool(&uniform, values)
}
// ANCHOR_END: attention_pool

// ANCHOR: mse
/// Mean squared error between predictions and targets of the same shape, a scalar
/// tensor (so it can be a training loss too).
pub fn mse(predictions: &Tensor, targets: &Tensor) -> Tensor {
    (predictions - targets).square().mean()
}
// ANCHOR_END: mse

// ANCHOR: gaussian_scores
/// Gaussian kernel scores of every query against every key: `−(q − kᵢ)² / 2σ²`, close
/// keys scoring near 0 and far keys very negative.
///
/// | argument | shape |
/// |---|---|
/// | `queries` | `[Q]` |
/// | `keys` | `[K]` |
/// | result | `[Q, K]` |
pub fn gaussian_scores(queries: &Tensor, keys: &Tensor, sigma: f32) -> Tensor {
    let q = queries.unsqueeze(1); // [Q, 1]
    let k = keys.unsqueeze(0); //    [1, K]
    // [Q, K]: broadcasting pairs every query with every key.
    let diff = &q - &k;
    -diff.square() / (2.0 * sigma * sigma)
}
// ANCHOR_END: gaussian_scores

// ANCHOR: nadaraya_watson
/// Nadaraya–Watson kernel regression with a Gaussian kernel of width `sigma`: the
/// weights `α = softmax(−(q − kᵢ)² / 2σ²)` over the keys, then [`attention_pool`].
/// Returns the predictions `[Q]` and the weights `[Q, K]`.
///
/// Nothing is learned: the training data *is* the model, which is what
/// "non-parametric" means.
pub fn nadaraya_watson(
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    sigma: f32,
) -> (Tensor, Tensor) {
    // [Q, K], each row sums to 1.
    let weights = gaussian_scores(queries, keys, sigma).softmax(-1);
    (attention_pool(&weights, values), weights)
}
// ANCHOR_END: nadaraya_watson

// ANCHOR: leave_one_out
/// For each of the `n` entries of `x: [n]`, all the others: `[n, n − 1]`, row `i`
/// being `x` without `x[i]`. Training with these as keys (and the same rows of the
/// targets as values) means no training point can see its own target.
pub fn leave_one_out(x: &Tensor) -> Tensor {
    let n = x.size(0);
    let tiled = x.unsqueeze(0).expand([n, n]).reshape([n * n]); // row i: all of x
    let off_diagonal: Vec<f32> = (0..n)
        .flat_map(|i| {
            (0..n)
                .filter(move |&j| j != i)
                .map(move |j| (i * n + j) as f32)
        })
        .collect();
    let index = Tensor::from_vec(off_diagonal, [n * (n - 1)]);
    tiled.index_select(0, &index).reshape([n, n - 1])
}
// ANCHOR_END: leave_one_out

// ANCHOR: model
/// Nadaraya–Watson regression with one learned parameter, d2l's `NWKernelRegression`:
/// `α = softmax(−((q − kᵢ) · w)² / 2)`. With `w = 1/σ` it is exactly
/// [`nadaraya_watson`]; training `w` learns the kernel's width `σ = 1/|w|`.
#[derive(Clone, Debug)]
pub struct NwKernelRegression {
    /// The inverse width, a `[1]` tensor that requires a gradient.
    w: Tensor,
}

impl NwKernelRegression {
    /// A model whose inverse width starts at `w`.
    pub fn new(w: f32) -> NwKernelRegression {
        NwKernelRegression::from_w(&Tensor::from_vec(vec![w], [1]))
    }

    /// A model around the given `[1]` tensor, shared when it is already a leaf that
    /// requires a gradient (as a layer's `from_weights` shares its weights).
    ///
    /// # Panics
    /// When `w` does not hold exactly one value.
    #[track_caller]
    pub fn from_w(w: &Tensor) -> NwKernelRegression {
        assert_eq!(w.shape(), &[1], "NwKernelRegression: w must have shape [1]");
        NwKernelRegression { w: parameter(w) }
    }

    /// The current inverse width `w`.
    pub fn w(&self) -> f32 {
        self.w.item()
    }

    /// The kernel width the current `w` stands for, `σ = 1/|w|`.
    pub fn sigma(&self) -> f32 {
        1.0 / self.w().abs()
    }

    /// The attention weights `[Q, K]` of `queries: [Q]` over `keys`, which are either
    /// shared by every query (`[K]`) or one row per query (`[Q, K]`, as
    /// [`leave_one_out`] gives).
    pub fn weights(&self, queries: &Tensor, keys: &Tensor) -> Tensor {
        let diff = queries.unsqueeze(1) - keys; // [Q, 1] − [K] or [Q, K] → [Q, K]
        let scores = -(diff * &self.w).square() / 2.0; // [Q, K] · [1] → [Q, K]
        scores.softmax(-1)
    }

    /// The predictions `[Q]`: [`attention_pool`] of the [`weights`](Self::weights)
    /// with `values` (`[K]` or `[Q, K]`, like the keys).
    pub fn forward(
        &self,
        queries: &Tensor,
        keys: &Tensor,
        values: &Tensor,
    ) -> Tensor {
        attention_pool(&self.weights(queries, keys), values)
    }
}

impl Module for NwKernelRegression {
    fn list_parameters(&self) -> Vec<(String, Tensor)> {
        vec![("w".to_string(), self.w.clone())]
    }
}
// ANCHOR_END: model

/// One step of [`train`]: the loss before the update, and `w` at that moment.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrainStep {
    /// The mean squared error of the step's forward pass.
    pub loss: f32,
    /// The inverse width the forward pass used.
    pub w: f32,
}

// ANCHOR: train
/// Trains the model's `w` with Adam for `steps` full-batch steps: each query of
/// `queries` is predicted from `keys` and `values` and compared with its target in
/// `targets`. Returns the loss and `w` of every step, before its update.
pub fn train(
    model: &NwKernelRegression,
    queries: &Tensor,
    keys: &Tensor,
    values: &Tensor,
    targets: &Tensor,
    steps: usize,
    lr: f32,
) -> Vec<TrainStep> {
    let mut optimizer = Adam::new(
        model.parameters(),
        AdamConfig {
            lr,
            ..Default::default()
        },
    );
    let mut history = Vec::with_capacity(steps);
    for _ in 0..steps {
        let w = model.w();
        let loss = mse(&model.forward(queries, keys, values), targets);
        history.push(TrainStep {
            loss: loss.item(),
            w,
        });
        optimizer.zero_grad();
        loss.backward();
        optimizer.step();
    }
    history
}
// ANCHOR_END: train

// ANCHOR: measures
/// How many keys each query really uses: `1 / Σᵢ αᵢ²` for each row of `weights: [Q,
/// K]`, giving `[Q]`. Uniform weights over `K` keys give `K`; all the weight on one
/// key gives 1.
pub fn effective_keys(weights: &Tensor) -> Tensor {
    1.0 / weights.square().sum_dim(-1)
}

/// How much of each query's weight falls on keys within `radius` of it: `weights: [Q,
/// K]`, `queries: [Q]`, `keys: [K]`, giving `[Q]`. A Gaussian kernel of width σ puts
/// about 38% of its mass within σ/2 and 95% within 2σ.
pub fn weight_within(
    weights: &Tensor,
    queries: &Tensor,
    keys: &Tensor,
    radius: f32,
) -> Tensor {
    let diff = queries.unsqueeze(1) - keys.unsqueeze(0); // [Q, K]
    // 1 where |q − k| ≤ r, else 0.
    let near = diff.square().le(&Tensor::scalar(radius * radius));
    (weights * near).sum_dim(-1)
}
// ANCHOR_END: measures

/// What one kernel width gives (a row of [`width_sweep`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WidthResult {
    /// The kernel width.
    pub sigma: f32,
    /// Mean squared error against the truth at the test inputs.
    pub test_mse: f32,
    /// Mean squared error of the leave-one-out predictions of the training targets:
    /// the loss [`train`] minimises.
    pub loo_mse: f32,
    /// The mean over the test queries of [`effective_keys`].
    pub effective_keys: f32,
}

// ANCHOR: width_sweep
/// The fixed-width estimator for each width in `sigmas`: its test error, its
/// leave-one-out training error and how many keys its queries use.
pub fn width_sweep(data: &Dataset, sigmas: &[f32]) -> Vec<WidthResult> {
    let loo_keys = leave_one_out(&data.x_train);
    let loo_values = leave_one_out(&data.y_train);
    sigmas
        .iter()
        .map(|&sigma| {
            let (pred, weights) =
                nadaraya_watson(&data.x_test, &data.x_train, &data.y_train, sigma);
            let model = NwKernelRegression::new(1.0 / sigma);
            let loo =
                no_grad(|| model.forward(&data.x_train, &loo_keys, &loo_values));
            WidthResult {
                sigma,
                test_mse: mse(&pred, &data.y_test).item(),
                loo_mse: mse(&loo, &data.y_train).item(),
                effective_keys: effective_keys(&weights).mean().item(),
            }
        })
        .collect()
}
// ANCHOR_END: width_sweep

// ANCHOR: softmaxes
/// Softmax as the formula reads: `exp(sᵢ) / Σⱼ exp(sⱼ)` along the last dimension.
/// Scores below about −104 make `exp` underflow to 0 in `f32`; a row where that
/// happens to every score becomes `0 / 0 = NaN`.
pub fn naive_softmax(scores: &Tensor) -> Tensor {
    let exps = scores.exp();
    &exps / exps.sum_dim_keepdim(-1)
}

/// The same softmax, computed safely: subtract each row's largest score first. The
/// result is unchanged (the factor `exp(−max)` cancels between numerator and
/// denominator), but now the largest term is `exp(0) = 1` and the sum is at least 1.
/// The engine's [`Tensor::softmax`] does this in one kernel.
pub fn stable_softmax(scores: &Tensor) -> Tensor {
    let max = scores.max_dim_keepdim(-1).detach(); // [Q, 1]: a constant shift
    naive_softmax(&(scores - max))
}
// ANCHOR_END: softmaxes

/// Rows of a `[rows, cols]` tensor holding at least one NaN.
pub fn rows_with_nan(t: &Tensor) -> usize {
    let cols = t.size(-1);
    t.to_vec()
        .chunks(cols)
        .filter(|row| row.iter().any(|v| v.is_nan()))
        .count()
}

/// The sizes, widths and training settings of the tour.
pub mod settings {
    /// Training points (keys and values).
    pub const N_TRAIN: usize = 50;
    /// Test points (queries), `0.0, 0.1, …, 4.9`.
    pub const N_TEST: usize = 50;
    /// The seed of the data.
    pub const SEED: u64 = 2;
    /// The fixed kernel's width.
    pub const SIGMA: f32 = 1.0;
    /// Steps of Adam for the learned width.
    pub const STEPS: usize = 50;
    /// Steps of the pitfall run that lets each query see its own key.
    pub const CHEAT_STEPS: usize = 100;
    /// Adam's learning rate.
    pub const LR: f32 = 0.2;
    /// The widths the sweep tries.
    pub const SIGMAS: [f32; 9] = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0];
}

/// Everything the tour computes: the page's numbers ([`Tour::text`]) and the data its
/// figures are drawn from.
#[derive(Clone, Debug)]
pub struct Tour {
    /// What `cargo run -p chapter03` prints; the page quotes it.
    pub text: String,
    /// The data set.
    pub data: Dataset,
    /// Average pooling's prediction at each test input.
    pub average: Tensor,
    /// The fixed-width estimator's predictions `[Q]` and weights `[Q, K]`.
    pub fixed: (Tensor, Tensor),
    /// The learned-width estimator's predictions `[Q]` and weights `[Q, K]`.
    pub learned: (Tensor, Tensor),
    /// The learned inverse width.
    pub learned_w: f32,
    /// Every training step, with leave-one-out keys.
    pub history: Vec<TrainStep>,
    /// The width sweep.
    pub sweep: Vec<WidthResult>,
}

/// Runs the whole lesson once, seeded: the numbers the page quotes and the data
/// behind its figures.
pub fn run_tour() -> Tour {
    use settings::*;
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };

    // ANCHOR: tour_data
    engine::manual_seed(SEED);
    let data = Dataset::generate(N_TRAIN, N_TEST);
    let (x, y) = (&data.x_train, &data.y_train);
    let (xs, qs) = (x.to_vec(), data.x_test.to_vec());
    line(format!(
        "keys    x_train {:?}: sorted, {:.3} to {:.3}",
        x.shape(),
        xs[0],
        xs[N_TRAIN - 1]
    ));
    line(format!("values  y_train {:?}: f(x) + noise", y.shape()));
    line(format!(
        "queries x_test  {:?}: {:.1}, {:.1}, ..., {:.1}",
        data.x_test.shape(),
        qs[0],
        qs[1],
        qs[N_TEST - 1]
    ));
    // ANCHOR_END: tour_data

    // ANCHOR: tour_average
    let average = average_pooling(&data.x_test, y);
    line(format!(
        "average pooling: every prediction is {:.4}",
        average.to_vec()[0]
    ));
    line(format!(
        "average pooling: test MSE {:.4}",
        mse(&average, &data.y_test).item()
    ));
    // ANCHOR_END: tour_average

    // ANCHOR: tour_fixed
    let q = data.x_test.unsqueeze(1);
    let k = x.unsqueeze(0);
    line(format!(
        "queries {:?} - keys {:?} -> {:?}",
        q.shape(),
        k.shape(),
        (&q - &k).shape()
    ));
    let (fixed_pred, fixed_weights) = nadaraya_watson(&data.x_test, x, y, SIGMA);
    let row_sums = fixed_weights.sum_dim(-1).to_vec();
    let sum_to_one = row_sums.iter().all(|s| (s - 1.0).abs() < 1e-6);
    line(format!(
        "weights {:?}, every row sums to 1: {sum_to_one}",
        fixed_weights.shape()
    ));
    line(format!("predictions {:?}", fixed_pred.shape()));
    line(format!(
        "sigma = {SIGMA}: test MSE {:.4}",
        mse(&fixed_pred, &data.y_test).item()
    ));
    // ANCHOR_END: tour_fixed

    // ANCHOR: tour_loo
    let loo_keys = leave_one_out(x);
    let loo_values = leave_one_out(y);
    line(format!(
        "leave-one-out keys {:?}, values {:?}",
        loo_keys.shape(),
        loo_values.shape()
    ));
    // ANCHOR_END: tour_loo

    // ANCHOR: tour_train
    let model = NwKernelRegression::new(1.0 / SIGMA); // start from the fixed kernel
    let history = train(&model, x, &loo_keys, &loo_values, y, STEPS, LR);
    for (step, s) in history.iter().enumerate() {
        if [0, 5, 10, 20, 30, STEPS - 1].contains(&step) {
            line(format!(
                "step {step:>2}: w = {:.4}, loo loss {:.4}",
                s.w, s.loss
            ));
        }
    }
    line(format!(
        "learned w = {:.4}, sigma = 1/w = {:.4}",
        model.w(),
        model.sigma()
    ));
    let learned_weights = no_grad(|| model.weights(&data.x_test, x)); // [50, 50]
    let learned_pred = attention_pool(&learned_weights, y);
    line(format!(
        "learned width: test MSE {:.4}",
        mse(&learned_pred, &data.y_test).item()
    ));
    // ANCHOR_END: tour_train

    // ANCHOR: tour_sharper
    for (name, w) in [("fixed", &fixed_weights), ("learned", &learned_weights)] {
        let top = w.max_dim(-1).mean().item();
        let used = effective_keys(w).mean().item();
        let near = weight_within(w, &data.x_test, x, 0.5).mean().item();
        line(format!(
            "{name:>7}: largest weight {top:.3}, keys in use {used:>4.1}, \
             weight within 0.5 {near:.2}"
        ));
    }
    // ANCHOR_END: tour_sharper

    // ANCHOR: tour_no_loo
    let cheat = NwKernelRegression::new(1.0 / SIGMA);
    // The keys include the query itself.
    let cheat_history = train(&cheat, x, x, y, y, CHEAT_STEPS, LR);
    let test_mse = |w: f32| {
        let pred = no_grad(|| NwKernelRegression::new(w).forward(&data.x_test, x, y));
        mse(&pred, &data.y_test).item()
    };
    for step in [10, 50, CHEAT_STEPS - 1] {
        let TrainStep { w, loss } = cheat_history[step];
        line(format!(
            "no leave-one-out, step {step:>2}: w = {w:.3}, training loss {loss:.4}, \
             test MSE {:.4}",
            test_mse(w)
        ));
    }
    let memorised = no_grad(|| NwKernelRegression::new(1000.0).forward(x, x, y));
    let loss = mse(&memorised, y).item();
    line(format!(
        "no leave-one-out, w = 1000: training loss {loss:.4}, test MSE {:.4}",
        test_mse(1000.0)
    ));
    // ANCHOR_END: tour_no_loo

    // ANCHOR: tour_sweep
    let sweep = width_sweep(&data, &SIGMAS);
    line("sigma     test MSE  loo MSE  keys in use".to_string());
    for r in &sweep {
        line(format!(
            "{:<8}  {:.4}    {:.4}   {:.1}",
            r.sigma, r.test_mse, r.loo_mse, r.effective_keys
        ));
    }
    // ANCHOR_END: tour_sweep

    // ANCHOR: tour_softmax
    let narrow = gaussian_scores(&data.x_test, x, 0.01);
    line(format!(
        "sigma = 0.01: lowest score {:.0}",
        narrow.to_vec().iter().fold(0.0f32, |a, &b| a.min(b))
    ));
    let best = narrow.max_dim(-1).to_vec();
    let lost = best.iter().filter(|&&s| s.exp() == 0.0).count();
    line(format!(
        "queries whose best score underflows exp: {lost} of {N_TEST}"
    ));
    line(format!(
        "naive softmax:  {} rows with NaN",
        rows_with_nan(&naive_softmax(&narrow))
    ));
    line(format!(
        "stable softmax: {} rows with NaN",
        rows_with_nan(&stable_softmax(&narrow))
    ));
    line(format!(
        "engine softmax: {} rows with NaN",
        rows_with_nan(&narrow.softmax(-1))
    ));
    // ANCHOR_END: tour_softmax

    Tour {
        text: out,
        data,
        average,
        fixed: (fixed_pred, fixed_weights),
        learned: (learned_pred, learned_weights),
        learned_w: model.w(),
        history,
        sweep,
    }
}

/// Everything the chapter's page shows, in order: `cargo run -p chapter03`
/// prints it, and a test checks that the page quotes it exactly.
pub fn tour() -> String {
    run_tour().text
}

#[cfg(doctest)]
#[doc = include_str!("../../../book/src/ch03-attention-pooling.md")]
struct Book;
