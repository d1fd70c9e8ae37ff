//! What the modules that accept a second layout of their parameters share: telling the
//! layouts apart, and loading into an existing module through a freshly read one.

use engine::grad_mode::no_grad;
use engine::nn::{LoadError, Module, StateDict, StateReader};

/// True when `reader`'s state holds any of `names`, each after `prefix`: the state is in
/// the layout those names belong to.
pub(crate) fn holds_any(
    reader: &StateReader<'_>,
    prefix: &str,
    names: &[&str],
) -> bool {
    names
        .iter()
        .any(|n| reader.contains(&format!("{prefix}{n}")))
}

/// `load_state_dict` for a module that reads either layout: `read` builds a module of the
/// same shape from `state` (in whichever layout it is), every problem is reported in the
/// state's own names, and only when everything fits are the values copied into `target`.
pub(crate) fn load_through<M: Module>(
    target: &M,
    state: &StateDict,
    read: impl FnOnce(&mut StateReader<'_>) -> M,
) -> Result<(), LoadError> {
    let mut reader = StateReader::new(state);
    let loaded = read(&mut reader);
    reader.finish()?;
    no_grad(|| {
        for ((_, to), (_, from)) in target
            .list_parameters()
            .iter()
            .zip(loaded.list_parameters())
        {
            to.assign(&from);
        }
    });
    Ok(())
}
