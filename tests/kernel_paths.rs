//! The same bits on every kernel path (`engine::kernels`): the attention modules and
//! exact attention in blocks, their backward passes and the element-wise functions give exactly what the portable path
//! gives, on every path this CPU has; and `ENGINE_KERNEL` chooses the path of a whole
//! process, or stops it with a message when the CPU lacks the path.
//!
//! Chapter 9's tests replay the first 100 steps of its recorded training run on every path,
//! and `.ci/same-bits` compares every chapter's tour across paths and thread counts.

use std::process::Command;

use attention::prelude::*;
use engine::kernels::{self, KernelPath};

/// Every result of the computation below, as bits: outputs, then gradients.
type Bits = Vec<Vec<u32>>;

fn bits(tensors: &[Tensor]) -> Bits {
    tensors
        .iter()
        .map(|t| t.to_vec().iter().map(|v| v.to_bits()).collect())
        .collect()
}

/// Multi-head, additive (fused and broadcast) and scaled dot-product attention with masks,
/// forward and backward, and the element-wise functions on values that reach their edges.
fn compute() -> Bits {
    manual_seed(7);
    // Sizes that are no multiple of any tile of the matrix kernels.
    let (b, q, k, d) = (2, 37, 29, 40);
    let queries = Tensor::randn([b, q, d]).requires_grad_();
    let keys = Tensor::randn([b, k, d]).requires_grad_();
    let values = Tensor::randn([b, k, d]).requires_grad_();
    let lens = Tensor::from_vec(vec![29.0, 11.0], [2]);
    let mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 48,
        num_heads: 4,
        query_size: Some(d),
        key_size: Some(d),
        value_size: Some(d),
        ..Default::default()
    });
    let multi_head = mha.forward(&queries, &keys, &values, &Mask::valid_lens(&lens));
    let mut outputs = vec![multi_head.clone()];
    let mut loss = multi_head.sum();
    for scoring in [AdditiveScoring::Fused, AdditiveScoring::Broadcast] {
        let additive = AdditiveAttention::new(AdditiveAttentionConfig {
            query_size: d,
            key_size: d,
            num_hiddens: 24,
            scoring,
            ..Default::default()
        });
        let out =
            additive.forward(&queries, &keys, &values, &Mask::valid_lens(&lens));
        loss = loss + out.square().mean();
        outputs.push(out);
    }
    let self_keys = keys.narrow(1, 0, 29);
    let (sdpa, weights) = scaled_dot_product_attention(
        &queries.narrow(1, 0, 29),
        &self_keys,
        &values,
        &Mask::causal(),
    );
    loss = loss + sdpa.sum() + weights.log_softmax(-1).mean();
    outputs.extend([sdpa, weights]);
    // Exact attention in blocks: 8 keys a block over 29, causal with lengths.
    let blocked = queries.blocked_attention(
        &keys,
        &values,
        &engine::BlockedAttentionOptions {
            block: 8,
            causal_offset: Some(3),
            lengths: Some(lens.reshape([2, 1])),
            ..Default::default()
        },
    );
    loss = loss + blocked.square().mean();
    outputs.push(blocked);
    // Long rows, large products, and a product of a few rows (the small-product kernel).
    let x = Tensor::randn([300, 300]).requires_grad_();
    let y = Tensor::randn([300, 301]);
    outputs.push(x.matmul(&y));
    outputs.push(x.narrow(0, 0, 5).matmul(&y));
    outputs.push(x.narrow(0, 0, 3).matmul_t(&y.narrow(1, 0, 300)));
    loss = loss + x.matmul(&y).tanh().mean();
    // Element-wise functions over a wide range, with their edges and special values.
    let mut wide: Vec<f32> = (-2000..=2000).map(|i| i as f32 * 0.05).collect();
    wide.extend([
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        88.7,
        -87.4,
        1e30,
        -1e30,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]);
    let n = wide.len();
    let z = Tensor::from_vec(wide, [n]);
    outputs.extend([
        z.exp(),
        z.abs().log(),
        z.tanh(),
        z.sigmoid(),
        z.gelu(engine::GeluApprox::Erf),
        z.gelu(engine::GeluApprox::Tanh),
        z.relu(),
        z.abs().sqrt(),
        z.softmax(0),
    ]);
    loss.backward();
    for t in [&queries, &keys, &values, &x] {
        outputs.push(t.grad().expect("takes part in the loss"));
    }
    for p in mha.parameters() {
        outputs.push(p.grad().expect("takes part in the loss"));
    }
    outputs.push(loss);
    bits(&outputs)
}

