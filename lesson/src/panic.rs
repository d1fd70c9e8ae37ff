//! [`panic_message`]: what a mistake reports, as a value a lesson can print or test.

use std::cell::Cell;
use std::sync::Once;

// ANCHOR: panic_message
/// Runs `f`, which is expected to panic, and returns its message (the engine and the
/// attention modules panic on a size mistake, naming the op or module, the argument
/// and the shapes).
///
/// ```
/// let message = lesson::panic_message(|| panic!("matmul: [2, 3] × [4, 5]"));
/// assert_eq!(message, "matmul: [2, 3] × [4, 5]");
/// ```
///
/// # Panics
/// When `f` does not panic.
pub fn panic_message(f: impl FnOnce()) -> String {
    // The expected panic is not printed: its message is returned instead.
    let payload = quietly(f).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
// ANCHOR_END: panic_message

thread_local! {
    /// Set while [`quietly`] runs a closure on this thread.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f`, catching a panic, with the panic report silenced on this thread only.
///
/// The process's panic hook is replaced once, by one that stays silent on a thread
/// inside `quietly` and reports as usual everywhere else. Swapping the hook on every call
/// instead races between test threads (one restores the silent hook another installed)
/// and can leave every later panic of the process unreported.
fn quietly<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                report(info);
            }
        }));
    });
    let outer = QUIET.with(|q| q.replace(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(outer));
    result
}

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn returns_formatted_and_static_messages() {
        assert_eq!(panic_message(|| panic!("{} and {}", 1, 2)), "1 and 2");
        assert_eq!(panic_message(|| panic!("static")), "static");
    }

    #[test]
    fn a_nested_call_leaves_the_outer_one_quiet() {
        let outer = panic_message(|| {
            let inner = panic_message(|| panic!("inner"));
            assert_eq!(inner, "inner");
            panic!("outer");
        });
        assert_eq!(outer, "outer");
        assert!(
            !super::QUIET.with(std::cell::Cell::get),
            "quiet no more afterwards"
        );
    }

    #[test]
    fn threads_calling_at_once_each_get_their_own_message() {
        let threads: Vec<_> = (0..8)
            .map(|i| std::thread::spawn(move || panic_message(|| panic!("{i}"))))
            .collect();
        for (i, t) in threads.into_iter().enumerate() {
            assert_eq!(t.join().unwrap(), i.to_string());
        }
    }

    #[test]
    #[should_panic(expected = "expected a panic")]
    fn panics_when_nothing_panics() {
        panic_message(|| {});
    }
}
