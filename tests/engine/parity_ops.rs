//! Every op against PyTorch: outputs and input gradients on the golden cases of
//! `tests/golden/ops.json` (written by `tests/golden/ops.py`).
//!
//! Each case names an op, its inputs (values, and whether each one is differentiable), the
//! op's arguments, an upstream gradient, and PyTorch's output and input gradients in float64.
//! The test builds the same expression here, runs `backward_with(upstream)`, and compares.
//!
//! Every op of the case file must be claimed by exactly one test below (see
//! `golden_tests!`), and every claimed op must have at least one case, so a case added to
//! the JSON cannot be silently skipped and an op cannot lose its cases unnoticed.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use engine::{GeluApprox, Reduction, Tensor};
use serde::Deserialize;
use serde_json::Value;

/// Absolute tolerance. The golden values are float64; the engine computes in f32 from the
/// same (f32-exact) inputs, so the only differences are f32 rounding: a few ulps per
/// operation, accumulated over at most a few dozen terms in sums and matmuls.
const ATOL: f64 = 1e-5;
/// Tolerance relative to the expected value.
const RTOL: f64 = 1e-4;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Golden {
    cases: Vec<Case>,
    generator: String,
    version: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    op: String,
    args: serde_json::Map<String, Value>,
    inputs: Vec<Input>,
    upstream: Data,
    output: Data,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    name: String,
    shape: Vec<usize>,
    data: Vec<f64>,
    requires_grad: bool,
    grad: Option<Data>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Data {
    shape: Vec<usize>,
    data: Vec<f64>,
}

impl Data {
    fn tensor(&self) -> Tensor {
        Tensor::from_vec(self.data.iter().map(|&v| v as f32).collect(), &self.shape)
    }
}

fn golden() -> &'static Golden {
    static GOLDEN: OnceLock<Golden> = OnceLock::new();
    GOLDEN.get_or_init(|| {
        let golden: Golden = serde_json::from_str(include_str!("../golden/ops.json")).expect(
            "tests/golden/ops.json does not parse; regenerate it with python3 tests/golden/ops.py",
        );
        assert_eq!(golden.version, 1, "unknown golden file version");
        assert_eq!(golden.generator, "tests/golden/ops.py");
        golden
    })
}

/// The leaf tensors of one case, looked up by the names the JSON gives them.
struct Leaves<'a> {
    case: &'a Case,
    tensors: Vec<Tensor>,
}

impl Leaves<'_> {
    fn get(&self, name: &str) -> Result<&Tensor, String> {
        self.case
            .inputs
            .iter()
            .position(|i| i.name == name)
            .map(|i| &self.tensors[i])
            .ok_or_else(|| format!("the case has no input named {name:?}"))
    }

    fn all(&self) -> &[Tensor] {
        &self.tensors
    }
}

// ---- reading op arguments -----------------------------------------------------------------

fn arg<'a>(case: &'a Case, key: &str) -> Result<&'a Value, String> {
    case.args
        .get(key)
        .ok_or_else(|| format!("missing argument {key:?}"))
}

fn arg_i64(case: &Case, key: &str) -> Result<i64, String> {
    arg(case, key)?
        .as_i64()
        .ok_or_else(|| format!("argument {key:?} is not an integer"))
}

fn arg_usize(case: &Case, key: &str) -> Result<usize, String> {
    arg(case, key)?
        .as_u64()
        .map(|v| v as usize)
        .ok_or_else(|| format!("argument {key:?} is not a non-negative integer"))
}

fn arg_f32(case: &Case, key: &str) -> Result<f32, String> {
    arg(case, key)?
        .as_f64()
        .map(|v| v as f32)
        .ok_or_else(|| format!("argument {key:?} is not a number"))
}

fn arg_bool(case: &Case, key: &str) -> Result<bool, String> {
    arg(case, key)?
        .as_bool()
        .ok_or_else(|| format!("argument {key:?} is not a boolean"))
}

fn arg_str<'a>(case: &'a Case, key: &str) -> Result<&'a str, String> {
    arg(case, key)?
        .as_str()
        .ok_or_else(|| format!("argument {key:?} is not a string"))
}

fn arg_i64s(case: &Case, key: &str) -> Result<Vec<i64>, String> {
    arg(case, key)?
        .as_array()
        .and_then(|a| a.iter().map(Value::as_i64).collect())
        .ok_or_else(|| format!("argument {key:?} is not a list of integers"))
}

