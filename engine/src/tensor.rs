//! The `Tensor` handle: shape, values, and (when gradients are tracked) the op that made it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::anomaly;
use crate::check;
use crate::device::Device;
use crate::grad_mode;
use crate::memory;
use crate::memory::Buffer;
use crate::op::Op;
use crate::shape::{Dim, ShapeArg, numel};
use crate::storage::Storage;

/// An n-dimensional array of `f32` that can take part in automatic differentiation.
///
/// A `Tensor` is a cheap handle (an `Arc`): cloning it shares the same values and the same
/// place in the computation graph. Values are immutable once made; ops return new tensors.
/// The one exception is [`Tensor::assign`], which optimizers use to update parameters.
///
/// A tensor records the op that produced it only when gradient mode is on and one of the
/// op's inputs requires a gradient, so inference code builds no graph at all.
///
/// ```
/// use engine::Tensor;
/// let w = Tensor::from_vec(vec![1.0, 2.0, 3.0], &[3]).requires_grad_();
/// let loss = (&w * &w).sum();
/// loss.backward();
/// assert_eq!(w.grad().unwrap().to_vec(), vec![2.0, 4.0, 6.0]);
/// ```
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<Node>);

pub(crate) struct Node {
    /// Creation order. A tensor's inputs always have smaller ids than the tensor itself, so
    /// sorting by id is a topological order of the graph.
    pub(crate) id: u64,
    pub(crate) shape: Vec<usize>,
    buffer: RwLock<Arc<Storage>>,
    pub(crate) op: Option<Op>,
    /// Set on leaves created with `requires_grad_`; results of recorded ops require a
    /// gradient through their `op`.
    leaf_requires_grad: bool,
    /// Set by `retain_grad` on a non-leaf: `backward` then keeps its gradient too.
    pub(crate) retains_grad: AtomicBool,
    pub(crate) grad: Mutex<Option<Tensor>>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Frees a graph without recursion. The default drop of a long chain (`x → op → x' → op
/// → …`) would recurse once per op and overflow the stack; here each node hands its inputs
/// to a work list, and only nodes this was the last handle to are taken apart further.
impl Drop for Node {
    fn drop(&mut self) {
        let Some(op) = self.op.take() else { return };
        let mut pending = op.into_inputs();
        while let Some(tensor) = pending.pop() {
            if let Ok(mut node) = Arc::try_unwrap(tensor.0)
                && let Some(op) = node.op.take()
            {
                pending.extend(op.into_inputs());
            }
        }
    }
}

impl Tensor {
    fn make(
        buffer: Arc<Storage>,
        shape: Vec<usize>,
        op: Option<Op>,
        leaf_requires_grad: bool,
    ) -> Tensor {
        Tensor(Arc::new(Node {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            shape,
            buffer: RwLock::new(buffer),
            op,
            leaf_requires_grad,
            retains_grad: AtomicBool::new(false),
            grad: Mutex::new(None),
        }))
    }

    /// A leaf that tracks no gradient, from values the caller has already checked; `op`
    /// names what made them, for the memory budget's message.
    #[track_caller]
    pub(crate) fn from_parts(op: &str, data: Vec<f32>, shape: Vec<usize>) -> Tensor {
        debug_assert_eq!(data.len(), numel(&shape));
        let buffer = Buffer::new(op, &shape, data);
        Tensor::make(Arc::new(Storage::Host(buffer)), shape, None, false)
    }

    /// The result of an op. `op` is kept only if gradient mode is on and an input requires a
    /// gradient; in anomaly mode the values are checked for NaN and infinity first.
    #[track_caller]
    pub(crate) fn from_op(data: Vec<f32>, shape: Vec<usize>, op: Op) -> Tensor {
        debug_assert_eq!(data.len(), numel(&shape));
        anomaly::check_forward(&op, &data);
        let buffer = Buffer::new(op.name(), &shape, data);
        let op = Self::keep_if_needed(op);
        Tensor::make(Arc::new(Storage::Host(buffer)), shape, op, false)
    }

