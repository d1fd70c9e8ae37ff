//! The cases that the benchmarks time, defined once for every tool that runs them: the
//! `cargo bench` harness (`benches/`), the peak-memory table (`src/bin/peak_memory.rs`) and
//! the side-by-side with PyTorch (`src/bin/time_case.rs`, called by
//! `pytorch_side_by_side.py`).
//!
//! A [`Case`] is one computation at one size, with a name such as `multi_head/forward/256`.
//! [`Case::prepare`] builds its seeded inputs and modules and returns a closure that runs the
//! computation once, so setting up is never timed. Every case is `f32`, on the CPU (on one
//! thread when the tool calls [`one_thread_unless_asked`] first, as they all do), or on a
//! GPU through [`Case::prepare_on`] (`benches/gpu.rs`, with the `wgpu` feature).
//!
//! | family | what one run does |
//! |---|---|
//! | `matmul/N` | `[N, N] @ [N, N]` |
//! | `sdpa/PASS/T` | [`scaled_dot_product_attention`] on queries, keys and values `[B, T, d]` |
//! | `multi_head/PASS/T` | d2l's [`MultiHeadAttention`] (`d` hiddens, [`NUM_HEADS`] heads, no bias) |
//! | `additive/PASS/T` | d2l's [`AdditiveAttention`] (query, key and hidden sizes `d`), with the library's default fused scores ([`AdditiveScoring::Fused`]) |
//! | `additive_broadcast/PASS/T` | the same module computing its scores as d2l writes them ([`AdditiveScoring::Broadcast`]), through a `[B, T, T, d]` tensor |
//! | `decode/MODE/bB` | [`DECODE_TOKENS`] tokens through one [`CausalSelfAttention`] layer |
//!
//! with `B` = [`BATCH`], `d` = [`NUM_HIDDENS`], `T` in [`SEQ_LENS`] (queries and keys
//! alike). `PASS` is `forward` (run under [`no_grad`], as inference does) or
//! `forward_backward` (inputs and parameters require gradients; `output.sum().backward()`).
//! `MODE` is `kv_cache` (`prefill` of one token, then one `step` per token) or `recompute`
//! (`forward` over the whole prefix for every new token); decoding runs under [`no_grad`]
//! with the layer in evaluation mode.
//!
//! Cases whose [`estimated_bytes`](Case::estimated_bytes) exceed [`MEMORY_LIMIT`] are
//! listed but not run: additive attention with broadcast scores at `T = 1024` would build
//! two `[8, 1024, 1024, 256]` tensors of 8 GiB each.

use std::fmt;

use attention::prelude::*;
use engine::{Device, memory};

/// The batch size of the attention cases.
pub const BATCH: usize = 8;
/// The model width: feature size of queries, keys and values, and every hidden size.
pub const NUM_HIDDENS: usize = 256;
/// The number of heads of the multi-head and causal layers.
pub const NUM_HEADS: usize = 8;
/// The sizes `N` of the square matrix products.
pub const MATMUL_SIZES: [usize; 3] = [256, 512, 1024];
/// The sequence lengths of the attention cases (`Q = K = T`).
pub const SEQ_LENS: [usize; 3] = [64, 256, 1024];
/// How many tokens a decoding case produces.
pub const DECODE_TOKENS: usize = 256;
/// The batch sizes of the decoding cases.
pub const DECODE_BATCHES: [usize; 2] = [1, 8];
/// Cases whose [`Case::estimated_bytes`] exceed this (4 GiB) are skipped.
pub const MEMORY_LIMIT: usize = 4 << 30;
/// The seed every case starts from (see [`engine::manual_seed`]).
pub const SEED: u64 = 0;

const F32: usize = size_of::<f32>();

/// Whether an attention case runs the forward pass alone or with the backward pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The forward pass under [`no_grad`].
    Forward,
    /// The forward pass with gradients recorded, then `output.sum().backward()`.
    ForwardBackward,
}

