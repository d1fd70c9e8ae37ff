//! The measurements of pitfalls 2 and 3: every setup trained from the same three
//! seeds, their outcomes in one table each, and the runs the figures draw.
//!
//! Every number here is computed by the engine, whose results are the same bits on
//! every CPU (chapter 13), so the tables are the same on every machine; `cargo run
//! --release -p chapter10 --example sweep` prints them, and `-- --check` compares
//! them with the committed `data/sweep.txt`.

use engine::Activation;

use crate::uniform::{History, Optim, ProjectionInit, Setup, VInit, train};

/// The seeds every setup is trained from.
pub const SEEDS: [u64; 3] = [1, 2, 3];

/// The step at which the tables also read the entropy, to show how fast it falls.
pub const EARLY: usize = 100;

/// A named setup.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    /// What the table calls it.
    pub name: &'static str,
    /// The setup.
    pub setup: Setup,
}

// ANCHOR: uniform_rows
/// Pitfall 2: the baseline, then one change at a time.
pub fn uniform_rows() -> Vec<Row> {
    let base = Setup::default();
    let row = |name, setup| Row { name, setup };
    vec![
        row("baseline (h 32, tanh, Adam)", base),
        row("h = 16", Setup { hidden: 16, ..base }),
        row("h = 64", Setup { hidden: 64, ..base }),
        row(
            "h = 128",
            Setup {
                hidden: 128,
                ..base
            },
        ),
        row(
            "h = 256",
            Setup {
                hidden: 256,
                ..base
            },
        ),
        row(
            "v ~ normal(0, 0.02)",
            Setup {
                v_init: VInit::Normal(0.02),
                ..base
            },
        ),
        row(
            "v ~ normal(0, 3), too large",
            Setup {
                v_init: VInit::Normal(3.0),
                ..base
            },
        ),
        row(
            "Xavier W_q, W_k",
            Setup {
                projection_init: ProjectionInit::Xavier,
                ..base
            },
        ),
        row(
            "LayerNorm before tanh",
            Setup {
                layer_norm: true,
                ..base
            },
        ),
        row("warmup, 50 steps", Setup { warmup: 50, ..base }),
        row("lr 1e-4, too small", Setup { lr: 1e-4, ..base }),
        row(
            "ReLU energies",
            Setup {
                activation: Activation::Relu,
                ..base
            },
        ),
    ]
}
// ANCHOR_END: uniform_rows

// ANCHOR: gradient_rows
/// Pitfall 3: plain SGD, whose step grows with the gradient, at a learning rate where
/// ReLU energies blow up, and the fixes.
pub fn gradient_rows() -> Vec<Row> {
    let sgd = Setup {
        optim: Optim::Sgd,
        lr: 1.0,
        ..Setup::default()
    };
    let blows_up = Setup {
        activation: Activation::Relu,
        lr: 3.0,
        ..sgd
    };
    let row = |name, setup| Row { name, setup };
    vec![
        row("SGD 1, tanh", sgd),
        row("SGD 3, ReLU", blows_up),
        row(
            "SGD 3, ReLU, clip to 1",
            Setup {
                clip: Some(1.0),
                ..blows_up
            },
        ),
        row(
            "SGD 3, ReLU, weight norm",
            Setup {
                weight_norm: true,
                ..blows_up
            },
        ),
        row(
            "SGD 3, tanh",
            Setup {
                activation: Activation::Tanh,
                ..blows_up
            },
        ),
        row(
            "Adam 1, ReLU",
            Setup {
                optim: Optim::Adam,
                lr: 1.0,
                ..blows_up
            },
        ),
        row(
            "Adam 1, ReLU, clip to 1",
            Setup {
                optim: Optim::Adam,
                lr: 1.0,
                clip: Some(1.0),
                ..blows_up
            },
        ),
    ]
}
// ANCHOR_END: gradient_rows

