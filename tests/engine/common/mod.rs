//! Helpers shared by the op test files: seeded input tensors with the properties a
//! derivative test needs (away from kinks, no ties), and a gradcheck that names the case.

// Each test file uses only some of these.
#![allow(dead_code)]

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe, catch_unwind};
use std::sync::Once;

use engine::Tensor;
use engine::gradcheck::{GradcheckOptions, gradcheck_with};
use engine::random::rng_from_seed;

/// Standard normal values from a fixed seed.
pub fn randn(shape: &[usize], seed: u64) -> Tensor {
    Tensor::normal_with(shape, 0.0, 1.0, &mut rng_from_seed(seed))
}

/// Uniform values in `[low, high)` from a fixed seed.
pub fn uniform(shape: &[usize], low: f32, high: f32, seed: u64) -> Tensor {
    Tensor::rand_with(shape, low, high, &mut rng_from_seed(seed))
}

/// Random signs and magnitudes in `[gap, gap + 1.5)`: nothing near 0, so a finite-difference
/// step never crosses the kink of `relu` and a divisor is never tiny.
pub fn away_from_zero(shape: &[usize], gap: f32, seed: u64) -> Tensor {
    let magnitude = uniform(shape, gap, gap + 1.5, seed).to_vec();
    let sign = uniform(shape, -1.0, 1.0, seed ^ 0x5151).to_vec();
    let values = magnitude
        .iter()
        .zip(&sign)
        .map(|(&m, &s)| if s < 0.0 { -m } else { m })
        .collect();
    Tensor::from_vec(values, shape)
}

/// A random arrangement of distinct values `spacing` apart (centred on 0): a maximum
/// never has a tie, even after a finite-difference step smaller than `spacing / 2`.
pub fn distinct(shape: &[usize], spacing: f32, seed: u64) -> Tensor {
    let keys = uniform(shape, 0.0, 1.0, seed).to_vec();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]));
    let half = keys.len() as f32 / 2.0;
    let mut values = vec![0.0; keys.len()];
    for (rank, &i) in order.iter().enumerate() {
        values[i] = (rank as f32 - half) * spacing;
    }
    Tensor::from_vec(values, shape)
}

/// Runs the default gradcheck and panics with the worst element, naming the case.
#[track_caller]
pub fn check(what: &str, f: impl Fn(&[Tensor]) -> Tensor, inputs: &[Tensor]) {
    check_with(what, f, inputs, GradcheckOptions::default());
}

/// [`check`] with explicit options.
#[track_caller]
pub fn check_with(
    what: &str,
    f: impl Fn(&[Tensor]) -> Tensor,
    inputs: &[Tensor],
    opts: GradcheckOptions,
) {
    if let Err(mismatch) = gradcheck_with(f, inputs, opts) {
        panic!("{what}: {mismatch}");
    }
}

/// Whole numbers as an `f32` tensor (indices, class targets, token ids).
pub fn ids(values: &[usize], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.iter().map(|&v| v as f32).collect(), shape)
}

/// A 0/1 mask as an `f32` tensor.
pub fn mask(values: &[u8], shape: &[usize]) -> Tensor {
    Tensor::from_vec(values.iter().map(|&v| f32::from(v)).collect(), shape)
}

/// The message of the panic `f` raises.
pub fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

thread_local! {
    /// Set while [`panic_at`] runs the closure it expects to panic.
    static EXPECTING_PANIC: Cell<bool> = const { Cell::new(false) };
    /// Where the last panic on this thread was reported: file and line.
    static PANIC_LOCATION: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
}

/// A panic raised by the closure given to [`panic_at`]: its message and where it was
/// reported (the line `#[track_caller]` points at).
#[derive(Debug)]
pub struct Raised {
    pub message: String,
    pub file: String,
    pub line: u32,
}

/// Runs `f`, which must be refused at a line of `file` (pass `file!()`: the caller's line,
/// through `#[track_caller]`), with a message that starts with `start`.
#[track_caller]
pub fn refused_in(file: &str, start: &str, f: impl FnOnce()) {
    let raised = panic_at(f);
    assert_eq!(
        raised.file.as_str(),
        file,
        "refused at the caller's line, not inside the engine or the library: {}",
        raised.message
    );
    assert!(
        raised.message.starts_with(start),
        "expected a message starting with {start:?}, found {:?}",
        raised.message
    );
}

/// Runs `f`, which must panic, and returns the message with the file and line the panic
/// was reported at. The expected panic is not printed; any other panic is, as usual.
pub fn panic_at(f: impl FnOnce()) -> Raised {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let at = info.location().map(|l| (l.file().to_string(), l.line()));
            PANIC_LOCATION.with(|p| *p.borrow_mut() = at);
            if !EXPECTING_PANIC.with(Cell::get) {
                default(info);
            }
        }));
    });
    PANIC_LOCATION.with(|p| p.borrow_mut().take());
    EXPECTING_PANIC.with(|e| e.set(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    EXPECTING_PANIC.with(|e| e.set(false));
    let payload = result.expect_err("expected a panic");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    let (file, line) = PANIC_LOCATION
        .with(|p| p.borrow_mut().take())
        .expect("the panic hook recorded a location");
    Raised {
        message,
        file,
        line,
    }
}