fn reduction(case: &Case) -> Result<Reduction, String> {
    match arg_str(case, "reduction")? {
        "mean" => Ok(Reduction::Mean),
        "sum" => Ok(Reduction::Sum),
        "none" => Ok(Reduction::None),
        other => Err(format!("unknown reduction {other:?}")),
    }
}

// ---- building each op ---------------------------------------------------------------------

/// The engine's version of the case's expression. Unknown ops are an error, never a skip.
fn build(case: &Case, x: &Leaves) -> Result<Tensor, String> {
    let dim = || arg_i64(case, "dim");
    let keepdim = || arg_bool(case, "keepdim");
    // `scalar ∘ x` or `x ∘ scalar`, as the case says.
    let scalar_op = |left: fn(f32, &Tensor) -> Tensor,
                     right: fn(&Tensor, f32) -> Tensor|
     -> Result<Tensor, String> {
        let (t, s) = (x.get("x")?, arg_f32(case, "scalar")?);
        Ok(if arg_bool(case, "scalar_first")? {
            left(s, t)
        } else {
            right(t, s)
        })
    };
    let out = match case.op.as_str() {
        // The operators are the public spelling; each calls the method of the same name.
        "add" => x.get("a")? + x.get("b")?,
        "sub" => x.get("a")? - x.get("b")?,
        "mul" => x.get("a")? * x.get("b")?,
        "div" => x.get("a")? / x.get("b")?,
        "mul_self" => x.get("x")? * x.get("x")?,
        "add_scalar" => scalar_op(|s, t| s + t, |t, s| t + s)?,
        "sub_scalar" => scalar_op(|s, t| s - t, |t, s| t - s)?,
        "mul_scalar" => scalar_op(|s, t| s * t, |t, s| t * s)?,
        "div_scalar" => scalar_op(|s, t| s / t, |t, s| t / s)?,

        "neg" => -x.get("x")?,
        "exp" => x.get("x")?.exp(),
        "log" => x.get("x")?.log(),
        "tanh" => x.get("x")?.tanh(),
        "sigmoid" => x.get("x")?.sigmoid(),
        "relu" => x.get("x")?.relu(),
        "sqrt" => x.get("x")?.sqrt(),
        "powf" => x.get("x")?.powf(arg_f32(case, "p")?),
        "gelu" => {
            let approx = match arg_str(case, "approximate")? {
                "none" => GeluApprox::Erf,
                "tanh" => GeluApprox::Tanh,
                other => return Err(format!("unknown gelu approximation {other:?}")),
            };
            x.get("x")?.gelu(approx)
        }

        "sum" => x.get("x")?.sum(),
        "sum_dim" => {
            if keepdim()? {
                x.get("x")?.sum_dim_keepdim(dim()?)
            } else {
                x.get("x")?.sum_dim(dim()?)
            }
        }
        "sum_dims" => {
            if keepdim()? {
                x.get("x")?.sum_dims_keepdim(&arg_i64s(case, "dims")?)
            } else {
                x.get("x")?.sum_dims(&arg_i64s(case, "dims")?)
            }
        }
        "mean" => x.get("x")?.mean(),
        "mean_dim" => {
            if keepdim()? {
                x.get("x")?.mean_dim_keepdim(dim()?)
            } else {
                x.get("x")?.mean_dim(dim()?)
            }
        }
        "max" => x.get("x")?.max(),
        "max_dim" => {
            if keepdim()? {
                x.get("x")?.max_dim_keepdim(dim()?)
            } else {
                x.get("x")?.max_dim(dim()?)
            }
        }

        "softmax" => x.get("x")?.softmax(dim()?),
        "log_softmax" => x.get("x")?.log_softmax(dim()?),

        "matmul" => x.get("a")?.matmul(x.get("b")?),
        "bmm" => x.get("a")?.bmm(x.get("b")?),

        "reshape" => x.get("x")?.reshape(arg_i64s(case, "shape")?),
        "transpose" => x
            .get("x")?
            .transpose(arg_i64(case, "dim0")?, arg_i64(case, "dim1")?),
        "permute" => x.get("x")?.permute(arg_i64s(case, "dims")?),
        "unsqueeze" => x.get("x")?.unsqueeze(dim()?),
        "squeeze" => x.get("x")?.squeeze(dim()?),
        "broadcast_to" => {
            let shape: Vec<usize> = arg_i64s(case, "shape")?
                .into_iter()
                .map(|s| s as usize)
                .collect();
            x.get("x")?.broadcast_to(&shape)
        }
        "expand" => x.get("x")?.expand(arg_i64s(case, "shape")?),
        "narrow" => x.get("x")?.narrow(
            dim()?,
            arg_usize(case, "start")?,
            arg_usize(case, "len")?,
        ),
        "slice" => x
            .get("x")?
            .slice(dim()?, arg_usize(case, "start")?..arg_usize(case, "end")?),
        "concat" => Tensor::concat(x.all(), dim()?),
        "stack" => Tensor::stack(x.all(), dim()?),

        "index_select" => x.get("x")?.index_select(dim()?, x.get("index")?),
        "embedding" => Tensor::embedding(x.get("ids")?, x.get("weight")?),
        "masked_fill" => x
            .get("x")?
            .masked_fill(x.get("mask")?, arg_f32(case, "value")?),
        "where_cond" => x.get("cond")?.where_cond(x.get("a")?, x.get("b")?),

        "cross_entropy" => x
            .get("logits")?
            .cross_entropy(x.get("targets")?, reduction(case)?),
        "mse_loss" => x.get("input")?.mse_loss(x.get("target")?, reduction(case)?),

        "abs" => x.get("x")?.abs(),
        "clamp" => {
            let bound = |key| -> Result<Option<f32>, String> {
                let v = arg(case, key)?;
                if v.is_null() {
                    Ok(None)
                } else {
                    arg_f32(case, key).map(Some)
                }
            };
            match (bound("min")?, bound("max")?) {
                (Some(lo), Some(hi)) => x.get("x")?.clamp(lo, hi),
                (Some(lo), None) => x.get("x")?.clamp_min(lo),
                (None, Some(hi)) => x.get("x")?.clamp_max(hi),
                (None, None) => return Err("clamp needs a bound".into()),
            }
        }
        "maximum" => x.get("a")?.maximum(x.get("b")?),
        "minimum" => x.get("a")?.minimum(x.get("b")?),
        "min" => x.get("x")?.min(),
        "min_dim" => {
            if keepdim()? {
                x.get("x")?.min_dim_keepdim(dim()?)
            } else {
                x.get("x")?.min_dim(dim()?)
            }
        }
        "argmax" | "argmin" => {
            let t = x.get("x")?;
            match (case.op.as_str(), keepdim()?) {
                ("argmax", false) => t.argmax(dim()?),
                ("argmax", true) => t.argmax_keepdim(dim()?),
                ("argmin", false) => t.argmin(dim()?),
                _ => t.argmin_keepdim(dim()?),
            }
        }
        "extreme_with_indices_values" | "extreme_with_indices_indices" => {
            let t = x.get("x")?;
            let (values, indices) = match (arg_str(case, "which")?, keepdim()?) {
                ("max", false) => t.max_dim_with_indices(dim()?),
                ("max", true) => t.max_dim_keepdim_with_indices(dim()?),
                ("min", false) => t.min_dim_with_indices(dim()?),
                ("min", true) => t.min_dim_keepdim_with_indices(dim()?),
                (other, _) => return Err(format!("unknown extreme {other:?}")),
            };
            if case.op.ends_with("values") {
                values
            } else {
                indices
            }
        }
        "topk_values" | "topk_indices" => {
            let (t, k) = (x.get("x")?, arg_usize(case, "k")?);
            let (values, indices) = if arg_bool(case, "largest")? {
                t.topk(k, dim()?)
            } else {
                t.topk_smallest(k, dim()?)
            };
            if case.op == "topk_values" {
                values
            } else {
                indices
            }
        }
        "gather" => x.get("x")?.gather(dim()?, x.get("index")?),
        "flatten" => x
            .get("x")?
            .flatten(arg_i64(case, "start_dim")?, arg_i64(case, "end_dim")?),
        "cumsum" => x.get("x")?.cumsum(dim()?),
        "tril" => x.get("x")?.tril(arg_i64(case, "diagonal")?),
        "triu" => x.get("x")?.triu(arg_i64(case, "diagonal")?),
        "logsumexp" => {
            if keepdim()? {
                x.get("x")?.logsumexp_keepdim(dim()?)
            } else {
                x.get("x")?.logsumexp(dim()?)
            }
        }
        "full_like" => x.get("x")?.full_like(arg_f32(case, "value")?),

        other => return Err(format!("no test builds op {other:?}")),
    };
    Ok(out)
}

