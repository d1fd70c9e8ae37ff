//! A short tour of the two crates: run with `cargo run --example tour`.
//!
//! Every number is drawn from a seeded generator, so each run prints the same output.

use attention::prelude::*;

fn main() {
    manual_seed(0);

    println!("== A tensor and its gradient");
    let x = Tensor::from_vec(vec![1.0, 2.0, 3.0], [3]).requires_grad_();
    let y = (&x * &x).sum(); // y = Σ x², so dy/dx = 2x
    y.backward();
    println!("x = {x}");
    println!("y = Σ x² = {}", y.item());
    println!("dy/dx = {}", x.grad().unwrap());

    println!("\n== Masked softmax: one row with 2 valid keys, one with none");
    let scores = Tensor::from_vec(vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0], [2, 1, 3]);
    let lens = Mask::valid_lens(&Tensor::from_vec(vec![2.0, 0.0], [2]));
    for (name, fill) in [("Safe", Fill::Safe), ("D2l (-1e6)", Fill::D2l)] {
        println!("{name}:\n{:.4}", masked_softmax(&scores, &lens, fill));
    }
    println!("\n== Multi-head attention");
    let mut mha = MultiHeadAttention::new(MultiHeadAttentionConfig {
        num_hiddens: 16,
        num_heads: 4,
        ..Default::default()
    });
    mha.eval();
    let tokens = Tensor::randn([2, 5, 16]);
    let pad = Mask::valid_lens(&Tensor::from_vec(vec![5.0, 3.0], [2]));
    let out = mha.forward(&tokens, &tokens, &tokens, &(Mask::causal() & pad));
    let weights = mha.last_attention_weights().unwrap();
    println!("input {:?} -> output {:?}", tokens.shape(), out.shape());
    println!(
        "weights [batch, heads, queries, keys] = {:?}",
        weights.shape()
    );
    println!(
        "example 1, head 0 (causal, 3 real tokens):\n{:.3}",
        weights.narrow(0, 1, 1).narrow(1, 0, 1).reshape([5, 5])
    );

    println!("\n== Decoding token by token from a KV cache");
    let mut layer = CausalSelfAttention::new(CausalSelfAttentionConfig {
        num_hiddens: 8,
        num_heads: 2,
        ..Default::default()
    });
    layer.eval();
    let sequence = Tensor::randn([1, 6, 8]);
    let (full, stepped) = no_grad(|| {
        let full = layer.forward(&sequence, &Mask::none());
        let mut cache = KvCache::new(4);
        let mut rows =
            vec![layer.prefill(&sequence.narrow(1, 0, 2), &mut cache, &Mask::none())];
        for t in 2..6 {
            rows.push(layer.step(
                &sequence.narrow(1, t, 1),
                &mut cache,
                &Mask::none(),
            ));
        }
        (full, Tensor::concat(&rows, 1))
    });
    let diff = (&full - &stepped)
        .to_vec()
        .iter()
        .fold(0f32, |m, v| m.max(v.abs()));
    println!("largest difference between full and cached decoding: {diff:.1e}");
}
