//! Every attention module, forward and backward, on the CPU and on the GPU with the same
//! weights and inputs: outputs, input gradients and parameter gradients must agree within
//! f32 tolerances (the harness is the engine's, `engine/tests/devices/harness.rs`). Masks
//! and fills included; the KV cache's decoding steps too.

use crate::harness;

use attention::prelude::*;
use attention::{
    AdditiveScoring, KvCache, MultiHeadAdditiveAttention,
    MultiHeadAdditiveAttentionConfig,
};
use engine::nn::Module;
use engine::{Device, Tensor};
use harness::{F32, backward_weighted, on_devices, param, randn};

/// The module's output, the gradients of the inputs that require one, and every
/// parameter's gradient, in name order.
fn outputs_and_grads(
    module: &impl Module,
    output: &Tensor,
    inputs: &[&Tensor],
) -> Vec<Tensor> {
    backward_weighted(output, 99);
    let mut all = vec![output.clone()];
    all.extend(inputs.iter().map(|x| x.grad().unwrap()));
    all.extend(
        module
            .named_parameters()
            .into_iter()
            .map(|(_, p)| p.grad().unwrap()),
    );
    all
}

fn masks() -> Vec<(&'static str, Mask)> {
    vec![
        ("no mask", Mask::none()),
        (
            "valid lengths",
            Mask::valid_lens(&Tensor::from_vec(vec![3.0, 1.0], [2])),
        ),
        (
            "valid lengths of zero",
            Mask::valid_lens(&Tensor::from_vec(vec![0.0, 4.0], [2])),
        ),
        (
            "key padding",
            Mask::key_padding(&Tensor::from_vec(
                vec![1., 1., 0., 1., 0., 1., 1., 1.],
                [2, 4],
            )),
        ),
    ]
}

fn fills() -> [Fill; 3] {
    [Fill::D2l, Fill::Constant(-1e9), Fill::Safe]
}

#[test]
fn masked_softmax_with_every_mask_and_fill() {
    for (name, mask) in masks() {
        for fill in fills() {
            on_devices(&format!("masked_softmax, {name}, {fill:?}"), F32, |dev| {
                let scores = param(&[2, 3, 4], 1, dev);
                let weights = masked_softmax(&scores, &mask, fill);
                backward_weighted(&weights, 2);
                vec![weights, scores.grad().unwrap()]
            });
        }
    }
}

#[test]
fn additive_attention_fused_and_broadcast() {
    for scoring in [AdditiveScoring::Fused, AdditiveScoring::Broadcast] {
        for (name, mask) in masks() {
            on_devices(
                &format!("AdditiveAttention {scoring:?}, {name}"),
                F32,
                |dev| {
                    engine::manual_seed(3);
                    let module = AdditiveAttention::new(AdditiveAttentionConfig {
                        query_size: 5,
                        key_size: 6,
                        num_hiddens: 8,
                        scoring,
                        fill: Fill::Safe,
                        ..Default::default()
                    });
                    module.to_device(dev);
                    let (q, k, v) = (
                        param(&[2, 3, 5], 4, dev),
                        param(&[2, 4, 6], 5, dev),
                        param(&[2, 4, 7], 6, dev),
                    );
                    let out = module.forward(&q, &k, &v, &mask);
                    outputs_and_grads(&module, &out, &[&q, &k, &v])
                },
            );
        }
    }
}

#[test]
fn bahdanau_and_multi_head_additive() {
    on_devices("BahdanauAttention", F32, |dev| {
        engine::manual_seed(7);
        let module = BahdanauAttention::new(BahdanauAttentionConfig {
            query_size: 5,
            key_size: 6,
            value_size: 6,
            num_hiddens: 8,
            ..Default::default()
        });
        module.to_device(dev);
        let (q, k) = (param(&[2, 5], 8, dev), param(&[2, 4, 6], 9, dev));
        let mask = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 4.0], [2]));
        let (context, weights) = module.forward(&q, &k, &k, &mask);
        let mut all = outputs_and_grads(
            &module,
            &(&context.sum_dim(-1) + &weights.sum_dim(-1)),
            &[&q, &k],
        );
        all.extend([context, weights]);
        all
    });
    on_devices("MultiHeadAdditiveAttention", F32, |dev| {
        engine::manual_seed(10);
        let module =
            MultiHeadAdditiveAttention::new(MultiHeadAdditiveAttentionConfig {
                query_size: 5,
                key_size: 6,
                value_size: 6,
                num_hiddens: 8,
                num_heads: 2,
                ..Default::default()
            });
        module.to_device(dev);
        let (q, k) = (param(&[2, 5], 11, dev), param(&[2, 4, 6], 12, dev));
        let (context, _) = module.forward(&q, &k, &k, &Mask::none());
        outputs_and_grads(&module, &context, &[&q, &k])
    });
}