/// Ops whose result is an index or a constant: their cases have no differentiable input.
const NOT_DIFFERENTIABLE: &[&str] = &[
    "argmax",
    "argmin",
    "extreme_with_indices_indices",
    "topk_indices",
    "full_like",
];

// ---- comparing ----------------------------------------------------------------------------

/// `Err` describing the worst element when `got` is not within tolerance of `want`.
fn compare(what: &str, got: &Tensor, want: &Data) -> Result<(), String> {
    if got.shape() != want.shape.as_slice() {
        return Err(format!(
            "{what}: shape {:?}, PyTorch gives {:?}",
            got.shape(),
            want.shape
        ));
    }
    let got = got.to_vec();
    let mut worst: Option<(f64, usize)> = None;
    for (i, (&g, &w)) in got.iter().zip(&want.data).enumerate() {
        let g = f64::from(g);
        let excess = (g - w).abs() / (ATOL + RTOL * w.abs());
        // A NaN is as far off as it gets.
        let excess = if excess.is_nan() {
            f64::INFINITY
        } else {
            excess
        };
        if excess > 1.0 && worst.is_none_or(|(e, _)| excess > e) {
            worst = Some((excess, i));
        }
    }
    match worst {
        None => Ok(()),
        Some((_, i)) => Err(format!(
            "{what}: element {i} is {}, PyTorch gives {} (tolerance {ATOL:e} + {RTOL:e}·|expected|)\n    engine:  {:?}\n    pytorch: {:?}",
            got[i], want.data[i], got, want.data
        )),
    }
}