    /// Like [`Tensor::from_op`] for an op whose derivative needs the result itself: `op`
    /// is given a constant handle that shares the result's values (no copy, and no cycle:
    /// the handle records nothing). `name` is the op's, for the memory budget's message.
    #[track_caller]
    pub(crate) fn from_op_keeping_output(
        name: &str,
        data: Vec<f32>,
        shape: Vec<usize>,
        op: impl FnOnce(Tensor) -> Op,
    ) -> Tensor {
        debug_assert_eq!(data.len(), numel(&shape));
        let storage = Arc::new(Storage::Host(Buffer::new(name, &shape, data)));
        let output = Tensor::make(storage.clone(), shape.clone(), None, false);
        let op = op(output);
        anomaly::check_forward(&op, storage.as_slice());
        let op = Self::keep_if_needed(op);
        Tensor::make(storage, shape, op, false)
    }

    /// A tensor whose values a GPU kernel computed: the result of `op` when there is one
    /// (kept as [`Tensor::from_op`] keeps it), else a constant made by `name`. In anomaly
    /// mode the values are read back and checked, as on the CPU.
    #[cfg(feature = "wgpu")]
    #[track_caller]
    pub(crate) fn from_gpu(
        name: &str,
        buffer: crate::gpu::GpuBuffer,
        shape: Vec<usize>,
        op: Option<Op>,
    ) -> Tensor {
        debug_assert_eq!(buffer.len(), numel(&shape), "{name}");
        if let Some(op) = &op
            && anomaly::is_enabled()
        {
            anomaly::check_forward(op, &buffer.read());
        }
        let op = op.and_then(Self::keep_if_needed);
        Tensor::make(Arc::new(Storage::Gpu(buffer)), shape, op, false)
    }

    /// The GPU buffer of this tensor, when it lives on a GPU.
    #[cfg(feature = "wgpu")]
    pub(crate) fn on_gpu(&self) -> Option<OnGpu> {
        let storage = self.buffer();
        storage.gpu().is_some().then_some(OnGpu(storage))
    }

    /// Like [`Tensor::from_op`] for ops that do not move any value (`reshape`): the result
    /// shares this tensor's buffer.
    pub(crate) fn share_with_shape(&self, shape: Vec<usize>, op: Op) -> Tensor {
        debug_assert_eq!(self.numel(), numel(&shape));
        let op = Self::keep_if_needed(op);
        Tensor::make(self.buffer(), shape, op, false)
    }

    fn keep_if_needed(op: Op) -> Option<Op> {
        let needed =
            grad_mode::is_enabled() && op.inputs().iter().any(|t| t.requires_grad());
        needed.then_some(op)
    }

    /// The storage holding the values (shared, read-only).
    pub(crate) fn buffer(&self) -> Arc<Storage> {
        self.0
            .buffer
            .read()
            .expect("tensor buffer lock poisoned")
            .clone()
    }

    /// Creates a tensor from row-major values and a shape (an array, slice, `Vec` or tuple:
    /// see [`ShapeArg`]).
    ///
    /// ```
    /// let t = engine::Tensor::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]);
    /// assert_eq!(t.shape(), &[2, 3]);
    /// ```
    #[track_caller]
    pub fn from_vec(data: Vec<f32>, shape: impl ShapeArg) -> Tensor {
        let shape = check::sizes("from_vec", shape);
        check::ensure(data.len() == numel(&shape), "from_vec", || {
            format!(
                "{} values cannot fill shape {shape:?}, which holds {}",
                data.len(),
                numel(&shape)
            )
        });
        Tensor::from_parts("from_vec", data, shape)
    }

    /// A 0-dimensional tensor holding one value.
    #[track_caller]
    pub fn scalar(value: f32) -> Tensor {
        Tensor::from_parts("scalar", vec![value], vec![])
    }

    /// A tensor of the given shape with every element equal to `value`.
    #[track_caller]
    pub fn full(shape: impl ShapeArg, value: f32) -> Tensor {
        Tensor::full_in("full", shape, value)
    }

    #[track_caller]
    fn full_in(op: &str, shape: impl ShapeArg, value: f32) -> Tensor {
        let shape = check::sizes(op, shape);
        memory::ensure_can_allocate(op, &shape);
        Tensor::from_parts(op, vec![value; numel(&shape)], shape)
    }

    /// A tensor of zeros.
    #[track_caller]
    pub fn zeros(shape: impl ShapeArg) -> Tensor {
        Tensor::full_in("zeros", shape, 0.0)
    }

    /// A tensor of ones.
    #[track_caller]
    pub fn ones(shape: impl ShapeArg) -> Tensor {
        Tensor::full_in("ones", shape, 1.0)
    }