#[test]
fn scaled_dot_product_attention_with_masks() {
    for (name, mask) in masks() {
        on_devices(&format!("DotProductAttention, {name}"), F32, |dev| {
            let module = DotProductAttention::new(DotProductAttentionConfig {
                fill: Fill::Safe,
                ..Default::default()
            });
            let (q, k, v) = (
                param(&[2, 3, 8], 13, dev),
                param(&[2, 4, 8], 14, dev),
                param(&[2, 4, 5], 15, dev),
            );
            let out = module.forward(&q, &k, &v, &mask);
            outputs_and_grads(&module, &out, &[&q, &k, &v])
        });
    }
}

#[test]
fn multi_head_attention() {
    for (name, mask) in masks() {
        on_devices(&format!("MultiHeadAttention, {name}"), F32, |dev| {
            engine::manual_seed(16);
            let module = MultiHeadAttention::new(MultiHeadAttentionConfig {
                num_hiddens: 16,
                num_heads: 4,
                bias: true,
                ..Default::default()
            });
            module.to_device(dev);
            let (q, kv) = (param(&[2, 3, 16], 17, dev), param(&[2, 4, 16], 18, dev));
            let out = module.forward(&q, &kv, &kv, &mask);
            outputs_and_grads(&module, &out, &[&q, &kv])
        });
    }
}

#[test]
fn causal_self_attention_and_the_kv_cache() {
    on_devices("CausalSelfAttention forward", F32, |dev| {
        engine::manual_seed(19);
        let module = CausalSelfAttention::new(CausalSelfAttentionConfig {
            num_hiddens: 16,
            num_heads: 2,
            ..Default::default()
        });
        module.to_device(dev);
        let x = param(&[2, 5, 16], 20, dev);
        let out = module.forward(&x, &Mask::none());
        outputs_and_grads(&module, &out, &[&x])
    });
    on_devices("CausalSelfAttention decoding with the cache", F32, |dev| {
        engine::manual_seed(21);
        let module = CausalSelfAttention::new(CausalSelfAttentionConfig {
            num_hiddens: 16,
            num_heads: 2,
            ..Default::default()
        });
        module.to_device(dev);
        let x = randn(&[2, 6, 16], 22, dev);
        engine::no_grad(|| {
            let mut cache = KvCache::new(2);
            let mut steps = Vec::new();
            for t in 0..6 {
                steps.push(module.step(
                    &x.narrow(1, t, 1),
                    &mut cache,
                    &Mask::none(),
                ));
            }
            let stepped = Tensor::concat(&steps, 1);
            // The steps equal one causal pass over the whole sequence.
            let whole = module.forward(&x, &Mask::none());
            let gap = (&stepped - &whole).abs().max().to(&Device::Cpu).item();
            assert!(
                gap < 1e-5,
                "{dev}: steps and the whole pass differ by {gap}"
            );
            vec![stepped, cache.keys(), cache.values()]
        })
    });
}

#[test]
fn a_cache_of_host_tokens_refuses_keys_from_the_gpu() {
    let Some(gpu) = harness::test_gpu() else {
        return;
    };
    let mut cache = KvCache::new(4);
    cache.append(&Tensor::ones([1, 1, 2, 4]), &Tensor::ones([1, 1, 2, 4]));
    let on_gpu = Tensor::ones([1, 1, 1, 4]).to(&gpu);
    let message = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        cache.append(&on_gpu, &on_gpu)
    }))
    .err()
    .and_then(|e| e.downcast_ref::<String>().cloned())
    .expect("mixing devices in one cache panics with a message");
    assert!(
        message
            .starts_with("KvCache::append: the cache holds 2 tokens in host memory"),
        "{message}"
    );
}
