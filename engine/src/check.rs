//! Shape checks and the messages they give.
//!
//! Every op checks its arguments here, before any kernel runs, so that all backends report a
//! mistake the same way. A failed check panics (a shape mistake is a programming error, as in
//! PyTorch and ndarray) with a message that reads like a good compiler's: the op, the shapes,
//! the offending dimension, what was expected, and a hint when one is likely to help.
//! `#[track_caller]` on every function here and on every public op makes the panic point at
//! the learner's own line, not at a line inside the engine.

use crate::shape::{ShapeArg, broadcast_shapes, checked_numel};

/// Panics with `op: message`. The single place the engine raises a shape error.
///
/// Inside `backward()`, the op that fails is one a derivative uses, which the caller never
/// wrote: the message then starts by naming the forward op being differentiated and the
/// caller's `backward()` line.
#[track_caller]
pub(crate) fn fail(op: &str, message: impl std::fmt::Display) -> ! {
    match crate::anomaly::current_derivative() {
        Some(derivative) => panic!("{derivative} failed\n  {op}: {message}"),
        None => panic!("{op}: {message}"),
    }
}

/// Checks a condition, and panics with `op: message` when it does not hold.
#[track_caller]
pub(crate) fn ensure(cond: bool, op: &str, message: impl FnOnce() -> String) {
    if !cond {
        fail(op, message());
    }
}

#[track_caller]
pub(crate) fn fail_dim(op: &str, dim: i64, rank: usize) -> ! {
    let valid = if rank == 0 {
        "a scalar has no dimensions".to_string()
    } else {
        format!("valid dimensions are 0..={} or -{rank}..=-1", rank - 1)
    };
    fail(
        op,
        format!(
            "dimension {dim} is out of range for a tensor of rank {rank} ({valid})"
        ),
    )
}

#[track_caller]
pub(crate) fn fail_insert_dim(op: &str, dim: i64, rank: usize) -> ! {
    fail(
        op,
        format!(
            "cannot insert a dimension at {dim} in a tensor of rank {rank} (valid positions are 0..={rank} or -{}..=-1)",
            rank + 1
        ),
    )
}

/// The broadcast shape of `a` and `b`, or a panic that explains which dimension disagrees.
#[track_caller]
pub(crate) fn broadcast(op: &str, a: &[usize], b: &[usize]) -> Vec<usize> {
    if let Some(out) = broadcast_shapes(a, b) {
        return out;
    }
    fail(op, broadcast_message(a, b))
}

fn broadcast_message(a: &[usize], b: &[usize]) -> String {
    let rank = a.len().max(b.len());
    // First disagreeing dimension, counted from the right as broadcasting aligns them.
    let (mut dim, mut sa, mut sb) = (0, 0, 0);
    for back in 1..=a.len().min(b.len()) {
        let (x, y) = (a[a.len() - back], b[b.len() - back]);
        if x != y && x != 1 && y != 1 {
            (dim, sa, sb) = (rank - back, x, y);
            break;
        }
    }
    let mut msg = format!(
        "cannot broadcast {a:?} with {b:?}\n  \
         dimension {dim} (counting from the left of the result, {} from the end): \
         the left operand has size {sa}, the right operand has size {sb}\n  \
         expected: equal sizes, or one of them 1 (shapes are aligned on their last dimension)",
        dim as i64 - rank as i64
    );
    if let Some(hint) = broadcast_hint(a, b) {
        msg.push_str("\n  hint: ");
        msg.push_str(&hint);
    }
    msg
}

fn broadcast_hint(a: &[usize], b: &[usize]) -> Option<String> {
    // A missing size-1 axis is the most common cause: try inserting one in the shorter shape.
    let (short, long, side) = if a.len() < b.len() {
        (a, b, "left")
    } else if b.len() < a.len() {
        (b, a, "right")
    } else {
        (a, b, "")
    };
    if short.len() < long.len() {
        for pos in 0..=short.len() {
            let mut candidate = short.to_vec();
            candidate.insert(pos, 1);
            if broadcast_shapes(&candidate, long).is_some() {
                return Some(format!(
                    "did you mean to unsqueeze({pos}) the {side} operand (giving {candidate:?})?"
                ));
            }
        }
    }
    let n = a.len();
    if n >= 2 && n == b.len() {
        let mut swapped = b.to_vec();
        swapped.swap(n - 2, n - 1);
        if broadcast_shapes(a, &swapped).is_some() {
            return Some("the last two dimensions match when swapped: did you mean to transpose(-2, -1) one operand?".into());
        }
    }
    None
}

/// The sizes of a shape given by a caller (to `zeros`, `from_vec`, `broadcast_to`, …): every
/// entry must be a size ≥ 0 that fits in a `usize`, and the element count must fit too.
#[track_caller]
pub(crate) fn sizes(op: &str, shape: impl ShapeArg) -> Vec<usize> {
    let entries = shape.entries();
    let mut out = Vec::with_capacity(entries.len());
    for (i, &e) in entries.iter().enumerate() {
        match usize::try_from(e) {
            Ok(size) => out.push(size),
            Err(_) => fail(
                op,
                format!(
                    "size {e} at position {i} of the shape {entries:?} is not a size (a whole number ≥ 0){}",
                    if e == -1 {
                        "; hint: -1 (\"infer this size\") means something only to reshape and expand"
                    } else {
                        ""
                    }
                ),
            ),
        }
    }
    numel(op, &out);
    out
}

