//! Thread-local switches that hold a value for a scope.

use std::cell::Cell;
use std::thread::LocalKey;

/// Holds `flag` at a value until dropped, then restores the previous value, even when
/// unwinding from a panic (so a caught panic cannot leave a mode switched on by accident).
pub(crate) struct FlagGuard {
    flag: &'static LocalKey<Cell<bool>>,
    previous: bool,
}

impl FlagGuard {
    pub(crate) fn set(flag: &'static LocalKey<Cell<bool>>, value: bool) -> FlagGuard {
        FlagGuard {
            flag,
            previous: flag.with(|c| c.replace(value)),
        }
    }
}

impl Drop for FlagGuard {
    fn drop(&mut self) {
        self.flag.with(|c| c.set(self.previous));
    }
}

/// Runs `f` with `flag` set to `value`, restoring the previous value afterwards.
pub(crate) fn with_flag<R>(
    flag: &'static LocalKey<Cell<bool>>,
    value: bool,
    f: impl FnOnce() -> R,
) -> R {
    let _restore = FlagGuard::set(flag, value);
    f()
}
