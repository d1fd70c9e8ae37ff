//! The scalar engine: a [`Value`] is one `f64` in a computation graph, with `+`, `×`,
//! `tanh` and `exp`, a topological order computed without recursion, and `backward`.

use std::cell::Cell;
use std::collections::HashSet;
use std::fmt;
use std::ops::{Add, Mul};
use std::rc::Rc;

// ANCHOR: value
/// One number in a computation graph: a cheap handle (an [`Rc`]) to a node holding
/// the number, its gradient, and the values it was computed from.
///
/// Cloning a `Value` copies the handle, not the node: `let b = &a + &a;` records the
/// *same* node twice as an input of `b`, which is exactly the case that makes
/// gradients accumulate.
#[derive(Clone)]
pub struct Value(Rc<Node>);

/// What a [`Value`] points at. The number and the edges never change after creation;
/// only the gradient does, so it alone sits in a `Cell` (a `Copy` value that can be
/// replaced through a shared reference, with no borrow to track).
struct Node {
    data: f64,
    grad: Cell<f64>,
    /// The op that made this value (`"+"`, `"×"`, `"tanh"`, …); empty for a leaf.
    op: &'static str,
    /// Each input, with the local derivative ∂(this value)/∂(input) at this point,
    /// computed in the forward pass.
    inputs: Vec<(Value, f64)>,
}
// ANCHOR_END: value

// ANCHOR: constructors
impl Value {
    /// A leaf: a number no op produced (an input, or a parameter to train).
    pub fn new(data: f64) -> Value {
        Value::from_op(data, "", Vec::new())
    }

    /// The result of an op: its value, the op's name (for pictures), and every input
    /// with the local derivative ∂result/∂input at this point. An op cannot be built
    /// without its derivative.
    pub fn from_op(data: f64, op: &'static str, inputs: Vec<(Value, f64)>) -> Value {
        Value(Rc::new(Node {
            data,
            grad: Cell::new(0.0),
            op,
            inputs,
        }))
    }
}
// ANCHOR_END: constructors

// ANCHOR: ops
impl Add for &Value {
    type Output = Value;

    /// `a + b`: ∂/∂a = 1, ∂/∂b = 1.
    fn add(self, other: &Value) -> Value {
        let inputs = vec![(self.clone(), 1.0), (other.clone(), 1.0)];
        Value::from_op(self.data() + other.data(), "+", inputs)
    }
}

impl Mul for &Value {
    type Output = Value;

    /// `a × b`: ∂/∂a = b, ∂/∂b = a.
    fn mul(self, other: &Value) -> Value {
        let inputs = vec![(self.clone(), other.data()), (other.clone(), self.data())];
        Value::from_op(self.data() * other.data(), "×", inputs)
    }
}

impl Value {
    /// `tanh(x)`, whose derivative `1 − tanh²(x)` is written with the output `t`.
    pub fn tanh(&self) -> Value {
        let t = self.data().tanh();
        Value::from_op(t, "tanh", vec![(self.clone(), 1.0 - t * t)])
    }

    /// `eˣ`, which is its own derivative.
    pub fn exp(&self) -> Value {
        let e = self.data().exp();
        Value::from_op(e, "exp", vec![(self.clone(), e)])
    }
}
// ANCHOR_END: ops

impl Value {
    /// The number.
    pub fn data(&self) -> f64 {
        self.0.data
    }

    /// The gradient `backward` left here (0 before any call).
    pub fn grad(&self) -> f64 {
        self.0.grad.get()
    }

    /// Replaces the gradient (what `backward` and [`zero_grad`](Value::zero_grad)
    /// do).
    pub fn set_grad(&self, grad: f64) {
        self.0.grad.set(grad);
    }

    /// Forgets the gradient accumulated here.
    pub fn zero_grad(&self) {
        self.set_grad(0.0);
    }