    /// Zeros with the shape of `self`, like `torch.zeros_like`.
    #[track_caller]
    pub fn zeros_like(&self) -> Tensor {
        Tensor::full_in("zeros_like", self.shape(), 0.0).to(&self.device())
    }

    /// Ones with the shape of `self`, like `torch.ones_like`.
    #[track_caller]
    pub fn ones_like(&self) -> Tensor {
        Tensor::full_in("ones_like", self.shape(), 1.0).to(&self.device())
    }

    /// `value` everywhere, with the shape of `self`, like `torch.full_like`.
    ///
    /// ```
    /// let x = engine::Tensor::zeros([2, 3]);
    /// let filled = x.full_like(-1e9);
    /// assert_eq!(filled.shape(), &[2, 3]);
    /// assert!(filled.to_vec().iter().all(|&v| v == -1e9));
    /// ```
    #[track_caller]
    pub fn full_like(&self, value: f32) -> Tensor {
        Tensor::full_in("full_like", self.shape(), value).to(&self.device())
    }

    /// `[0, 1, …, end - 1]` as a 1-D tensor, like `torch.arange(end)`.
    #[track_caller]
    pub fn arange(end: usize) -> Tensor {
        memory::ensure_can_allocate("arange", &[end]);
        Tensor::from_parts("arange", (0..end).map(|i| i as f32).collect(), vec![end])
    }

    /// `start, start + step, …` up to but excluding `end`, like `torch.arange(start, end, step)`.
    #[track_caller]
    pub fn arange_step(start: f32, end: f32, step: f32) -> Tensor {
        check::ensure(
            step != 0.0 && step.is_finite() && start.is_finite() && end.is_finite(),
            "arange_step",
            || {
                format!(
                    "start, end and step must be finite and step non-zero, found start {start}, end {end}, step {step}"
                )
            },
        );
        let count = ((f64::from(end) - f64::from(start)) / f64::from(step))
            .ceil()
            .max(0.0);
        check::ensure(
            count <= (isize::MAX as usize / size_of::<f32>()) as f64,
            "arange_step",
            || {
                format!(
                    "{start}..{end} in steps of {step} has {count:.3e} entries, more than any machine can hold"
                )
            },
        );
        let n = count as usize;
        memory::ensure_can_allocate("arange_step", &[n]);
        Tensor::from_parts(
            "arange_step",
            (0..n).map(|i| start + i as f32 * step).collect(),
            vec![n],
        )
    }

    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[usize] {
        &self.0.shape
    }

    /// The number of dimensions (0 for a scalar).
    pub fn rank(&self) -> usize {
        self.0.shape.len()
    }

    /// The size of one dimension; negative indices count from the end.
    #[track_caller]
    pub fn size(&self, dim: impl Dim) -> usize {
        self.0.shape[dim.resolve("size", self.rank())]
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        numel(&self.0.shape)
    }

    /// The values in row-major order, read back from the GPU when the tensor lives there.
    pub fn to_vec(&self) -> Vec<f32> {
        self.buffer().to_vec()
    }

    /// The device that holds the values, where ops on this tensor run.
    pub fn device(&self) -> Device {
        self.buffer().device()
    }

    /// The single value of a one-element tensor.
    #[track_caller]
    pub fn item(&self) -> f32 {
        check::ensure(self.numel() == 1, "item", || {
            format!(
                "only a tensor with one element has an item, found shape {:?}; hint: reduce it first, e.g. .sum() or .mean()",
                self.shape()
            )
        });
        self.to_vec()[0]
    }

    /// Whether gradients flow to or through this tensor.
    pub fn requires_grad(&self) -> bool {
        self.0.leaf_requires_grad || self.0.op.is_some()
    }

    /// Marks a leaf tensor as one whose gradient `backward` should compute (a parameter or
    /// an input being studied), like PyTorch's `requires_grad_()`.
    ///
    /// It returns a new handle (sharing the values) rather than changing `self`: keep and use
    /// the returned tensor, as in `let w = Tensor::randn(&[3, 2]).requires_grad_();`. A handle
    /// taken before the call does not require a gradient.
    #[track_caller]
    pub fn requires_grad_(self) -> Tensor {
        check::ensure(self.is_leaf(), "requires_grad_", || {
            format!(
                "only a leaf tensor can be marked; this one is the result of an op. hint: call .detach() first to start a new leaf from its values (.detach().requires_grad_()); {HAND_UPDATE_HINT}"
            )
        });
        Tensor::make(self.buffer(), self.0.shape.clone(), None, true)
    }

