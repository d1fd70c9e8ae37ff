//! Reading `tests/golden/attention.json` (written by `tests/golden/attention.py`) and
//! comparing engine tensors with the PyTorch values it holds.
//!
//! A stored tensor is `{"shape": [...], "data": [...]}` in row-major order. A case names its
//! mask (`{"kind": ..}`) and fill policy (`{"policy": ..}`); [`mask_of`] and [`fill_of`] turn
//! them into the crate's [`Mask`] and [`Fill`], and panic on anything they do not know, so a
//! new kind of case cannot be skipped silently.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use attention::{Fill, Mask};
use engine::Tensor;
use engine::nn::{Module, StateDict};
use serde::Deserialize;
use serde_json::Value;

/// Absolute part of the tolerance: f32 rounding of O(1) values through a few ops.
pub const ATOL: f64 = 1e-5;
/// Relative part of the tolerance, for the few larger gradients.
pub const RTOL: f64 = 1e-4;

static GOLDEN: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../golden/attention.json"))
        .expect("attention.json is valid JSON")
});

/// The whole golden file.
pub fn golden() -> &'static Value {
    &GOLDEN
}

/// The cases of one family (a top-level key of the file).
#[track_caller]
pub fn family(name: &str) -> &'static [Value] {
    let cases = GOLDEN[name]
        .as_array()
        .unwrap_or_else(|| panic!("attention.json has no case family {name:?}"));
    assert!(!cases.is_empty(), "family {name:?} has no cases");
    cases
}

/// The name of a case.
#[track_caller]
pub fn name(case: &Value) -> &str {
    case["name"].as_str().expect("every case has a name")
}

/// A stored tensor: shape and float64 values.
#[derive(Clone, Debug, Deserialize)]
pub struct Stored {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

#[track_caller]
pub fn stored(value: &Value) -> Stored {
    let s: Stored = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("not a stored tensor ({e}): {value}"));
    assert_eq!(
        s.data.len(),
        s.shape.iter().product::<usize>(),
        "stored tensor: data does not fill its shape"
    );
    s
}

/// A stored tensor as an engine tensor (rounded to f32; inputs are f32-exact).
#[track_caller]
pub fn tensor(value: &Value) -> Tensor {
    let s = stored(value);
    Tensor::from_vec(s.data.iter().map(|&v| v as f32).collect(), &s.shape)
}

/// `case[field][key]` as a tensor.
#[track_caller]
pub fn field(case: &Value, field: &str, key: &str) -> Tensor {
    let v = &case[field][key];
    assert!(
        !v.is_null(),
        "case {:?} has no {field}.{key}",
        case["name"].as_str().unwrap_or("?")
    );
    tensor(v)
}

/// The keys of the object `case[field]`, sorted.
#[track_caller]
pub fn keys(case: &Value, field: &str) -> BTreeSet<String> {
    case[field]
        .as_object()
        .unwrap_or_else(|| panic!("case {:?} has no object {field:?}", case["name"]))
        .keys()
        .cloned()
        .collect()
}

/// The inputs of a case, each a fresh leaf that requires a gradient.
pub fn inputs(case: &Value) -> BTreeMap<String, Tensor> {
    keys(case, "inputs")
        .into_iter()
        .map(|k| {
            let t = field(case, "inputs", &k).requires_grad_();
            (k, t)
        })
        .collect()
}

