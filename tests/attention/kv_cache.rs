//! The KV cache: growth, reset, and incremental decoding equal to the full computation.

use attention::{
    AttentionWeights, CausalSelfAttention, CausalSelfAttentionConfig, Fill, KvCache,
    Mask,
};
use engine::{Tensor, memory, no_grad};
use proptest::prelude::*;

fn layer(num_hiddens: usize, num_heads: usize, bias: bool) -> CausalSelfAttention {
    CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens,
        num_heads,
        bias,
        ..Default::default()
    })
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

/// Runs `prefill` on the first `prompt` tokens, then `step` for each following token.
fn decode(
    layer: &CausalSelfAttention,
    x: &Tensor,
    prompt: usize,
    cache: &mut KvCache,
) -> Tensor {
    no_grad(|| {
        let none = Mask::none();
        let mut rows = vec![layer.prefill(&x.narrow(1, 0, prompt), cache, &none)];
        for t in prompt..x.shape()[1] {
            rows.push(layer.step(&x.narrow(1, t, 1), cache, &none));
        }
        Tensor::concat(&rows, 1)
    })
}

#[test]
fn appending_past_the_initial_capacity_grows_and_keeps_every_token() {
    let mut cache = KvCache::new(2);
    let k: Vec<Tensor> = (0..5)
        .map(|i| Tensor::full([1, 2, 1, 3], i as f32))
        .collect();
    let v: Vec<Tensor> = (0..5)
        .map(|i| Tensor::full([1, 2, 1, 1], 10.0 + i as f32))
        .collect();
    let mut capacities = vec![];
    for i in 0..5 {
        cache.append(&k[i], &v[i]);
        capacities.push(cache.capacity());
    }
    assert_eq!(capacities, vec![2, 2, 4, 4, 8]);
    assert_eq!(cache.len(), 5);
    assert_eq!(cache.keys().to_vec(), Tensor::concat(&k, 2).to_vec());
    assert_eq!(cache.values().to_vec(), Tensor::concat(&v, 2).to_vec());
}

#[test]
fn a_reset_cache_does_not_leak_the_previous_sequence() {
    engine::manual_seed(11);
    let layer = layer(8, 2, true);
    let first = Tensor::randn([2, 6, 8]);
    let second = Tensor::randn([2, 4, 8]);
    let mut reused = KvCache::new(3);
    decode(&layer, &first, 2, &mut reused);
    reused.reset();
    assert!(reused.is_empty());
    let after_reset = decode(&layer, &second, 1, &mut reused);
    let fresh = decode(&layer, &second, 1, &mut KvCache::new(3));
    assert_eq!(after_reset.to_vec(), fresh.to_vec());
    let full = no_grad(|| layer.forward(&second, &Mask::none()));
    assert!(max_abs_diff(&after_reset, &full) < 1e-5);
}

#[test]
fn a_reset_cache_accepts_a_new_batch_size() {
    let mut cache = KvCache::new(4);
    cache.append(&Tensor::ones([2, 1, 3, 4]), &Tensor::ones([2, 1, 3, 4]));
    cache.reset();
    cache.append(&Tensor::ones([5, 1, 1, 4]), &Tensor::ones([5, 1, 1, 4]));
    assert_eq!(cache.keys().shape(), &[5, 1, 1, 4]);
}

#[test]
#[should_panic(
    expected = "KvCache::append: the cache holds [B, H, dk, dv] = [2, 1, 4, 4] but the new tokens have [3, 1, 4, 4]; hint: reset() the cache between sequences"
)]
fn appending_another_layout_without_reset_is_refused() {
    let mut cache = KvCache::new(4);
    cache.append(&Tensor::ones([2, 1, 1, 4]), &Tensor::ones([2, 1, 1, 4]));
    cache.append(&Tensor::ones([3, 1, 1, 4]), &Tensor::ones([3, 1, 1, 4]));
}

#[test]
#[should_panic(
    expected = "CausalSelfAttention::prefill: the cache already holds 2 tokens"
)]
fn prefill_into_a_used_cache_is_refused() {
    let layer = layer(4, 1, false);
    let mut cache = KvCache::new(4);
    let x = Tensor::ones([1, 2, 4]);
    no_grad(|| {
        layer.prefill(&x, &mut cache, &Mask::none());
        layer.prefill(&x, &mut cache, &Mask::none());
    });
}