/// One computation at one size; see the [crate documentation](crate) for each family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `[n, n] @ [n, n]`.
    Matmul {
        /// The matrix size.
        n: usize,
    },
    /// [`scaled_dot_product_attention`] over `len` queries and keys.
    Sdpa {
        /// Queries and keys per sequence.
        len: usize,
        /// Forward alone, or forward and backward.
        pass: Pass,
    },
    /// d2l's [`MultiHeadAttention`] over `len` queries and keys.
    MultiHead {
        /// Queries and keys per sequence.
        len: usize,
        /// Forward alone, or forward and backward.
        pass: Pass,
    },
    /// d2l's [`AdditiveAttention`] over `len` queries and keys, with fused scores.
    Additive {
        /// Queries and keys per sequence.
        len: usize,
        /// Forward alone, or forward and backward.
        pass: Pass,
    },
    /// d2l's [`AdditiveAttention`] over `len` queries and keys, with broadcast scores.
    AdditiveBroadcast {
        /// Queries and keys per sequence.
        len: usize,
        /// Forward alone, or forward and backward.
        pass: Pass,
    },
    /// [`DECODE_TOKENS`] tokens of a batch of `batch` through a [`CausalSelfAttention`].
    Decode {
        /// Sequences decoded together.
        batch: usize,
        /// With a [`KvCache`] (`true`) or recomputing the prefix every token (`false`).
        kv_cache: bool,
    },
}

impl fmt::Display for Pass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Pass::Forward => "forward",
            Pass::ForwardBackward => "forward_backward",
        })
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Case::Matmul { n } => write!(f, "matmul/{n}"),
            Case::Sdpa { len, pass } => write!(f, "sdpa/{pass}/{len}"),
            Case::MultiHead { len, pass } => write!(f, "multi_head/{pass}/{len}"),
            Case::Additive { len, pass } => write!(f, "additive/{pass}/{len}"),
            Case::AdditiveBroadcast { len, pass } => {
                write!(f, "additive_broadcast/{pass}/{len}")
            }
            Case::Decode { batch, kv_cache } => {
                let mode = if kv_cache { "kv_cache" } else { "recompute" };
                write!(f, "decode/{mode}/b{batch}")
            }
        }
    }
}

impl Case {
    /// Every case, in the order the tables list them, including those that are skipped.
    pub fn all() -> Vec<Case> {
        let mut cases: Vec<Case> = MATMUL_SIZES.map(|n| Case::Matmul { n }).to_vec();
        let families: [fn(usize, Pass) -> Case; 4] = [
            |len, pass| Case::Sdpa { len, pass },
            |len, pass| Case::MultiHead { len, pass },
            |len, pass| Case::Additive { len, pass },
            |len, pass| Case::AdditiveBroadcast { len, pass },
        ];
        for family in families {
            for pass in [Pass::Forward, Pass::ForwardBackward] {
                cases.extend(SEQ_LENS.map(|len| family(len, pass)));
            }
        }
        for kv_cache in [true, false] {
            cases
                .extend(DECODE_BATCHES.map(|batch| Case::Decode { batch, kv_cache }));
        }
        cases
    }

    /// The case with this name (as [`Display`](fmt::Display) writes it), if there is one.
    pub fn from_name(name: &str) -> Option<Case> {
        Case::all().into_iter().find(|c| c.to_string() == name)
    }

