//! The memory budget is checked for every allocation of tensor data, by every op family,
//! and inside `backward()` a refusal names the forward op whose derivative needed the
//! memory.
//!
//! Each case builds its inputs first, then sets this thread's budget to what is in use plus
//! a little headroom (enough for the 4-byte scalars an op like `&x * 2.0` makes), and checks
//! that the op is refused with a message naming it and its result's shape, at the caller's
//! line.

use crate::common;

use common::panic_at;
use engine::{Reduction, Tensor, memory};

/// Room for a few scalars and small index lists, far less than any result below (≥ 1 KiB).
const HEADROOM: usize = 64;

/// Sets the budget to the live bytes plus [`HEADROOM`] and removes it when dropped.
struct TightBudget;

impl TightBudget {
    fn new() -> TightBudget {
        memory::set_budget(Some(memory::live_bytes() + HEADROOM));
        TightBudget
    }
}

impl Drop for TightBudget {
    fn drop(&mut self) {
        memory::set_budget(None);
    }
}

/// Runs `op` under a tight budget and returns the panic message, checking it was raised in
/// this file at `line` or just below it (where a formatted macro call puts its arguments),
/// not inside the engine.
#[track_caller]
fn refused(line: u32, op: impl FnOnce() -> Tensor) -> String {
    let _budget = TightBudget::new();
    let raised = panic_at(|| drop(op()));
    assert!(
        raised.file == file!() && (line..=line + 4).contains(&raised.line),
        "reported at {}:{}, not at the caller's line {line}: {}",
        raised.file,
        raised.line,
        raised.message
    );
    raised.message
}

#[track_caller]
fn assert_names(message: &str, op: &str, shape: &[usize]) {
    let expected = format!("{op}: the result {shape:?} needs ");
    assert!(
        message.starts_with(&expected),
        "expected a message starting with {expected:?}, found:\n{message}"
    );
    assert!(
        message.contains("but this thread's memory budget is"),
        "{message}"
    );
}

macro_rules! refuses {
    ($op:literal, $shape:expr, $call:expr) => {{
        let line = line!();
        let message = refused(line, || $call);
        assert_names(&message, $op, &$shape);
    }};
}

fn x() -> Tensor {
    Tensor::from_vec(
        (0..512).map(|i| (i as f32 * 0.37).sin()).collect(),
        [16, 32],
    )
}

#[test]
fn creation_functions_are_refused() {
    let like = x();
    let values = vec![1.0; 512];
    refuses!("zeros", [16, 32], Tensor::zeros([16, 32]));
    refuses!("ones", [16, 32], Tensor::ones([16, 32]));
    refuses!("full", [16, 32], Tensor::full([16, 32], 2.0));
    refuses!("zeros_like", [16, 32], like.zeros_like());
    refuses!("ones_like", [16, 32], like.ones_like());
    refuses!("full_like", [16, 32], like.full_like(2.0));
    refuses!("arange", [512], Tensor::arange(512));
    refuses!("arange_step", [512], Tensor::arange_step(0.0, 512.0, 1.0));
    refuses!(
        "from_vec",
        [16, 32],
        Tensor::from_vec(values.clone(), [16, 32])
    );
    refuses!("rand", [16, 32], Tensor::rand([16, 32], 0.0, 1.0));
    refuses!("normal", [16, 32], Tensor::randn([16, 32]));
}

#[test]
fn elementwise_ops_are_refused() {
    let (a, b) = (x(), x());
    refuses!("add", [16, 32], &a + &b);
    refuses!("mul", [16, 32], &a * 2.0);
    refuses!("maximum", [16, 32], a.maximum(&b));
    refuses!("minimum", [16, 32], a.minimum(&b));
    refuses!("gt", [16, 32], a.gt(&b));
    refuses!("exp", [16, 32], a.exp());
    refuses!("neg", [16, 32], -&a);
    refuses!("abs", [16, 32], a.abs());
    refuses!("clamp", [16, 32], a.clamp(-0.5, 0.5));
    refuses!("relu", [16, 32], a.relu());
    refuses!("dropout", [16, 32], a.dropout(0.5, true));
}

#[test]
fn reductions_and_softmax_are_refused() {
    let a = x().reshape([2, 8, 32]);
    refuses!("sum", [2, 32], a.sum_dim(1));
    refuses!("max", [2, 32], a.max_dim(1));
    refuses!("min", [2, 32], a.min_dim(1));
    refuses!("argmax", [2, 32], a.argmax(1));
    refuses!("softmax", [2, 8, 32], a.softmax(-1));
    refuses!("log_softmax", [2, 8, 32], a.log_softmax(-1));
    refuses!("logsumexp", [2, 8, 32], a.logsumexp(0));
    refuses!("cumsum", [2, 8, 32], a.cumsum(1));
}

