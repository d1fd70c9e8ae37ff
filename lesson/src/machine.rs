//! What a recorded measurement says about the machine it ran on.

/// The CPU's name from `/proc/cpuinfo` (Linux), with its family and model numbers and
/// the number of cores the program may use; elsewhere the architecture and the cores.
/// Recorded beside a chapter's timings, so that a reader can tell which machine's run a
/// page quotes.
pub fn cpu_name() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| {
        info.lines()
            .find(|l| l.split(':').next().is_some_and(|k| k.trim() == name))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    match (field("model name"), field("cpu family"), field("model")) {
        (Some(name), Some(family), Some(model)) => {
            format!("{name} (family {family}, model {model}), {cores} cores")
        }
        (Some(name), ..) => format!("{name}, {cores} cores"),
        _ => format!("a {} CPU, {cores} cores", std::env::consts::ARCH),
    }
}
