//! Which SIMD kernels compute the results: the best the CPU has, or the path you name.
//!
//! Every kernel of the engine has one definition of its result, bit for bit: the order of
//! its additions, where it fuses a multiply and an add, and the polynomial of every
//! function such as `exp` or `tanh`. Each definition is computed on one of four paths,
//! which give the same bits and differ only in speed:
//!
//! | path | CPUs | matrix products | element-wise kernels |
//! |---|---|---|---|
//! | [`KernelPath::Avx512`] | x86-64 with AVX-512F | 12 × 32 tiles, 16 lanes | 16 lanes |
//! | [`KernelPath::Avx2`] | x86-64 with AVX2 and FMA | 6 × 16 tiles, 8 lanes | 8 lanes |
//! | [`KernelPath::Neon`] | aarch64 (Apple Silicon, Arm servers) | 12 × 8 tiles, 4 lanes | 4 lanes (the target's baseline) |
//! | [`KernelPath::Portable`] | any | 4 × 16 tiles in plain Rust, one fused multiply-add per step | the target's baseline (4 lanes of SSE2 on x86-64) |
//!
//! So a training run, a tour or a test prints the same numbers on a laptop with AVX2, a
//! server with AVX-512, a Mac with Apple Silicon and any other CPU. The portable path is
//! the definition in plain Rust, with no instruction the target may lack, and tests hold
//! every other path to its bits.
//!
//! **Why the portable path's products are slower on x86-64.** Every step of a matrix
//! product is a fused multiply-add ([`f32::mul_add`]: one rounding), because that is what
//! the FMA instructions of the fast paths compute. The baseline x86-64 target has no FMA
//! instruction, so there `mul_add` compiles to a call to `fmaf` (the exact operation,
//! done in software on a CPU without FMA), one per element, which a loop cannot vectorise.
//! The portable micro-kernel therefore fuses each step of its 4 × 16 tile through `f64`
//! instead (`cpu/gemm/fused.rs`): the product of two `f32`s is exact in `f64`, and one
//! check on the sum says whether rounding it twice gave the once-rounded result, which
//! it does except in rare ties and tiny results; a row that needs it is done again with
//! `mul_add`. The same bits, in 2 lanes of SSE2 at a time. The element-wise kernels
//! (`exp`, `tanh`, softmax...) are defined with a separate multiply and add, so they
//! vectorise on the baseline too (4 lanes of SSE2). On aarch64, fused multiply-add
//! (`fmla`) and NEON's 4 lanes are part of the baseline: there the portable micro-kernel
//! compiles to 16 vector multiply-adds a step, no call, and the element-wise kernels of the
//! portable and the NEON paths are the same code. The NEON path adds a micro-kernel for
//! the products that keeps a 12 × 8 tile in registers (`cpu/gemm/neon.rs`).
//!
//! The path is, in order: the one set for this thread by [`with_path`], else the
//! environment variable `ENGINE_KERNEL` (`avx512`, `avx2`, `neon` or `portable`, read once
//! per process), else the best the CPU has. Naming a path the CPU lacks stops the program with a
//! message that says which paths it has:
//!
//! ```console
//! ENGINE_KERNEL=portable cargo run -p chapter09
//! ```
//!
//! ```
//! use engine::kernels::{self, KernelPath};
//!
//! // The same product on every path this CPU has: the same bits.
//! let a = engine::Tensor::randn([3, 40]);
//! let b = engine::Tensor::randn([40, 50]);
//! let on = |path| kernels::with_path(path, || a.matmul(&b).to_vec());
//! for path in KernelPath::supported() {
//!     assert_eq!(on(path), on(KernelPath::Portable), "{path}");
//! }
//! ```

use std::cell::Cell;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// A set of kernels (see the [module](self) documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelPath {
    /// AVX-512F: 16 lanes of `f32`, 32 vector registers.
    Avx512,
    /// AVX2 with FMA: 8 lanes of `f32`, 16 vector registers.
    Avx2,
    /// NEON on aarch64: 4 lanes of `f32`, 32 vector registers, fused multiply-add.
    Neon,
    /// Plain Rust, one element at a time: the definition, on any CPU.
    Portable,
}