/// The mask a case describes, for attention scores of shape `scores` as the module
/// documents them (`[B, Q, K]`; `[B, 1, K]` for the one-query modules).
///
/// How the script's kinds map onto the constructors, following what
/// `tests/golden/attention.py` computed (`keep_of`, `mask_spec`):
/// - `none` → [`Mask::none`];
/// - `valid_lens` → [`Mask::valid_lens`] (`[B]` or `[B, Q]`, as the script's d2l code);
/// - `keep` with the rank of the scores (`[B, Q, K]`, `[B, 1, K]`) → [`Mask::keep`]: the
///   script broadcast it against the scores as it is;
/// - `keep` of `[B, K]` for a one-query module (scores `[B, 1, K]`) → [`Mask::key_padding`]:
///   the script applied it with `masked_fill` to that module's `[B, K]` scores, one row per
///   example;
/// - `causal` with `offset` → [`Mask::causal_with_offset`]: the script let query `q` see
///   keys `k <= q + offset`.
///
/// Any other shape or kind panics, so a new case cannot be read in a way nobody checked.
#[track_caller]
pub fn mask_of(case: &Value, scores: &[usize]) -> Mask {
    let m = &case["mask"];
    let label = case["name"].as_str().unwrap_or("?");
    match m["kind"].as_str() {
        Some("none") => Mask::none(),
        Some("valid_lens") => Mask::valid_lens(&tensor(&m["lens"])),
        Some("keep") => {
            let keep = tensor(&m["keep"]);
            let rank = scores.len();
            if keep.rank() == rank {
                Mask::keep(&keep)
            } else if rank == 3
                && scores[1] == 1
                && keep.shape() == [scores[0], scores[2]]
            {
                Mask::key_padding(&keep)
            } else {
                panic!(
                    "case {label:?}: a keep mask of shape {:?} for scores {scores:?} has no mapping",
                    keep.shape()
                )
            }
        }
        Some("causal") => Mask::causal_with_offset(
            m["offset"].as_u64().expect("a causal mask has an offset") as usize,
        ),
        other => panic!("case {label:?}: unknown mask kind {other:?}"),
    }
}

/// The fill policy a case asks for; `None` means the module's default (which is
/// [`Fill::Safe`]: the reference for "default" is the safe softmax).
#[track_caller]
pub fn fill_of(case: &Value) -> Option<Fill> {
    let f = &case["fill"];
    match f["policy"].as_str() {
        Some("default") => None,
        Some("safe") => Some(Fill::Safe),
        Some("d2l") => Some(Fill::D2l),
        Some("constant") => Some(Fill::Constant(
            f["value"].as_f64().expect("a constant fill has a value") as f32,
        )),
        other => panic!("case {:?}: unknown fill policy {other:?}", case["name"]),
    }
}

/// Every parameter a case stores, under its PyTorch name, as fresh tensors (the module
/// built from them with `from_state_dict` owns them as its parameters).
#[track_caller]
pub fn state(case: &Value) -> StateDict {
    keys(case, "params")
        .into_iter()
        .map(|n| {
            let t = field(case, "params", &n);
            (n, t)
        })
        .collect()
}

/// The `state_dict` a case stores under PyTorch's own names (`state_dict()` keys of the
/// reference module, which may differ from the Rust module's names), as fresh tensors.
#[track_caller]
pub fn state_dict(case: &Value) -> StateDict {
    keys(case, "state_dict")
        .into_iter()
        .map(|n| {
            let t = field(case, "state_dict", &n);
            (n, t)
        })
        .collect()
}

/// The scalar whose gradients the case stores: `sum(output * upstream.output)` plus
/// `sum(weights * upstream.weights)` when the case has an upstream for the weights.
#[track_caller]
pub fn loss(case: &Value, output: &Tensor, weights: Option<&Tensor>) -> Tensor {
    let mut loss = (output * &field(case, "upstream", "output")).sum();
    if let Some(w) = weights {
        loss = loss + (w * &field(case, "upstream", "weights")).sum();
    } else {
        assert!(
            case["upstream"].get("weights").is_none(),
            "case {:?} has an upstream for the weights but the test ignores it",
            case["name"]
        );
    }
    loss
}

/// Collects mismatches so that one run shows every wrong tensor, not only the first.
#[derive(Default)]
pub struct Report {
    failures: Vec<String>,
    checked: usize,
}

impl Report {
    /// Compares `actual` with a stored tensor: same shape, and every element within
    /// `ATOL + RTOL · |expected|`.
    pub fn check(&mut self, what: &str, actual: &Tensor, expected: &Value) {
        let expected = stored(expected);
        self.check_values(what, actual, &expected.shape, &expected.data);
    }

    /// Like [`check`](Self::check) against an engine tensor holding the expected values.
    pub fn check_tensor(&mut self, what: &str, actual: &Tensor, expected: &Tensor) {
        let data: Vec<f64> =
            expected.to_vec().iter().map(|&v| f64::from(v)).collect();
        self.check_values(what, actual, expected.shape(), &data);
    }

