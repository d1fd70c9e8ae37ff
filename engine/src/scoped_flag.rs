//! Thread-local switches that hold a value for the length of a closure.

use std::cell::Cell;
use std::thread::LocalKey;

/// Runs `f` with `flag` set to `value`, restoring the previous value afterwards, even if
/// `f` panics (so a caught panic cannot leave a mode switched on by accident).
pub(crate) fn with_flag<R>(
    flag: &'static LocalKey<Cell<bool>>,
    value: bool,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore(&'static LocalKey<Cell<bool>>, bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            self.0.with(|c| c.set(self.1));
        }
    }
    let _restore = Restore(flag, flag.with(|c| c.replace(value)));
    f()
}