#[test]
#[should_panic(
    expected = "CausalSelfAttention::step: x must be one token, [B, 1, num_hiddens], found [1, 2, 4]"
)]
fn step_takes_exactly_one_token() {
    let layer = layer(4, 1, false);
    no_grad(|| {
        layer.step(
            &Tensor::ones([1, 2, 4]),
            &mut KvCache::new(4),
            &Mask::none(),
        )
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// For random batch sizes, head counts, prompt and decode lengths and initial
    /// capacities, step-by-step decoding equals the rows of the full causal computation.
    #[test]
    fn incremental_decoding_equals_full_causal_attention(
        batch in 1usize..4,
        heads in prop::sample::select(vec![1usize, 2, 4]),
        prompt in 1usize..5,
        decode_len in 0usize..6,
        capacity in 1usize..8,
        seed in 0u64..1000,
    ) {
        engine::manual_seed(seed);
        let layer = layer(8, heads, true);
        let x = Tensor::randn([batch, prompt + decode_len, 8]);
        let full = no_grad(|| layer.forward(&x, &Mask::none()));
        let mut cache = KvCache::new(capacity);
        let stepped = decode(&layer, &x, prompt, &mut cache);
        prop_assert_eq!(cache.len(), prompt + decode_len);
        prop_assert!(max_abs_diff(&full, &stepped) < 1e-5, "difference {}", max_abs_diff(&full, &stepped));
    }
}

#[test]
fn a_reset_keeps_the_allocation_for_the_next_sequence() {
    let mut cache = KvCache::new(2);
    for _ in 0..5 {
        cache.append(&Tensor::ones([1, 2, 1, 3]), &Tensor::ones([1, 2, 1, 3]));
    }
    assert_eq!(cache.capacity(), 8);
    cache.reset();
    cache.append(&Tensor::ones([1, 2, 1, 3]), &Tensor::ones([1, 2, 1, 3]));
    assert_eq!(cache.capacity(), 8, "no regrowth from scratch");
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.keys().to_vec(), vec![1.0; 6]);
}

#[test]
fn an_empty_sequence_gives_an_empty_output() {
    let layer = layer(4, 2, true);
    assert_eq!(
        layer
            .forward(&Tensor::zeros([1, 0, 4]), &Mask::none())
            .shape(),
        &[1, 0, 4]
    );
}

#[test]
#[should_panic(
    expected = "KvCache::append: growing to 18446744073709551615 tokens of [B, H, dk, dv] = [1, 2, 4, 4] needs more bytes than a usize can count"
)]
fn an_absurd_initial_capacity_is_refused_with_a_message_at_the_first_append() {
    let mut cache = KvCache::new(usize::MAX);
    cache.append(&Tensor::ones([1, 2, 1, 4]), &Tensor::ones([1, 2, 1, 4]));
}

#[test]
#[should_panic(expected = "more than this machine can allocate")]
fn growth_is_refused_when_the_values_alone_cannot_be_allocated() {
    // Keys of 1 feature fit (16 MiB); values of 2^24 features for 2^22 tokens would take
    // 256 TiB, more than a 64-bit machine's address space, so the refusal does not depend
    // on how much memory the machine has.
    let mut cache = KvCache::new(1 << 22);
    cache.append(
        &Tensor::ones([1, 1, 1, 1]),
        &Tensor::ones([1, 1, 1, 1 << 24]),
    );
}

#[test]
fn prefill_gives_the_bits_of_forward() {
    engine::manual_seed(5);
    let layer = layer(12, 3, true);
    let x = Tensor::randn([2, 6, 12]);
    let full = no_grad(|| layer.forward(&x, &Mask::none()));
    let prefilled =
        no_grad(|| layer.prefill(&x, &mut KvCache::new(2), &Mask::none()));
    assert_eq!(prefilled.to_vec(), full.to_vec());
}

/// Steps that read the cache in place, with heads of 13 features (not a multiple of the
/// 8 that the in-place products work in), padding masks, and each fill, equal the rows
/// of the full computation, and their attention weights equal its last row's.
#[test]
fn steps_with_padding_and_any_fill_equal_the_full_computation() {
    engine::manual_seed(17);
    let x = Tensor::randn([2, 9, 26]);
    // The second sequence's tokens 3 and 6 are padding.
    let mut keep = vec![1.0; 18];
    keep[9 + 3] = 0.0;
    keep[9 + 6] = 0.0;
    let keep = Tensor::from_vec(keep, [2, 9]);
    for fill in [Fill::Safe, Fill::D2l, Fill::Constant(-1e9)] {
        let layer = CausalSelfAttention::new(CausalSelfAttentionConfig {
            num_hiddens: 26,
            num_heads: 2,
            fill,
            ..Default::default()
        });
        let mut cache = KvCache::new(1);
        no_grad(|| {
            let prompt = Mask::key_padding(&keep.narrow(1, 0, 2));
            layer.prefill(&x.narrow(1, 0, 2), &mut cache, &prompt);
            for t in 2..9 {
                let mask = Mask::key_padding(&keep.narrow(1, 0, t + 1));
                let stepped = layer.step(&x.narrow(1, t, 1), &mut cache, &mask);
                let step_weights =
                    layer.last_attention_weights().expect("kept by the step");
                let full =
                    layer.forward(&x.narrow(1, 0, t + 1), &mask).narrow(1, t, 1);
                let full_weights = layer
                    .last_attention_weights()
                    .expect("kept by forward")
                    .narrow(2, t, 1);
                assert!(
                    max_abs_diff(&stepped, &full) < 1e-5,
                    "{fill:?}, token {t}: outputs differ by {}",
                    max_abs_diff(&stepped, &full)
                );
                assert!(
                    max_abs_diff(&step_weights, &full_weights) < 1e-6,
                    "{fill:?}, token {t}: weights differ by {}",
                    max_abs_diff(&step_weights, &full_weights)
                );
            }
        });
    }
}

/// A step attends to the stored keys and values where they are: the memory it uses beyond
/// what it started with stays far below one copy of them (which is what `keys()` and
/// `values()` make).
#[test]
fn a_step_does_not_copy_the_cache() {
    engine::manual_seed(2);
    let layer = layer(64, 1, true);
    let x = Tensor::randn([1, 1001, 64]);
    let mut cache = KvCache::new(1001);
    no_grad(|| layer.prefill(&x.narrow(1, 0, 1000), &mut cache, &Mask::none()));
    let token = x.narrow(1, 1000, 1);
    let one_copy = cache.len() * 64 * size_of::<f32>(); // the keys alone: 256,000 bytes
    memory::reset_peak();
    let before = memory::live_bytes();
    let y = no_grad(|| layer.step(&token, &mut cache, &Mask::none()));
    let used = memory::peak_bytes() - before;
    assert_eq!(y.shape(), &[1, 1, 64]);
    assert!(
        used < one_copy / 8,
        "the step used {used} bytes at its peak; one copy of the keys is {one_copy}"
    );
}