    /// The name of the op that made this value, or `""` for a leaf.
    pub fn op(&self) -> &'static str {
        self.0.op
    }

    /// True when no op produced this value.
    pub fn is_leaf(&self) -> bool {
        self.0.inputs.is_empty()
    }

    /// The inputs of the op that made this value, each with its local derivative
    /// ∂(this value)/∂(input), in argument order (a value used twice appears twice).
    pub fn inputs(&self) -> impl Iterator<Item = (&Value, f64)> {
        self.0.inputs.iter().map(|(v, d)| (v, *d))
    }

    /// True when both handles point at the same node (not merely equal numbers).
    pub fn same(&self, other: &Value) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }

    /// The node's address: its identity for as long as it lives.
    fn id(&self) -> *const Node {
        Rc::as_ptr(&self.0)
    }
}

// ANCHOR: topological_order
impl Value {
    /// Every value this one depends on, and itself, each once, every value after all
    /// of its inputs (a topological order): a depth-first search written with an
    /// explicit stack instead of recursion, so a graph a million ops deep cannot
    /// overflow the thread's stack.
    pub fn topological_order(&self) -> Vec<Value> {
        let mut order = Vec::new();
        let mut visited = HashSet::new();
        // `false`: visit the value (push its inputs); `true`: its inputs are all
        // placed.
        let mut stack = vec![(self.clone(), false)];
        while let Some((value, inputs_placed)) = stack.pop() {
            if inputs_placed {
                order.push(value);
                continue;
            }
            if !visited.insert(value.id()) {
                continue; // reached before through another path
            }
            stack.push((value.clone(), true));
            // Reversed, so that the first input is visited first.
            for (input, _) in value.0.inputs.iter().rev() {
                if !visited.contains(&input.id()) {
                    stack.push((input.clone(), false));
                }
            }
        }
        order
    }
}
// ANCHOR_END: topological_order

// ANCHOR: backward
impl Value {
    /// Fills in `∂self/∂v` for every value `v` this one depends on.
    ///
    /// Intermediate values start from zero on every call; leaves *accumulate*, across
    /// calls too, as PyTorch's parameters do (call [`zero_grad`](Value::zero_grad) on
    /// them between steps).
    pub fn backward(&self) {
        let order = self.topological_order();
        // The fix for stale gradients: an intermediate gradient belongs to one call.
        for v in order.iter().filter(|v| !v.is_leaf()) {
            v.zero_grad();
        }
        // ∂self/∂self = 1 (added, so that a leaf passed as `self` accumulates as
        // well).
        self.set_grad(self.grad() + 1.0);
        // Newest first: each value's gradient is complete before it is passed on.
        for v in order.iter().rev() {
            for (input, local) in v.inputs() {
                // The chain rule, accumulated: a value used twice gets both
                // contributions.
                input.set_grad(input.grad() + local * v.grad());
            }
        }
    }
}
// ANCHOR_END: backward

// ANCHOR: drop
/// Frees a graph without recursion. The default drop of a long chain would drop the
/// newest node, which drops its input, which drops *its* input, … one stack frame per
/// op. Here each node hands its inputs to a work list, and only nodes this was the
/// last handle to are taken apart further.
impl Drop for Node {
    fn drop(&mut self) {
        let mut pending: Vec<Value> = self.inputs.drain(..).map(|(v, _)| v).collect();
        while let Some(value) = pending.pop() {
            if let Ok(mut node) = Rc::try_unwrap(value.0) {
                pending.extend(node.inputs.drain(..).map(|(v, _)| v));
            } // `node` is dropped here with no inputs left: no recursion.
        }
    }
}
// ANCHOR_END: drop

impl fmt::Debug for Value {
    /// `Value(data=-8, grad=1)`, with [`short`] numbers.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Value(data={}, grad={})",
            short(self.data()),
            short(self.grad())
        )
    }
}

/// A number as the page prints it: four decimals at most, trailing zeros dropped
/// (`6`, `-0.5`, `0.7071`), and never `-0`.
pub fn short(x: f64) -> String {
    let text = format!("{x:.4}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    if text == "-0" { "0".to_string() } else { text }
}