/// Builds, differentiates and compares one case.
fn run_case(case: &Case) -> Result<(), String> {
    let tensors: Vec<Tensor> = case
        .inputs
        .iter()
        .map(|i| {
            let t = Tensor::from_vec(
                i.data.iter().map(|&v| v as f32).collect(),
                &i.shape,
            );
            if i.requires_grad {
                t.requires_grad_()
            } else {
                t
            }
        })
        .collect();
    let leaves = Leaves { case, tensors };
    let out = build(case, &leaves)?;
    compare("output", &out, &case.output)?;
    if !case.inputs.iter().any(|i| i.requires_grad) {
        // Only an op whose result is an index or a constant may have nothing to
        // differentiate; its result must then not require a gradient either.
        if !NOT_DIFFERENTIABLE.contains(&case.op.as_str()) {
            return Err("the case has no differentiable input".into());
        }
        if out.requires_grad() {
            return Err("the result requires a gradient".into());
        }
        return Ok(());
    }
    out.backward_with(&case.upstream.tensor());
    for (input, leaf) in case.inputs.iter().zip(&leaves.tensors) {
        match (&input.grad, leaf.grad().ok()) {
            (Some(want), Some(got)) => {
                compare(&format!("gradient of {}", input.name), &got, want)?
            }
            (Some(_), None) => {
                return Err(format!("input {} received no gradient", input.name));
            }
            (None, Some(_)) => {
                return Err(format!(
                    "input {} is not differentiable but received a gradient",
                    input.name
                ));
            }
            (None, None) => {}
        }
    }
    Ok(())
}