/// The number of elements of `shape`, or a panic naming the op when it overflows a `usize`.
#[track_caller]
pub(crate) fn numel(op: &str, shape: &[usize]) -> usize {
    match checked_numel(shape) {
        Some(n) => n,
        None => fail(
            op,
            format!(
                "the shape {shape:?} holds more elements than a usize can count ({}); no machine has that much memory",
                usize::MAX
            ),
        ),
    }
}

/// Checks that a module's size setting is at least 1, naming the module and the setting.
#[track_caller]
pub(crate) fn positive(op: &str, name: &str, value: usize) {
    ensure(value > 0, op, || {
        format!(
            "{name} must be at least 1, found {value}{}",
            if value == 0 {
                " (sizes have no default: set it in the config)"
            } else {
                ""
            }
        )
    });
}

/// Checks that `shape` has exactly `rank` dimensions.
#[track_caller]
pub(crate) fn rank(op: &str, what: &str, shape: &[usize], rank: usize) {
    ensure(shape.len() == rank, op, || {
        format!(
            "{what} must have {rank} dimensions, found shape {shape:?} (rank {})",
            shape.len()
        )
    });
}

/// Checks that every value of an index tensor is a whole number in `0..limit`.
#[track_caller]
pub(crate) fn indices(
    op: &str,
    values: &[f32],
    limit: usize,
    what: &str,
) -> Vec<usize> {
    // A plain loop, not a closure: `#[track_caller]` does not reach into closures, and the
    // panic must point at the caller's line.
    let mut out = Vec::with_capacity(values.len());
    for (i, &v) in values.iter().enumerate() {
        if v.fract() != 0.0 || v < 0.0 || v >= limit as f32 {
            fail(
                op,
                format!(
                    "index {v} at position {i} is not a whole number in 0..{limit} ({what})"
                ),
            );
        }
        out.push(v as usize);
    }
    out
}

/// Checks that a mask or condition holds only 0 (false) and 1 (true). A 0.5 or a NaN would
/// otherwise be read as "true" without a word.
#[track_caller]
pub(crate) fn zero_one(op: &str, what: &str, values: &[f32]) {
    for (i, &v) in values.iter().enumerate() {
        if v != 0.0 && v != 1.0 {
            fail(
                op,
                format!(
                    "{what} must hold only 0 (false) and 1 (true), found {v} at position {i}; hint: build masks with comparisons such as x.gt(&y) or x.eq_mask(&y)"
                ),
            );
        }
    }
}

/// The device the op's inputs live on, where it runs. Tensors on two devices are a mistake
/// (the op names both), except a 0-dimensional CPU tensor, a scalar, which goes with a
/// tensor on any device, as in PyTorch.
#[track_caller]
pub(crate) fn device(op: &str, inputs: &[&crate::Tensor]) -> crate::Device {
    let mut found: Option<(crate::Device, usize)> = None;
    for (i, t) in inputs.iter().enumerate() {
        let d = t.device();
        if d.is_cpu() && t.rank() == 0 {
            continue;
        }
        match &found {
            None => found = Some((d, i)),
            Some((first, j)) if *first != d => fail(
                op,
                format!(
                    "its inputs live on two devices: input {j} {:?} on {first}, input {i} {:?} on {d}\n  hint: move one with .to(&device) first, e.g. x.to(&y.device())",
                    inputs[*j].shape(),
                    t.shape()
                ),
            ),
            Some(_) => {}
        }
    }
    found.map_or(crate::Device::Cpu, |(d, _)| d)
}

/// Fails for an op that has no GPU kernel, when its input lives on a GPU: never computed
/// silently on the CPU.
#[track_caller]
pub(crate) fn no_gpu_kernel(op: &str, x: &crate::Tensor) {
    let device = x.device();
    ensure(device.is_cpu(), op, || {
        format!(
            "{op} has no GPU kernel, and its input {:?} lives on {device}\n  hint: compute it on the CPU and move the result back: x.to(&Device::Cpu).{op}(…).to(&device)",
            x.shape()
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_the_dimension_and_both_sizes() {
        let m = broadcast_message(&[2, 3, 64], &[2, 3, 128]);
        assert!(
            m.contains("cannot broadcast [2, 3, 64] with [2, 3, 128]"),
            "{m}"
        );
        assert!(m.contains("dimension 2"), "{m}");
        assert!(m.contains("size 64") && m.contains("size 128"), "{m}");
    }

    #[test]
    fn hint_suggests_unsqueeze_for_a_missing_axis() {
        let m = broadcast_message(&[4, 64], &[4, 10, 64]);
        assert!(
            m.contains("unsqueeze(1) the left operand (giving [4, 1, 64])"),
            "{m}"
        );
    }

    #[test]
    fn hint_suggests_transpose_for_swapped_dims() {
        let m = broadcast_message(&[2, 3, 5], &[2, 5, 3]);
        assert!(m.contains("transpose(-2, -1)"), "{m}");
    }

    #[test]
    fn no_hint_when_nothing_obvious_helps() {
        let m = broadcast_message(&[3], &[4]);
        assert!(!m.contains("hint"), "{m}");
    }
}