    /// A rough size of the tensors a run holds at its peak, from the largest ones, to decide
    /// what to skip before allocating anything. The factors were read off the measured
    /// peaks (`cargo run --release -p benchmarks --bin peak_memory` prints both columns):
    /// - matmul: the result, `n²` values;
    /// - dot-product attention (plain and multi-head): the scores, `S = B·T²` values per
    ///   head, `2·S` for the forward pass (scores and weights), `8·S` with the backward pass
    ///   (their gradients and the softmax's intermediates);
    /// - additive attention with fused scores: like dot-product attention, `2·S` and `8·S`;
    /// - with broadcast scores: the features `F = B·T²·h` (`h` = [`NUM_HIDDENS`]), `2·F` for
    ///   the forward pass (the sum and its `tanh`), `5·F` with the backward pass;
    /// - decoding without a cache: the scores over the whole prefix, `6·B·H·T²`; with a
    ///   cache: the keys and values read back from it, `3·B·T·d` (the cache's own buffers are
    ///   not tensors and are not counted).
    pub fn estimated_bytes(&self) -> usize {
        let copies = |pass, forward: usize, both: usize| match pass {
            Pass::Forward => forward,
            Pass::ForwardBackward => both,
        };
        let (b, h, t, d) = (BATCH, NUM_HEADS, DECODE_TOKENS, NUM_HIDDENS);
        let values = match *self {
            Case::Matmul { n } => n * n,
            Case::Sdpa { len, pass } => copies(pass, 2, 8) * b * len * len,
            Case::MultiHead { len, pass } => copies(pass, 2, 8) * b * h * len * len,
            Case::Additive { len, pass } => copies(pass, 2, 8) * b * len * len,
            Case::AdditiveBroadcast { len, pass } => {
                copies(pass, 2, 5) * b * len * len * d
            }
            Case::Decode { batch, kv_cache } if kv_cache => 3 * batch * t * d,
            Case::Decode { batch, .. } => 6 * batch * h * t * t,
        };
        values * F32
    }

    /// Whether the case is run: its [`estimated_bytes`](Case::estimated_bytes) are within
    /// [`MEMORY_LIMIT`].
    pub fn fits(&self) -> bool {
        self.estimated_bytes() <= MEMORY_LIMIT
    }

    /// Builds the case's seeded inputs and modules on the CPU, and returns a closure that
    /// runs the computation once (its output is dropped before it returns).
    pub fn prepare(&self) -> Box<dyn FnMut()> {
        self.prepare_on(&Device::Cpu)
    }

    /// Like [`prepare`](Case::prepare), with the inputs and modules moved to `device`
    /// before timing starts; each run ends by waiting for the device
    /// ([`Device::synchronize`]), so that a GPU's time is the time of the work, not of
    /// queueing it.
    pub fn prepare_on(&self, device: &Device) -> Box<dyn FnMut()> {
        manual_seed(SEED);
        let dev = device.clone();
        let mut run: Box<dyn FnMut()> = match *self {
            Case::Matmul { n } => {
                let (a, b) = (
                    Tensor::randn([n, n]).to(&dev),
                    Tensor::randn([n, n]).to(&dev),
                );
                Box::new(move || drop(no_grad(|| a.matmul(&b))))
            }
            Case::Sdpa { len, pass } => {
                attention_case(&dev, pass, Vec::new(), len, |q, k, v| {
                    scaled_dot_product_attention(q, k, v, &Mask::none()).0
                })
            }
            Case::MultiHead { len, pass } => {
                let mut module = MultiHeadAttention::new(MultiHeadAttentionConfig {
                    num_hiddens: NUM_HIDDENS,
                    num_heads: NUM_HEADS,
                    ..Default::default()
                });
                module.eval();
                module.to_device(&dev);
                attention_case(
                    &dev,
                    pass,
                    module.parameters(),
                    len,
                    move |q, k, v| module.forward(q, k, v, &Mask::none()),
                )
            }
            Case::Additive { len, pass } => {
                additive_case(&dev, len, pass, AdditiveScoring::Fused)
            }
            Case::AdditiveBroadcast { len, pass } => {
                additive_case(&dev, len, pass, AdditiveScoring::Broadcast)
            }
            Case::Decode { batch, kv_cache } => decode_case(&dev, batch, kv_cache),
        };
        device.synchronize();
        Box::new(move || {
            run();
            dev.synchronize();
        })
    }

    /// Runs the case once and returns the most bytes its tensors held at once beyond what
    /// was alive before (inputs and parameters excluded; outputs, intermediates and
    /// gradients included), as the engine counts them.
    pub fn peak_bytes(&self) -> usize {
        let mut run = self.prepare();
        measure_peak(&mut run)
    }
}