/// Runs every case of the given ops, reporting all failures at once. Each op must have at
/// least one case.
fn check_ops(ops: &[&str]) {
    let mut failures = Vec::new();
    for op in ops {
        let cases: Vec<&Case> =
            golden().cases.iter().filter(|c| c.op == *op).collect();
        assert!(
            !cases.is_empty(),
            "the golden file has no case for op {op:?}"
        );
        for case in cases {
            if let Err(e) = run_case(case) {
                failures.push(format!("{} ({}): {e}", case.name, case.op));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden case(s) disagree with PyTorch:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

/// One test per op family, each claiming the JSON `op` names it checks. `CLAIMED` lists
/// them all, for the test that no case goes unchecked.
macro_rules! golden_tests {
    ($($test:ident => [$($op:literal),+ $(,)?];)+) => {
        const CLAIMED: &[&str] = &[$($($op,)+)+];
        $(
            #[test]
            fn $test() {
                check_ops(&[$($op),+]);
            }
        )+
    };
}

golden_tests! {
    add_matches_pytorch => ["add", "add_scalar"];
    sub_matches_pytorch => ["sub", "sub_scalar"];
    mul_matches_pytorch => ["mul", "mul_scalar", "mul_self"];
    div_matches_pytorch => ["div", "div_scalar"];
    neg_matches_pytorch => ["neg"];
    exp_matches_pytorch => ["exp"];
    log_matches_pytorch => ["log"];
    tanh_matches_pytorch => ["tanh"];
    sigmoid_matches_pytorch => ["sigmoid"];
    relu_matches_pytorch => ["relu"];
    gelu_matches_pytorch => ["gelu"];
    sqrt_matches_pytorch => ["sqrt"];
    powf_matches_pytorch => ["powf"];
    sum_matches_pytorch => ["sum", "sum_dim", "sum_dims"];
    mean_matches_pytorch => ["mean", "mean_dim"];
    max_matches_pytorch => ["max", "max_dim"];
    softmax_matches_pytorch => ["softmax"];
    log_softmax_matches_pytorch => ["log_softmax"];
    matmul_matches_pytorch => ["matmul", "bmm"];
    reshape_matches_pytorch => ["reshape", "unsqueeze", "squeeze"];
    transpose_and_permute_match_pytorch => ["transpose", "permute"];
    broadcast_to_and_expand_match_pytorch => ["broadcast_to", "expand"];
    concat_and_stack_match_pytorch => ["concat", "stack"];
    narrow_and_slice_match_pytorch => ["narrow", "slice"];
    index_select_matches_pytorch => ["index_select"];
    embedding_matches_pytorch => ["embedding"];
    masked_fill_matches_pytorch => ["masked_fill"];
    where_cond_matches_pytorch => ["where_cond"];
    cross_entropy_matches_pytorch => ["cross_entropy"];
    mse_loss_matches_pytorch => ["mse_loss"];
    abs_matches_pytorch => ["abs"];
    clamp_matches_pytorch => ["clamp"];
    maximum_and_minimum_match_pytorch => ["maximum", "minimum"];
    min_matches_pytorch => ["min", "min_dim"];
    argmax_and_argmin_match_pytorch => ["argmax", "argmin"];
    max_and_min_with_indices_match_pytorch => ["extreme_with_indices_values", "extreme_with_indices_indices"];
    topk_matches_pytorch => ["topk_values", "topk_indices"];
    gather_matches_pytorch => ["gather"];
    flatten_matches_pytorch => ["flatten"];
    cumsum_matches_pytorch => ["cumsum"];
    tril_and_triu_match_pytorch => ["tril", "triu"];
    logsumexp_matches_pytorch => ["logsumexp"];
    full_like_matches_pytorch => ["full_like"];
}

#[test]
fn every_golden_case_is_checked_by_some_test() {
    let unclaimed: BTreeSet<&str> = golden()
        .cases
        .iter()
        .map(|c| c.op.as_str())
        .filter(|op| !CLAIMED.contains(op))
        .collect();
    assert!(
        unclaimed.is_empty(),
        "ops in tests/golden/ops.json that no test checks: {unclaimed:?}; add them to golden_tests! and to build()"
    );
    let mut seen = BTreeSet::new();
    for op in CLAIMED {
        assert!(seen.insert(op), "op {op:?} is claimed by two tests");
    }
}

#[test]
fn golden_case_names_are_unique_and_inputs_are_consistent() {
    let mut names = BTreeSet::new();
    for case in &golden().cases {
        assert!(names.insert(&case.name), "duplicate case {}", case.name);
        for input in &case.inputs {
            assert_eq!(
                input.data.len(),
                input.shape.iter().product::<usize>(),
                "{}: input {} has the wrong number of values",
                case.name,
                input.name
            );
            assert_eq!(
                input.requires_grad,
                input.grad.is_some(),
                "{}: input {} must have a gradient exactly when it is differentiable",
                case.name,
                input.name
            );
        }
        assert_eq!(case.upstream.shape, case.output.shape, "{}", case.name);
    }
}

/// The comparison itself must be able to fail: a value off by more than the tolerance, a
/// wrong shape and a NaN are all reported.
#[test]
fn comparison_rejects_values_outside_the_tolerance() {
    let want = Data {
        shape: vec![2],
        data: vec![1.0, -2.0],
    };
    assert!(compare("t", &Tensor::from_vec(vec![1.0, -2.0], [2]), &want).is_ok());
    assert!(
        compare("t", &Tensor::from_vec(vec![1.00005, -2.0001], [2]), &want).is_ok()
    );
    assert!(compare("t", &Tensor::from_vec(vec![1.0, -2.001], [2]), &want).is_err());
    assert!(
        compare("t", &Tensor::from_vec(vec![1.0, f32::NAN], [2]), &want).is_err()
    );
    assert!(compare("t", &Tensor::from_vec(vec![1.0, -2.0], [1, 2]), &want).is_err());
}

/// A case whose op no test builds is an error, not a silent pass.
#[test]
fn an_unknown_op_is_an_error() {
    let case = Case {
        name: "made_up".into(),
        op: "frobnicate".into(),
        args: serde_json::Map::new(),
        inputs: vec![],
        upstream: Data {
            shape: vec![],
            data: vec![1.0],
        },
        output: Data {
            shape: vec![],
            data: vec![0.0],
        },
    };
    let err = run_case(&case).unwrap_err();
    assert!(err.contains("frobnicate"), "{err}");
}