    /// True when this tensor was not produced by a recorded op.
    pub fn is_leaf(&self) -> bool {
        self.0.op.is_none()
    }

    /// The same values, cut from the graph: no gradient flows through the result.
    pub fn detach(&self) -> Tensor {
        Tensor::make(self.buffer(), self.0.shape.clone(), None, false)
    }

    /// The gradient accumulated by `backward`, or the reason there is none.
    ///
    /// As in PyTorch, `backward` keeps gradients only for leaves that require one (the
    /// parameters and the inputs you marked with [`requires_grad_`](Tensor::requires_grad_)).
    /// An intermediate result's gradient is used and dropped, unless
    /// [`retain_grad`](Tensor::retain_grad) was called on it before `backward`. The error
    /// says which case applies, so `x.grad().unwrap()` explains itself when it fails.
    ///
    /// ```
    /// use engine::{NoGrad, Tensor};
    /// let x = Tensor::from_vec(vec![1.0, 2.0], [2]).requires_grad_();
    /// let h = &x * 3.0; // an intermediate result
    /// let kept = &x * 2.0;
    /// kept.retain_grad();
    /// (&h + &kept).sum().backward();
    /// assert_eq!(x.grad().unwrap().to_vec(), vec![5.0, 5.0]);
    /// assert_eq!(kept.grad().unwrap().to_vec(), vec![1.0, 1.0]);
    /// assert_eq!(h.grad().unwrap_err(), NoGrad::NotALeaf);
    /// ```
    pub fn grad(&self) -> Result<Tensor, NoGrad> {
        if let Some(g) = self.0.grad.lock().expect("grad lock poisoned").clone() {
            return Ok(g);
        }
        Err(if !self.requires_grad() {
            NoGrad::NotTracked
        } else if !self.is_leaf() && !self.0.retains_grad.load(Ordering::Relaxed) {
            NoGrad::NotALeaf
        } else {
            NoGrad::NotYetComputed
        })
    }

    /// Asks `backward` to keep the gradient of this intermediate result too, like PyTorch's
    /// `retain_grad()`. Call it before `backward`. On a leaf that requires a gradient it
    /// changes nothing (leaves keep theirs anyway).
    #[track_caller]
    pub fn retain_grad(&self) {
        check::ensure(self.requires_grad(), "retain_grad", || {
            "this tensor does not require a gradient, so backward never computes one for it; hint: mark an input it depends on with requires_grad_(), outside no_grad".into()
        });
        self.0.retains_grad.store(true, Ordering::Relaxed);
    }

    /// Whether `backward` stores this tensor's gradient: a leaf that requires one, or a
    /// result on which [`retain_grad`](Tensor::retain_grad) was called.
    pub(crate) fn keeps_grad(&self) -> bool {
        self.0.leaf_requires_grad || self.0.retains_grad.load(Ordering::Relaxed)
    }

    /// Forgets the accumulated gradient (the next `backward` starts from zero).
    pub fn zero_grad(&self) {
        self.set_grad(None);
    }

    /// Replaces the accumulated gradient, as gradient clipping does. The gradient must
    /// have this tensor's shape.
    #[track_caller]
    pub fn set_grad(&self, grad: Option<Tensor>) {
        if let Some(g) = &grad {
            check::ensure(g.shape() == self.shape(), "set_grad", || {
                format!(
                    "the gradient has shape {:?} but the tensor has {:?}",
                    g.shape(),
                    self.shape()
                )
            });
        }
        // A handle of its own: assigning to one tensor's gradient never changes another's.
        *self.0.grad.lock().expect("grad lock poisoned") = grad.map(|g| g.detach());
    }

