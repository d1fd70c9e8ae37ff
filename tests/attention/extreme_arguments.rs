//! Sizes, offsets and counts at the edge of their type (`usize::MAX`) give the right
//! answer or a refusal that names the module and points at the caller's line: never an
//! overflow or a silently wrong mask inside the library.

use attention::prelude::*;
use attention::{
    LocalWindow, LshOptions, SparsePattern, local_window_attention_with,
    lsh_attention, sparse_attention,
};
use engine::Tensor;
use engine::random::rng_from_seed;

#[path = "../engine/common/mod.rs"]
mod engine_common;
use engine_common::refused_in;

fn randn(shape: &[usize], seed: u64) -> Tensor {
    Tensor::normal_with(shape, 0.0, 1.0, &mut rng_from_seed(seed))
}

#[test]
fn a_causal_offset_past_every_key_hides_nothing() {
    // The mask was `tril(offset as i64)`, and `usize::MAX as i64` is -1: every query lost
    // its own key and the first query saw nothing at all.
    let (q, k, v) = (
        randn(&[2, 3, 4], 1),
        randn(&[2, 5, 4], 2),
        randn(&[2, 5, 2], 3),
    );
    let (plain_out, plain_w) =
        scaled_dot_product_attention(&q, &k, &v, &Mask::none());
    for offset in [4, usize::MAX / 2, usize::MAX] {
        let (out, w) = scaled_dot_product_attention(
            &q,
            &k,
            &v,
            &Mask::causal_with_offset(offset),
        );
        assert_eq!(w.to_vec(), plain_w.to_vec(), "weights at offset {offset}");
        assert_eq!(
            out.to_vec(),
            plain_out.to_vec(),
            "output at offset {offset}"
        );
    }
    let scores = randn(&[2, 3, 5], 4);
    assert_eq!(
        masked_softmax(&scores, &Mask::causal_with_offset(usize::MAX), Fill::Safe)
            .to_vec(),
        scores.softmax(-1).to_vec()
    );
}

#[test]
fn windows_and_blocks_wider_than_the_sequence_are_full_attention() {
    let (q, k, v) = (
        randn(&[1, 6, 4], 5),
        randn(&[1, 6, 4], 6),
        randn(&[1, 6, 3], 7),
    );
    let close = |a: &Tensor, b: &Tensor, what: &str| {
        let diff = (a - b).abs().max().item();
        assert!(diff < 1e-6, "{what}: differs from full attention by {diff}");
    };
    let (full, _) = scaled_dot_product_attention(&q, &k, &v, &Mask::none());
    let (causal, _) =
        scaled_dot_product_attention(&q, &k, &v, &Mask::causal_with_offset(0));
    let wide = LocalWindow {
        window: usize::MAX,
        ..Default::default()
    };
    close(
        &local_window_attention_with(&q, &k, &v, &wide),
        &full,
        "window usize::MAX",
    );
    let wide_causal = LocalWindow {
        causal: true,
        ..wide
    };
    close(
        &local_window_attention_with(&q, &k, &v, &wide_causal),
        &causal,
        "causal window usize::MAX",
    );
    for pattern in [
        SparsePattern {
            block: usize::MAX,
            ..Default::default()
        },
        SparsePattern {
            block: 1,
            global: usize::MAX,
            ..Default::default()
        },
    ] {
        close(
            &sparse_attention(&q, &k, &v, &pattern),
            &full,
            &format!("{pattern:?}"),
        );
    }
}

#[test]
fn counts_too_large_for_memory_or_for_f32_are_refused_where_they_are_written() {
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0], [1]));
    refused_in(
        file!(),
        "Mask::repeat_for_heads: heads must be at least 1, found 0",
        || {
            let _ = lens.repeat_for_heads(0);
        },
    );
    refused_in(file!(), "repeat_interleave: ", || {
        let _ = lens.repeat_for_heads(usize::MAX);
    });
    let x = Tensor::ones([1, 3, 4]);
    for n_buckets in [(1 << 24) + 2, usize::MAX - 1] {
        let options = LshOptions {
            n_buckets,
            chunk: 1,
            ..Default::default()
        };
        refused_in(
            file!(),
            "lsh_attention: n_buckets must be at most 2²⁴ = 16777216",
            || {
                let _ = lsh_attention(&x, &x, &options);
            },
        );
    }
    let mut cache = KvCache::new(usize::MAX / 8);
    let token = Tensor::ones([1, 1, 1, 4]);
    refused_in(
        file!(),
        "KvCache::append: growing to 2305843009213693951 tokens",
        || {
            cache.append(&token, &token);
        },
    );
    let mut cache = KvCache::new(usize::MAX);
    refused_in(
        file!(),
        "KvCache::append: growing to 18446744073709551615 tokens",
        || {
            cache.append(&token, &token);
        },
    );
}