/// d2l's additive attention with sizes [`NUM_HIDDENS`], computing its scores as `scoring` says.
fn additive_case(
    device: &Device,
    len: usize,
    pass: Pass,
    scoring: AdditiveScoring,
) -> Box<dyn FnMut()> {
    let mut module = AdditiveAttention::new(AdditiveAttentionConfig {
        query_size: NUM_HIDDENS,
        key_size: NUM_HIDDENS,
        num_hiddens: NUM_HIDDENS,
        scoring,
        ..Default::default()
    });
    module.eval();
    module.to_device(device);
    attention_case(device, pass, module.parameters(), len, move |q, k, v| {
        module.forward(q, k, v, &Mask::none())
    })
}

/// Makes matrix products (`MATMUL_NUM_THREADS`) and element-wise kernels
/// (`ENGINE_NUM_THREADS`) single-threaded for this process, each unless its variable is
/// already set (the comparisons are one thread against one thread; set them to measure
/// more). Call it first thing in `main`, before any op and before any thread is started.
pub fn one_thread_unless_asked() {
    for variable in ["MATMUL_NUM_THREADS", "ENGINE_NUM_THREADS"] {
        if std::env::var_os(variable).is_none() {
            // SAFETY: called at the start of `main`, before this process starts any thread,
            // so no other thread can read the environment while it changes.
            unsafe { std::env::set_var(variable, "1") };
        }
    }
}

/// The most bytes live tensors held during one call of `run`, beyond those alive before it.
pub fn measure_peak(run: &mut dyn FnMut()) -> usize {
    memory::reset_peak();
    let before = memory::live_bytes();
    run();
    memory::peak_bytes() - before
}

/// Queries, keys and values `[BATCH, len, NUM_HIDDENS]`, and a closure running `forward` on
/// them for `pass`; `parameters` are the module's, whose gradients are cleared each run.
fn attention_case(
    device: &Device,
    pass: Pass,
    parameters: Vec<Tensor>,
    len: usize,
    forward: impl Fn(&Tensor, &Tensor, &Tensor) -> Tensor + 'static,
) -> Box<dyn FnMut()> {
    let shape = [BATCH, len, NUM_HIDDENS];
    let [q, k, v] = [(); 3].map(|()| Tensor::randn(shape).to(device));
    match pass {
        Pass::Forward => Box::new(move || drop(no_grad(|| forward(&q, &k, &v)))),
        Pass::ForwardBackward => {
            let inputs = [q, k, v].map(Tensor::requires_grad_);
            Box::new(move || {
                for t in inputs.iter().chain(&parameters) {
                    t.zero_grad();
                }
                let [q, k, v] = &inputs;
                forward(q, k, v).sum().backward();
            })
        }
    }
}

/// A causal self-attention layer and `[batch, DECODE_TOKENS, NUM_HIDDENS]` inputs; the
/// closure feeds the tokens one at a time, with or without a cache.
fn decode_case(device: &Device, batch: usize, kv_cache: bool) -> Box<dyn FnMut()> {
    let mut layer = CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens: NUM_HIDDENS,
        num_heads: NUM_HEADS,
        ..Default::default()
    });
    layer.eval();
    layer.to_device(device);
    let x = Tensor::randn([batch, DECODE_TOKENS, NUM_HIDDENS]).to(device);
    let token = move |x: &Tensor, t: usize| x.narrow(1, t, 1);
    if kv_cache {
        let mut cache = KvCache::new(DECODE_TOKENS);
        Box::new(move || {
            no_grad(|| {
                cache.reset();
                drop(layer.prefill(&token(&x, 0), &mut cache, &Mask::none()));
                for t in 1..DECODE_TOKENS {
                    drop(layer.step(&token(&x, t), &mut cache, &Mask::none()));
                }
            })
        })
    } else {
        Box::new(move || {
            no_grad(|| {
                for t in 1..=DECODE_TOKENS {
                    let y = layer.forward(&x.narrow(1, 0, t), &Mask::none());
                    drop(token(&y, t - 1)); // the new token's output
                }
            })
        })
    }
}