    /// Replaces the values of a leaf tensor with those of `values` (same shape), keeping its
    /// identity: every clone of this handle sees the new values. Optimizers use this.
    ///
    /// Any graph built from the old values keeps pointing at this tensor, so call it only
    /// between `backward` and the next forward pass, as an optimizer step does.
    #[track_caller]
    pub fn assign(&self, values: &Tensor) {
        check::ensure(self.is_leaf(), "assign", || {
            format!(
                "only a leaf tensor (a parameter) can be assigned to; this one is the result of an op. hint: {HAND_UPDATE_HINT}"
            )
        });
        check::ensure(self.shape() == values.shape(), "assign", || {
            format!(
                "shape mismatch: target {:?}, values {:?}",
                self.shape(),
                values.shape()
            )
        });
        let fresh = match self.device() {
            Device::Cpu => Arc::new(Storage::Host(Buffer::new(
                "assign",
                self.shape(),
                values.to_vec(),
            ))),
            // Values never change once made, so the parameter can share the new ones.
            device @ Device::Gpu(_) => values.to(&device).buffer(),
        };
        *self.0.buffer.write().expect("tensor buffer lock poisoned") = fresh;
    }

    /// Moves a leaf's values to `device` in place, keeping its identity, and forgets its
    /// gradient (which lived on the old device): what [`Module::to_device`] does to each
    /// parameter.
    ///
    /// [`Module::to_device`]: crate::nn::Module::to_device
    #[track_caller]
    pub(crate) fn move_to(&self, device: &Device) {
        check::ensure(self.is_leaf(), "to_device", || {
            "only leaf tensors (parameters) can be moved in place".into()
        });
        let moved = self.detach().to(device).buffer();
        *self.0.buffer.write().expect("tensor buffer lock poisoned") = moved;
        self.set_grad(None);
    }

    /// True when both handles refer to the same tensor (not merely equal values).
    pub fn same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// A handle on the GPU buffer of a tensor (see `Tensor::on_gpu`), which keeps the
/// values alive while a kernel is queued.
#[cfg(feature = "wgpu")]
pub(crate) struct OnGpu(Arc<Storage>);

#[cfg(feature = "wgpu")]
impl std::ops::Deref for OnGpu {
    type Target = crate::gpu::GpuBuffer;
    fn deref(&self) -> &crate::gpu::GpuBuffer {
        self.0.gpu().expect("OnGpu holds GPU storage")
    }
}

/// The hint for a parameter updated by hand while gradients were being recorded, which the
/// messages of `grad`, `requires_grad_` and `assign` give.
const HAND_UPDATE_HINT: &str = "if it is a parameter updated by hand outside no_grad (w = &w - …), that update was recorded as an op and its result is no longer a leaf: write the new values into the parameter under no_grad instead, engine::no_grad(|| w.assign(&new_w)), or use an optimizer from engine::optim";

/// Why [`Tensor::grad`] has no gradient to give. Its `Debug` form carries the explanation,
/// so a failed `x.grad().unwrap()` says what to do.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum NoGrad {
    /// The tensor does not require a gradient: nothing it depends on was marked with
    /// `requires_grad_()`, or it was computed under `no_grad`.
    NotTracked,
    /// The tensor is the result of an op, not a leaf: `backward` used its gradient and
    /// dropped it. Either an intermediate result (keep its gradient with
    /// [`retain_grad`](Tensor::retain_grad)), or a parameter updated by hand outside
    /// [`no_grad`](crate::no_grad), which made it an op's result (update it with
    /// [`assign`](Tensor::assign) under `no_grad`, or with an optimizer).
    NotALeaf,
    /// `backward` has not reached the tensor yet (or `zero_grad` cleared its gradient).
    NotYetComputed,
}

impl std::fmt::Display for NoGrad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoGrad::NotTracked => f.write_str(
                "no gradient: this tensor does not require one (mark an input with requires_grad_(), and compute outside no_grad)",
            ),
            NoGrad::NotALeaf => write!(
                f,
                "no gradient: this tensor is the result of an op, whose gradient backward uses and drops. hint: if it is an intermediate result, call .retain_grad() on it before backward(), as in PyTorch; {HAND_UPDATE_HINT}"
            ),
            NoGrad::NotYetComputed => f.write_str(
                "no gradient yet: call backward() on a value computed from this tensor (zero_grad() also clears it)",
            ),
        }
    }
}

impl std::fmt::Debug for NoGrad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match self {
            NoGrad::NotTracked => "NotTracked",
            NoGrad::NotALeaf => "NotALeaf",
            NoGrad::NotYetComputed => "NotYetComputed",
        };
        write!(f, "{name} ({self})")
    }
}

impl std::error::Error for NoGrad {}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}
