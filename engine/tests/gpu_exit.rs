//! A process that ends with GPU kernels still queued exits cleanly. Launches return at
//! once, so `main` may end before its last kernels have run. lavapipe compiles a kernel
//! with LLVM on its queue thread when the kernel first runs, and a process that exited
//! during that compilation died of a signal (SIGSEGV, SIGABRT or SIGBUS) in about a third
//! of the runs that found Mesa's shader cache empty, rarely once the cache held the
//! kernels; the engine now waits for each kernel's first launch (see `gpu/launch.rs`). So
//! this test runs a short child process many times, two at a time, each with an empty
//! shader cache of its own, and requires every one to exit with status 0.
//!
//! Without that wait it fails nearly always, but not certainly: the race is one of timing,
//! and no child loses it every time. Compiled only with the `wgpu` feature; a machine
//! without a GPU adapter fails it, as the other GPU tests do (see `devices/harness.rs`).

#![cfg(feature = "wgpu")]

use std::process::{Child, Command, ExitStatus, Stdio};

#[path = "devices/harness.rs"]
mod harness;

use engine::{Device, Tensor};

const CHILD: &str = "ENGINE_GPU_EXIT_CHILD";
const TEST: &str = "a_process_that_exits_with_kernels_queued_exits_cleanly";

/// Pairs of children run at the same time.
const ROUNDS: usize = 10;

#[test]
fn a_process_that_exits_with_kernels_queued_exits_cleanly() {
    if std::env::var_os(CHILD).is_some() {
        queue_kernels();
        // At once, as a program's `main` returns: the harness's own reporting would give
        // the queued kernels time to finish first.
        std::process::exit(0);
    }
    if harness::test_gpu().is_none() {
        return;
    }
    let caches =
        std::env::temp_dir().join(format!("engine-gpu-exit-{}", std::process::id()));
    let mut spawned = 0;
    let mut spawn = || -> Child {
        // An empty cache, so that lavapipe compiles every kernel, as on a fresh machine.
        spawned += 1;
        let cache = caches.join(spawned.to_string());
        std::fs::create_dir_all(&cache).unwrap();
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", TEST, "--test-threads=1", "--quiet"])
            .env(CHILD, "1")
            .env("MESA_SHADER_CACHE_DIR", &cache)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the test binary starts again as a child")
    };
    let mut failure = None;
    'rounds: for round in 0..ROUNDS {
        let pair = [spawn(), spawn()];
        for (i, child) in pair.into_iter().enumerate() {
            let output = child.wait_with_output().unwrap();
            if !output.status.success() {
                failure = Some(format!(
                    "child {} of {}: a process that queued kernels and exited {}\n{}",
                    2 * round + i + 1,
                    2 * ROUNDS,
                    describe(output.status),
                    String::from_utf8_lossy(&output.stderr)
                ));
                break 'rounds;
            }
        }
    }
    std::fs::remove_dir_all(&caches).unwrap();
    if let Some(failure) = failure {
        panic!("{failure}");
    }
}

/// What the child does before it exits: the doctest of `Module::to_device` in short. It
/// opens the GPU and queues a few kernels that have not run before in this process
/// (lavapipe compiles each on its first run), reading nothing back.
fn queue_kernels() {
    let gpu = Device::gpu().expect("this test needs a GPU adapter");
    let x = Tensor::ones([4, 3]).to(&gpu);
    let w = Tensor::ones([2, 3]).to(&gpu);
    let b = Tensor::ones([2]).to(&gpu);
    let y = x.matmul_t(&w) + &b;
    let _queued = (y.exp(), y.tanh());
}

/// How a child ended, in words: its exit code, or the signal that killed it.
fn describe(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("was killed by signal {signal}{name}");
        }
    }
    format!("exited with {status}")
}