/// A setup's outcome over [`SEEDS`].
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The row's name.
    pub name: &'static str,
    /// The mean normalised entropy on the held-out batch before training.
    pub initial_entropy: f32,
    /// The mean normalised entropy on the held-out batch at step [`EARLY`] (runs that
    /// diverged before are left out; `NaN` if all did).
    pub early_entropy: f32,
    /// The mean normalised entropy at the end, over the runs that did not diverge.
    pub entropy: f32,
    /// The mean accuracy at the end, over the runs that did not diverge.
    pub accuracy: f32,
    /// The lowest and highest accuracy at the end of a run that did not diverge.
    pub accuracy_range: (f32, f32),
    /// How many of the runs diverged (a loss that was not finite).
    pub diverged: usize,
    /// The largest gradient norm of any parameter group at any step of any run.
    pub largest_grad: f32,
}

/// Trains `row` from every seed and summarises the runs.
pub fn outcome(row: &Row) -> Outcome {
    let runs: Vec<History> = SEEDS.iter().map(|&s| train(&row.setup, s)).collect();
    summarise(row.name, &runs)
}

/// The [`Outcome`] of the runs of one setup.
pub fn summarise(name: &'static str, runs: &[History]) -> Outcome {
    let finished: Vec<&History> =
        runs.iter().filter(|h| h.diverged_at.is_none()).collect();
    let mean = |xs: Vec<f32>| {
        if xs.is_empty() {
            f32::NAN
        } else {
            xs.iter().sum::<f32>() / xs.len() as f32
        }
    };
    let early: Vec<f32> = runs
        .iter()
        .filter_map(|h| h.evals.iter().find(|e| e.step == EARLY))
        .map(|e| e.alignment.entropy)
        .collect();
    let accuracies: Vec<f32> = finished.iter().map(|h| h.last().accuracy).collect();
    Outcome {
        name,
        initial_entropy: mean(
            runs.iter().map(|h| h.evals[0].alignment.entropy).collect(),
        ),
        early_entropy: mean(early),
        entropy: mean(finished.iter().map(|h| h.last().entropy).collect()),
        accuracy: mean(accuracies.clone()),
        accuracy_range: accuracies
            .iter()
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &a| {
                (lo.min(a), hi.max(a))
            }),
        diverged: runs.len() - finished.len(),
        largest_grad: runs
            .iter()
            .flat_map(|h| h.grad_norms.iter().flatten())
            .fold(0.0, |m, &g| m.max(g)),
    }
}

/// A number with three decimals, or `-` for `NaN`.
fn cell(x: f32) -> String {
    if x.is_nan() {
        "-".to_string()
    } else {
        format!("{x:.3}")
    }
}

/// The table of some outcomes, in 86 columns.
pub fn format_table(title: &str, outcomes: &[Outcome]) -> String {
    let mut out = format!("{title}\n");
    out += &format!(
        "{:<27} {:>6} {:>6} {:>6} {:>8} {:>9} {:>3} {:>8}\n",
        "setup", "H@0", "H@100", "H end", "accuracy", "range", "div", "max grad"
    );
    for o in outcomes {
        let range = if o.accuracy_range.0.is_finite() {
            format!("{:.2}-{:.2}", o.accuracy_range.0, o.accuracy_range.1)
        } else {
            "-".to_string()
        };
        out += &format!(
            "{:<27} {:>6} {:>6} {:>6} {:>8} {:>9} {:>3} {:>8.2}\n",
            o.name,
            cell(o.initial_entropy),
            cell(o.early_entropy),
            cell(o.entropy),
            cell(o.accuracy),
            range,
            o.diverged,
            o.largest_grad
        );
    }
    out
}

/// Both tables, as the `sweep` example prints them.
pub fn table() -> String {
    let uniform: Vec<Outcome> = uniform_rows().iter().map(outcome).collect();
    let gradients: Vec<Outcome> = gradient_rows().iter().map(outcome).collect();
    format!(
        "{}\n{}\nH: the weights' entropy / ln(len) on 256 held-out examples (1: uniform, \
         0: one key),\n  before training, at step 100 and at the end\naccuracy: the share \
         of queries whose largest weight is on the right key\nmeans over seeds {:?}, and \
         the range of the accuracy; div: runs whose loss\n  stopped being finite (left \
         out of the means); max grad: the largest gradient norm\n  of W_q, W_k or v \
         at any step\n",
        format_table(
            "pitfall 2: weights that stay almost uniform (300 steps)",
            &uniform
        ),
        format_table("pitfall 3: gradients that blow up (300 steps)", &gradients),
        SEEDS
    )
}
