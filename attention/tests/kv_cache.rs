//! The KV cache: growth, reset, and incremental decoding equal to the full computation.

use attention::{CausalSelfAttention, CausalSelfAttentionConfig, KvCache, Mask};
use engine::{Tensor, no_grad};
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
fn decode(layer: &CausalSelfAttention, x: &Tensor, prompt: usize, cache: &mut KvCache) -> Tensor {
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
#[should_panic(expected = "CausalSelfAttention::prefill: the cache already holds 2 tokens")]
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
