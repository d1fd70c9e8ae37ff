//! The claims of pitfalls 1 to 3: the forgotten `unsqueeze` refused or silently
//! wrong, the task's right alignment and its measures, what training records, and the
//! tables' rows reproduced from scratch.

use chapter10::mismatch::{
    checked_energies, energies, energies_forgotten_unsqueeze, example, trace, weights,
};
use chapter10::sweep::{gradient_rows, outcome, uniform_rows};
use chapter10::task::{Batch, KEYS, QUERIES, alignment};
use chapter10::uniform::{Setup, train};
use engine::Tensor;
use lesson::panic_message;

#[test]
fn the_forgotten_unsqueeze_is_refused_when_the_batch_and_the_keys_differ() {
    let (query, keys, _) = example(2, 3, 4);
    let message = panic_message(|| {
        energies_forgotten_unsqueeze(&query, &keys);
    });
    assert!(
        message.starts_with("add: cannot broadcast [2, 4] with [2, 3, 4]"),
        "{message}"
    );
    assert_eq!(energies(&query, &keys).shape(), &[2, 3, 4]);
}

#[test]
fn the_forgotten_unsqueeze_runs_silently_and_wrongly_when_they_agree() {
    let (query, keys, v) = example(3, 3, 4);
    let wrong = energies_forgotten_unsqueeze(&query, &keys);
    let right = energies(&query, &keys);
    assert_eq!(
        wrong.shape(),
        right.shape(),
        "the same shape: nothing complains"
    );
    // Key j of every example met the query of example j: example 0's keys 1 and 2
    // were scored against the queries of examples 1 and 2.
    let by_hand =
        (query.narrow(0, 1, 1) + keys.narrow(0, 0, 1).narrow(1, 1, 1)).tanh();
    let wrong_row = wrong.narrow(0, 0, 1).narrow(1, 1, 1);
    assert_eq!(wrong_row.to_vec(), by_hand.to_vec());
    let gap = (weights(&wrong, &v) - weights(&right, &v))
        .abs()
        .max()
        .item();
    assert!(gap > 0.1, "the weights differ by {gap}");
    // Example 0, key 0 met its own query: that entry is right.
    assert_eq!(
        wrong.narrow(0, 0, 1).narrow(1, 0, 1).to_vec(),
        right.narrow(0, 0, 1).narrow(1, 0, 1).to_vec()
    );
}

#[test]
fn the_boundary_check_refuses_what_broadcasting_would_accept() {
    let (query, keys, _) = example(3, 3, 4);
    assert_eq!(checked_energies(&query, &keys).shape(), &[3, 3, 4]);
    // A query unsqueezed already: broadcasting would give [3, 3, 3, 4].
    let message = panic_message(|| {
        checked_energies(&query.unsqueeze(1), &keys);
    });
    assert_eq!(
        message,
        "checked_energies: expected the query [B, h] and the keys [B, K, h], found \
         [3, 1, 4] and [3, 3, 4]"
    );
    // Keys with their batch and key dimensions swapped (B = 2, K = 3 read as [3, 2, 4]).
    let (query, keys, _) = example(2, 3, 4);
    let message = panic_message(|| {
        checked_energies(&query, &keys.transpose(0, 1));
    });
    assert!(message.ends_with("found [2, 4] and [3, 2, 4]"), "{message}");
}

#[test]
fn the_trace_shows_the_query_entering_without_its_key_dimension() {
    let (query, keys, _) = example(3, 3, 4);
    let t = trace(&query, &keys);
    assert_eq!(t.shape_of("query"), Some(&[3, 4][..]));
    assert_eq!(t.shape_of("query.unsqueeze(1)"), Some(&[3, 1, 4][..]));
    assert_eq!(t.shape_of("forgotten: query + keys"), Some(&[3, 3, 4][..]));
}

#[test]
fn the_task_s_target_is_the_real_key_with_the_largest_asked_feature() {
    engine::manual_seed(4);
    let batch = Batch::draw(8);
    let keys = batch.keys.to_vec();
    let queries = batch.queries.to_vec();
    let lens = batch.lens.to_vec();
    for (row, &target) in batch.targets.iter().enumerate() {
        let b = row / QUERIES;
        let q = &queries[row * 16..(row + 1) * 16];
        let feature = (0..16).max_by(|&x, &y| q[x].total_cmp(&q[y])).unwrap();
        let value = |j: usize| keys[(b * KEYS + j) * 16 + feature];
        assert!(target < lens[b] as usize, "the target is a real key");
        for j in 0..lens[b] as usize {
            assert!(value(j) <= value(target));
        }
    }
}

#[test]
fn alignment_is_one_and_chance_for_uniform_weights_and_zero_and_one_for_the_targets()
{
    engine::manual_seed(5);
    let batch = Batch::draw(16);
    let one_hot = batch.one_hot.clone();
    let perfect = alignment(&one_hot, &batch);
    assert_eq!(perfect.entropy, 0.0);
    assert_eq!(perfect.accuracy, 1.0);
    let uniform = attention::masked_softmax(
        &Tensor::zeros([16, QUERIES, KEYS]),
        &batch.mask(),
        attention::Fill::Safe,
    );
    let flat = alignment(&uniform, &batch);
    assert!((flat.entropy - 1.0).abs() < 1e-6, "{}", flat.entropy);
}