/// The name of the environment variable that chooses the path.
pub const ENV_VAR: &str = "ENGINE_KERNEL";

impl KernelPath {
    /// Every path, fastest first.
    pub const ALL: [KernelPath; 4] = [
        KernelPath::Avx512,
        KernelPath::Avx2,
        KernelPath::Neon,
        KernelPath::Portable,
    ];

    /// The name `ENGINE_KERNEL` takes: `avx512`, `avx2`, `neon` or `portable`.
    pub fn name(self) -> &'static str {
        match self {
            KernelPath::Avx512 => "avx512",
            KernelPath::Avx2 => "avx2",
            KernelPath::Neon => "neon",
            KernelPath::Portable => "portable",
        }
    }

    /// Whether this CPU can run the path.
    pub fn is_supported(self) -> bool {
        match self {
            KernelPath::Portable => true,
            #[cfg(target_arch = "x86_64")]
            KernelPath::Avx512 => std::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            KernelPath::Avx2 => {
                std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            KernelPath::Avx512 | KernelPath::Avx2 => false,
            #[cfg(target_arch = "aarch64")]
            KernelPath::Neon => std::arch::is_aarch64_feature_detected!("neon"),
            #[cfg(not(target_arch = "aarch64"))]
            KernelPath::Neon => false,
        }
    }

    /// The paths this CPU can run, fastest first (always ending with
    /// [`KernelPath::Portable`]).
    pub fn supported() -> Vec<KernelPath> {
        KernelPath::ALL
            .into_iter()
            .filter(|p| p.is_supported())
            .collect()
    }

    /// The fastest path this CPU can run.
    pub fn best() -> KernelPath {
        KernelPath::supported()[0]
    }
}

impl fmt::Display for KernelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What is wrong with a path's name (see [`KernelPath::from_str`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPath(String);

impl fmt::Display for UnknownPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown kernel path {:?}: expected avx512, avx2, neon or portable",
            self.0
        )
    }
}

impl std::error::Error for UnknownPath {}

impl FromStr for KernelPath {
    type Err = UnknownPath;

    /// Reads `avx512`, `avx2`, `neon` or `portable` (any case, spaces around ignored).
    fn from_str(s: &str) -> Result<KernelPath, UnknownPath> {
        let name = s.trim().to_ascii_lowercase();
        KernelPath::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| UnknownPath(s.to_string()))
    }
}

thread_local! {
    /// The path set by [`with_path`] on this thread, if any.
    static CHOSEN: Cell<Option<KernelPath>> = const { Cell::new(None) };
}

/// The path kernels called from this thread use (see the [module](self) documentation).
///
/// # Panics
/// When `ENGINE_KERNEL` names a path this CPU lacks, or is not a path's name.
pub fn active() -> KernelPath {
    CHOSEN.get().unwrap_or_else(process_default)
}

/// Runs `f` with every kernel it calls on this thread on `path`, then restores the path
/// this thread had (also when `f` panics). Kernels that split their work between threads
/// carry the path to them.
///
/// # Panics
/// When the CPU cannot run `path`.
#[track_caller]
pub fn with_path<R>(path: KernelPath, f: impl FnOnce() -> R) -> R {
    if let Err(message) = check_supported(path, "with_path") {
        panic!("{message}");
    }
    struct Restore(Option<KernelPath>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CHOSEN.set(self.0);
        }
    }
    let _restore = Restore(CHOSEN.replace(Some(path)));
    f()
}