#[test]
fn every_path_gives_the_bits_of_the_portable_path() {
    let portable = kernels::with_path(KernelPath::Portable, compute);
    for path in KernelPath::supported() {
        let got = kernels::with_path(path, compute);
        assert_eq!(got.len(), portable.len());
        for (i, (a, b)) in got.iter().zip(&portable).enumerate() {
            let first = a.iter().zip(b).position(|(x, y)| x != y);
            assert!(
                a.len() == b.len() && first.is_none(),
                "result {i}: the {path} path differs from the portable path at element {first:?}"
            );
        }
    }
}

/// A digest of every bit of [`compute`]'s results (64-bit FNV-1a over the bits of each
/// value), with every NaN counted as one value: IEEE 754 leaves the sign and payload of a
/// NaN that an operation produces to the CPU (and Rust to the compiler), and x86-64 and
/// aarch64 differ there: `gelu(NaN)` is `-NaN` on one and `NaN` on the other. Every other
/// bit is the same.
fn digest(bits: &Bits) -> u64 {
    let canonical = |b: u32| {
        if f32::from_bits(b).is_nan() {
            f32::NAN.to_bits()
        } else {
            b
        }
    };
    bits.iter()
        .flatten()
        .flat_map(|&b| canonical(b).to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, byte| {
            (h ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
        })
}

/// The digest of [`compute`] on x86-64 (its AVX-512, AVX2 and portable paths) and on
/// aarch64 (its NEON and portable paths, which CI runs under `qemu-aarch64`, see
/// `.ci/aarch64`): the same bits on every CPU.
const DIGEST_ON_EVERY_CPU: u64 = 0xd8f0_a9f5_81b1_5bac;

#[test]
fn every_path_of_this_cpu_gives_the_bits_of_every_other_cpu() {
    for path in KernelPath::supported() {
        let got = kernels::with_path(path, || digest(&compute()));
        assert_eq!(
            got, DIGEST_ON_EVERY_CPU,
            "the {path} path: digest {got:#018x}, recorded {DIGEST_ON_EVERY_CPU:#018x}"
        );
    }
}

/// Run by the tests below in a child process, with `ENGINE_KERNEL` set: prints the path
/// and a digest of the results.
#[test]
fn print_path_and_results_for_the_parent() {
    if std::env::var_os("PRINT_PATH").is_some() {
        println!(
            "PATH {} DIGEST {:016x}",
            kernels::active(),
            digest(&compute())
        );
    }
}

/// A command that runs this test binary again: itself, or, when it was built for aarch64
/// Linux and cargo runs it through an emulator (`.ci/aarch64` sets
/// `CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER` to `qemu-aarch64 ...`), through the same
/// emulator.
fn this_test_binary() -> Command {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let runner = if cfg!(all(target_arch = "aarch64", target_os = "linux")) {
        std::env::var("CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER").ok()
    } else {
        None
    };
    let mut words = runner.iter().flat_map(|r| r.split_whitespace());
    match words.next() {
        None => Command::new(exe),
        Some(program) => {
            let mut command = Command::new(program);
            command.args(words).arg(exe);
            command
        }
    }
}

/// Runs this test binary again with `ENGINE_KERNEL=value`: its standard output and error.
fn child(value: &str) -> (String, String) {
    let out = this_test_binary()
        .args([
            "--exact",
            "print_path_and_results_for_the_parent",
            "--nocapture",
        ])
        .env("PRINT_PATH", "1")
        .env("ENGINE_KERNEL", value)
        .output()
        .expect("the test binary runs again");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn engine_kernel_chooses_the_path_of_a_process_and_the_bits_stay_the_same() {
    let line = |out: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix("PATH ").map(str::to_string))
            .unwrap_or_else(|| panic!("no PATH line:\n{out}"))
    };
    let here = digest(&compute());
    for path in KernelPath::supported() {
        let (out, _) = child(path.name());
        assert_eq!(line(&out), format!("{path} DIGEST {here:016x}"));
    }
}

#[test]
fn engine_kernel_naming_no_path_stops_the_process_with_the_choices() {
    let (out, err) = child("sse4");
    assert!(!out.contains("PATH "), "{out}");
    assert!(
        err.contains(
            "ENGINE_KERNEL=sse4: unknown kernel path \"sse4\": expected avx512, avx2, neon or portable"
        ),
        "{err}"
    );
}