#[test]
fn layout_ops_are_refused_and_reshape_costs_nothing() {
    let a = x();
    refuses!("transpose", [16, 32], a.transpose(0, 1));
    refuses!("permute", [32, 16], a.permute([1, 0]));
    refuses!("narrow", [16, 30], a.narrow(1, 1, 30));
    refuses!("narrow", [8, 32], a.slice(0, 0..8));
    refuses!("concat", [32, 32], Tensor::concat(&[&a, &a], 0));
    refuses!("broadcast_to", [2, 16, 32], a.broadcast_to([2, 16, 32]));
    refuses!("tril", [16, 32], a.tril(0));
    refuses!("repeat_interleave", [32, 32], a.repeat_interleave(2, 0));
    // Reshaping, flattening and detaching share the values: nothing to refuse.
    let _budget = TightBudget::new();
    assert_eq!(a.reshape([32, 16]).shape(), &[32, 16]);
    assert_eq!(a.flatten(0, -1).shape(), &[512]);
    assert_eq!(a.detach().shape(), &[16, 32]);
}

#[test]
fn indexing_and_selection_ops_are_refused() {
    let a = x();
    let rows = Tensor::from_vec(vec![0.0, 3.0, 3.0, 1.0, 2.0, 5.0, 7.0, 9.0], [8]);
    let mask = a.gt(&Tensor::scalar(0.0));
    let index = Tensor::zeros([16, 8]);
    refuses!("index_select", [8, 32], a.index_select(0, &rows));
    refuses!("embedding", [8, 32], Tensor::embedding(&rows, &a));
    refuses!(
        "where_cond",
        [16, 32],
        mask.where_cond(&a, &Tensor::scalar(0.0))
    );
    refuses!("masked_fill", [16, 32], a.masked_fill(&mask, -1e9));
    refuses!("gather", [16, 8], a.gather(1, &index));
    refuses!("topk", [16, 8], a.topk(8, 1).0);
    let pairs = a.reshape([256, 2]);
    refuses!(
        "max_dim_with_indices",
        [256],
        pairs.max_dim_with_indices(1).0
    );
    refuses!(
        "min_dim_keepdim_with_indices",
        [256, 1],
        pairs.min_dim_keepdim_with_indices(1).1
    );
}

#[test]
fn products_and_losses_are_refused() {
    let a = x();
    let at = a.transpose(0, 1);
    let targets = Tensor::zeros([16]);
    refuses!("matmul", [16, 16], a.matmul(&at));
    let (left, right) = (a.reshape([2, 8, 32]), a.reshape([2, 32, 8]));
    refuses!("bmm", [2, 8, 8], left.bmm(&right));
    refuses!(
        "cross_entropy",
        [16, 32],
        a.cross_entropy(&targets, Reduction::Mean)
    );
    refuses!(
        "mse_loss",
        [16, 32],
        a.mse_loss(&a.detach(), Reduction::Mean)
    );
    let (q, k, w) = (
        x().reshape([1, 16, 32]),
        x().reshape([1, 16, 32]),
        Tensor::ones([32]),
    );
    refuses!("additive_scores", [1, 16, 16], q.additive_scores(&k, &w));
}

#[test]
fn a_refusal_inside_backward_names_the_forward_op_and_the_backward_line() {
    let a = x().requires_grad_();
    let loss = a.softmax(-1).sum();
    let _budget = TightBudget::new();
    let line = line!() + 1;
    let raised = panic_at(|| loss.backward());
    // The sum's derivative broadcasts the scalar gradient back to [16, 32]: that internal
    // `broadcast_to` is named second, after the op the caller wrote and the caller's line.
    let at = format!("backward() called at {}:{line}:", file!());
    let what = ": the derivative of `sum` (input shapes [16, 32]) failed\n  broadcast_to: the result [16, 32] needs ";
    assert!(
        raised.message.starts_with(&at) && raised.message.contains(what),
        "expected {at:?}…{what:?}, found:\n{}",
        raised.message
    );
}

#[test]
fn a_result_that_fills_the_budget_exactly_is_allowed_and_one_value_more_is_not() {
    let a = x();
    memory::set_budget(Some(memory::live_bytes() + 512 * 4));
    let exact =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| a.exp().numel()));
    memory::set_budget(Some(memory::live_bytes() + 512 * 4 - 1));
    let over =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| a.exp().numel()));
    memory::set_budget(None);
    assert_eq!(exact.expect("exactly the budget fits"), 512);
    assert!(over.is_err(), "one byte short is refused");
}

#[test]
fn within_the_budget_the_same_ops_run() {
    let a = x();
    memory::set_budget(Some(memory::live_bytes() + 512 * 4 + HEADROOM));
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let exp = a.exp().shape().to_vec();
        let top = a.topk(4, 1).1.shape().to_vec();
        (exp, top)
    }));
    memory::set_budget(None);
    assert_eq!(ok.expect("fits"), (vec![16, 32], vec![16, 4]));
}

#[test]
fn a_refusal_in_a_unary_derivative_names_the_op_it_differentiates() {
    let a = x().requires_grad_();
    let loss = a.relu().sum();
    // Room for the sum's gradient ([16, 32], broadcast back) but not for relu's step
    // function beside it.
    memory::set_budget(Some(memory::live_bytes() + 512 * 4 + HEADROOM));
    let raised = panic_at(|| loss.backward());
    memory::set_budget(None);
    assert!(
        raised
            .message
            .contains(": the derivative of `relu` (input shapes [16, 32]) failed\n  relu: the result [16, 32] needs "),
        "{}",
        raised.message
    );
}