/// `Ok` when the CPU can run `path`; otherwise a message for `asked_by`.
fn check_supported(path: KernelPath, asked_by: &str) -> Result<(), String> {
    if path.is_supported() {
        return Ok(());
    }
    let have: Vec<&str> = KernelPath::supported().iter().map(|p| p.name()).collect();
    Err(format!(
        "{asked_by}: this CPU cannot run the {path} kernels ({}); it can run: {}",
        match path {
            KernelPath::Avx512 => "they need AVX-512F",
            KernelPath::Avx2 => "they need AVX2 and FMA",
            KernelPath::Neon => "they need an aarch64 CPU with NEON",
            KernelPath::Portable => "unreachable",
        },
        have.join(", ")
    ))
}

/// The path of threads that have not called [`with_path`]: `ENGINE_KERNEL` or the best.
fn process_default() -> KernelPath {
    static DEFAULT: OnceLock<Result<KernelPath, String>> = OnceLock::new();
    let chosen = DEFAULT.get_or_init(|| match std::env::var(ENV_VAR) {
        Err(_) => Ok(KernelPath::best()),
        Ok(value) => from_env(&value),
    });
    match chosen {
        Ok(path) => *path,
        Err(message) => panic!("{message}"),
    }
}

/// The path `ENGINE_KERNEL=value` asks for, or why it cannot be had.
fn from_env(value: &str) -> Result<KernelPath, String> {
    let path = value.parse::<KernelPath>().map_err(|e| {
        format!(
            "{ENV_VAR}={value}: {e} (or leave it unset for the best this CPU has)"
        )
    })?;
    check_supported(path, &format!("{ENV_VAR}={value}"))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_unknown_ones_are_refused() {
        for path in KernelPath::ALL {
            assert_eq!(path.name().parse::<KernelPath>(), Ok(path));
            assert_eq!(path.to_string(), path.name());
        }
        assert_eq!(" AVX2 ".parse::<KernelPath>(), Ok(KernelPath::Avx2));
        let err = "sse".parse::<KernelPath>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown kernel path \"sse\": expected avx512, avx2, neon or portable"
        );
        let env = from_env("sve").unwrap_err();
        assert!(
            env.starts_with("ENGINE_KERNEL=sve: unknown kernel path"),
            "{env}"
        );
        assert!(
            env.ends_with("(or leave it unset for the best this CPU has)"),
            "{env}"
        );
    }

    #[test]
    fn the_portable_path_runs_everywhere_and_is_the_last_supported() {
        let supported = KernelPath::supported();
        assert_eq!(supported.last(), Some(&KernelPath::Portable));
        assert_eq!(KernelPath::best(), supported[0]);
        assert_eq!(from_env("portable"), Ok(KernelPath::Portable));
    }

    #[test]
    fn every_cpu_has_its_own_fast_path_first() {
        let want = if cfg!(target_arch = "aarch64") {
            vec![KernelPath::Neon, KernelPath::Portable]
        } else if cfg!(target_arch = "x86_64") {
            // Which of the two x86-64 paths depends on the CPU.
            let mut paths =
                vec![KernelPath::Avx512, KernelPath::Avx2, KernelPath::Portable];
            paths.retain(|p| p.is_supported());
            paths
        } else {
            vec![KernelPath::Portable]
        };
        assert_eq!(KernelPath::supported(), want);
        assert_eq!(
            KernelPath::Neon.is_supported(),
            cfg!(target_arch = "aarch64")
        );
    }

    #[test]
    fn a_path_the_cpu_lacks_is_refused_with_the_paths_it_has() {
        for path in KernelPath::ALL.into_iter().filter(|p| !p.is_supported()) {
            let message = from_env(path.name()).unwrap_err();
            assert!(message.contains("this CPU cannot run"), "{message}");
            assert!(message.ends_with("portable"), "{message}");
        }
    }

    #[test]
    fn with_path_sets_the_path_for_its_closure_only_even_when_it_panics() {
        let outside = active();
        let inside = with_path(KernelPath::Portable, active);
        assert_eq!(inside, KernelPath::Portable);
        assert_eq!(active(), outside);
        let panicked = std::panic::catch_unwind(|| {
            with_path(KernelPath::Portable, || panic!("inside"));
        });
        assert!(panicked.is_err());
        assert_eq!(active(), outside);
    }
}