#[test]
fn a_short_run_records_every_step_and_learns_something() {
    // ReLU energies learn fastest (the table): 75 steps take the accuracy far above
    // the chance of about 1 in 9.
    let setup = Setup {
        steps: 75,
        activation: engine::Activation::Relu,
        ..Setup::default()
    };
    let h = train(&setup, 7);
    assert_eq!(h.losses.len(), 75);
    assert_eq!(h.grad_norms.len(), 75);
    assert_eq!(h.groups, ["W_q", "W_k", "v"]);
    assert_eq!(
        h.evals.iter().map(|e| e.step).collect::<Vec<_>>(),
        [0, 25, 50, 75]
    );
    let mean = |xs: &[f32]| xs.iter().sum::<f32>() / xs.len() as f32;
    let (first, last) = (mean(&h.losses[..10]), mean(&h.losses[65..]));
    assert!(last < first * 0.7, "the loss fell from {first} to {last}");
    assert!(h.evals[0].alignment.accuracy < 0.25, "{:?}", h.evals[0]);
    assert!(h.last().accuracy > 0.6, "{:?}", h.last());
    assert!(h.last().entropy < h.evals[0].alignment.entropy);
    assert_eq!(train(&setup, 7), h, "seeded: the same run twice");
}

/// The line of `data/sweep.txt` that starts with `name`.
fn recorded_line(name: &str) -> String {
    include_str!("../data/sweep.txt")
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no line {name:?} in data/sweep.txt"))
        .to_string()
}

#[test]
fn rows_of_the_recorded_tables_are_reproduced_from_scratch() {
    // One row of each table (the quick ones): the same line, digit for digit.
    for row in [&uniform_rows()[1], &gradient_rows()[4]] {
        let o = outcome(row);
        let line = chapter10::sweep::format_table("", std::slice::from_ref(&o));
        let line = line.lines().nth(2).expect("a row");
        assert_eq!(line, recorded_line(row.name), "{}", row.name);
    }
}

#[test]
fn too_small_a_learning_rate_leaves_the_weights_uniform_and_a_working_one_does_not() {
    use chapter10::uniform::Setup;
    let stalled = train(
        &Setup {
            lr: 1e-4,
            steps: 100,
            ..Setup::default()
        },
        1,
    );
    assert!(stalled.last().entropy > 0.97, "{:?}", stalled.last());
    let working = train(
        &Setup {
            activation: engine::Activation::Relu,
            steps: 100,
            ..Setup::default()
        },
        1,
    );
    assert!(working.last().entropy < 0.6, "{:?}", working.last());
    assert!(working.last().accuracy > stalled.last().accuracy + 0.4);
}

#[test]
fn v_drawn_too_large_starts_confident_and_wrong() {
    use chapter10::uniform::{Setup, VInit};
    let start = |v_init| {
        let setup = Setup {
            v_init,
            steps: 0,
            ..Setup::default()
        };
        train(&setup, 1).evals[0].alignment
    };
    let large = start(VInit::Normal(3.0));
    assert!(large.entropy < 0.3 && large.accuracy < 0.25, "{large:?}");
    let small = start(VInit::Uniform);
    assert!(small.entropy > 0.95, "{small:?}");
}

#[test]
fn sgd_at_3_with_relu_blows_up_and_clipping_or_weight_norm_keeps_it_finite() {
    let rows = gradient_rows();
    let run = |name: &str| {
        let row = rows.iter().find(|r| r.name == name).expect("a row");
        let setup = chapter10::uniform::Setup {
            steps: 40,
            ..row.setup
        };
        train(&setup, 1)
    };
    let bare = run("SGD 3, ReLU");
    assert!(
        bare.diverged_at.is_some_and(|s| s < 40),
        "{:?}",
        bare.diverged_at
    );
    for fixed in ["SGD 3, ReLU, clip to 1", "SGD 3, ReLU, weight norm"] {
        let h = run(fixed);
        assert_eq!(h.diverged_at, None, "{fixed}");
        assert!(h.losses.iter().all(|l| l.is_finite()), "{fixed}");
    }
}

#[test]
fn the_gradient_figure_s_runs_say_what_the_page_says() {
    // The page reads the figure (seed 1, 300 steps): with weight normalisation v's
    // gradient stays below 1 all the way; with clipping to 1, most steps are left alone.
    let rows = gradient_rows();
    let run = |name: &str| {
        let row = rows.iter().find(|r| r.name == name).expect("a row");
        train(&row.setup, 1)
    };
    let normalised = run("SGD 3, ReLU, weight norm");
    let v = normalised.groups.iter().position(|&g| g == "v").expect("v");
    assert!(normalised.grad_norms.iter().all(|n| n[v] < 1.0));
    let clipped = run("SGD 3, ReLU, clip to 1");
    let total = |n: &Vec<f32>| n.iter().map(|x| x * x).sum::<f32>().sqrt();
    let acted = clipped.grad_norms.iter().filter(|n| total(n) > 1.0).count();
    assert!(acted > 0 && acted < clipped.grad_norms.len() / 2, "{acted}");
}