    fn check_values(
        &mut self,
        what: &str,
        actual: &Tensor,
        shape: &[usize],
        expected: &[f64],
    ) {
        self.checked += 1;
        if actual.shape() != shape {
            self.failures.push(format!(
                "{what}: shape {:?}, PyTorch {shape:?}",
                actual.shape()
            ));
            return;
        }
        let mut worst: Option<(usize, f32, f64, f64)> = None;
        let mut bad = 0;
        for (i, (&a, &e)) in actual.to_vec().iter().zip(expected).enumerate() {
            let err = (f64::from(a) - e).abs();
            if err.is_nan() || err > ATOL + RTOL * e.abs() {
                bad += 1;
                let excess = if err.is_nan() { f64::INFINITY } else { err };
                if worst.is_none_or(|w| excess > w.3) {
                    worst = Some((i, a, e, excess));
                }
            }
        }
        if let Some((i, a, e, err)) = worst {
            self.failures.push(format!(
                "{what}: {bad} of {} elements differ; worst [{i}]: engine {a}, PyTorch {e} (difference {err:e})",
                expected.len()
            ));
        }
    }

    /// Records a failure that is not a tensor comparison.
    pub fn fail(&mut self, message: String) {
        self.failures.push(message);
    }

    /// Compares the gradient of every tensor in `named` with `case.grads`, and checks that
    /// the case stores a gradient for exactly these tensors (every input and parameter).
    pub fn check_grads(
        &mut self,
        case: &Value,
        grads_field: &str,
        named: &[(String, Tensor)],
    ) {
        let label = name(case);
        let ours: BTreeSet<String> = named.iter().map(|(n, _)| n.clone()).collect();
        let theirs = keys(case, grads_field);
        if ours != theirs {
            self.fail(format!(
                "{label}: gradients for {ours:?} but PyTorch stores {theirs:?}"
            ));
        }
        for (n, t) in named {
            let Some(expected) = case[grads_field].get(n) else {
                continue;
            };
            match t.grad() {
                Ok(g) => self.check(&format!("{label}: grad of {n}"), &g, expected),
                Err(_) => self.fail(format!("{label}: {n} received no gradient")),
            }
        }
    }

    /// Checks that a module's parameters carry the names and values the case stores
    /// (PyTorch's `named_parameters()` names).
    pub fn check_params(&mut self, case: &Value, module: &impl Module) {
        let label = name(case);
        let ours: BTreeSet<String> = module
            .named_parameters()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let theirs = keys(case, "params");
        if ours != theirs {
            self.fail(format!(
                "{label}: the module's parameters are {ours:?} but PyTorch's are {theirs:?}"
            ));
        }
        for (n, p) in module.named_parameters() {
            if let Some(expected) = case["params"].get(&n) {
                self.check(&format!("{label}: parameter {n}"), &p, expected);
            }
        }
    }

    /// Panics with every mismatch found, if any; `at_least` guards against a loop
    /// that compared nothing.
    #[track_caller]
    pub fn finish(self, at_least: usize) {
        assert!(
            self.failures.is_empty(),
            "{} mismatch(es) with PyTorch:\n  {}",
            self.failures.len(),
            self.failures.join("\n  ")
        );
        assert!(
            self.checked >= at_least,
            "only {} comparisons made, expected at least {at_least}",
            self.checked
        );
    }
}

/// Every input and every parameter of a module, named as the golden file names them.
pub fn differentiable(
    inputs: &BTreeMap<String, Tensor>,
    module: Option<&dyn ModuleParams>,
) -> Vec<(String, Tensor)> {
    let mut all: Vec<(String, Tensor)> =
        inputs.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    if let Some(m) = module {
        all.extend(m.params());
    }
    all
}

/// Object-safe access to a module's named parameters.
pub trait ModuleParams {
    fn params(&self) -> Vec<(String, Tensor)>;
}

impl<M: Module> ModuleParams for M {
    fn params(&self) -> Vec<(String, Tensor)> {
        self.named_parameters()
    }
}

/// The message of the panic `f` raises (a test fails when `f` returns instead).
#[track_caller]
pub fn panic_message(f: impl FnOnce()) -> String {
    let payload = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
