//! The GPU: the cases of the other benchmark files, run on the GPU the engine's `wgpu`
//! feature opens (`engine::Device::gpu`), each run ending when the GPU has finished its
//! work. Matrix products go up to 4096³, where a large GPU is far from its launch costs.
//!
//! ```console
//! cargo bench -p benchmarks --features wgpu --bench gpu
//! cargo bench -p benchmarks --features wgpu --bench gpu -- matmul
//! ```
//!
//! Without a GPU adapter it stops with the engine's explanation. On a software Vulkan
//! driver (lavapipe) it runs, slowly: the 4096³ product takes minutes there, so filter it
//! out (`-- matmul 256 1024` or `-- multi_head`).

use benchmarks::{Case, Pass, SEQ_LENS};
use divan::Bencher;
use engine::Device;

/// The sizes `N` of the square products on the GPU.
const GPU_MATMUL_SIZES: [usize; 4] = [256, 1024, 2048, 4096];

fn main() {
    match Device::gpu() {
        Ok(gpu) => eprintln!("timing on {gpu}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    divan::main();
}

fn gpu() -> Device {
    Device::gpu().expect("checked in main")
}

fn run(bencher: Bencher, case: Case) {
    let mut once = case.prepare_on(&gpu());
    bencher.bench_local(&mut once);
}

/// One square product on the GPU; divan's counter turns the time into FLOP/s.
#[divan::bench(args = GPU_MATMUL_SIZES, max_time = 5)]
fn matmul(bencher: Bencher, n: usize) {
    let flops = 2 * n * n * n;
    let mut once = Case::Matmul { n }.prepare_on(&gpu());
    bencher
        .counter(divan::counter::ItemsCount::new(flops))
        .bench_local(&mut once);
}

macro_rules! family_group {
    ($name:ident, $variant:ident) => {
        #[doc = concat!("The `", stringify!($name), "` cases on the GPU.")]
        #[divan::bench_group(max_time = 10)]
        mod $name {
            use super::*;

            #[divan::bench(args = SEQ_LENS)]
            fn forward(bencher: Bencher, len: usize) {
                run(
                    bencher,
                    Case::$variant {
                        len,
                        pass: Pass::Forward,
                    },
                );
            }

            #[divan::bench(args = SEQ_LENS)]
            fn forward_backward(bencher: Bencher, len: usize) {
                run(
                    bencher,
                    Case::$variant {
                        len,
                        pass: Pass::ForwardBackward,
                    },
                );
            }
        }
    };
}

family_group!(sdpa, Sdpa);
family_group!(multi_head, MultiHead);
family_group!(additive, Additive);

/// Decoding 256 tokens with the KV cache, and by recomputing the prefix.
#[divan::bench(args = [true, false], max_time = 10)]
fn decode(bencher: Bencher, kv_cache: bool) {
    run(bencher, Case::Decode { batch: 8, kv_cache });
}
