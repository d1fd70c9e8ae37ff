//! [`panic_message`]: what a mistake reports, as a value a lesson can print or test.

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
    // Silence the default report: the message is returned, not printed twice.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(previous);
    let payload = result.expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
// ANCHOR_END: panic_message

#[cfg(test)]
mod tests {
    use super::panic_message;

    #[test]
    fn returns_formatted_and_static_messages() {
        assert_eq!(panic_message(|| panic!("{} and {}", 1, 2)), "1 and 2");
        assert_eq!(panic_message(|| panic!("static")), "static");
    }

    #[test]
    #[should_panic(expected = "expected a panic")]
    fn panics_when_nothing_panics() {
        panic_message(|| {});
    }
}
