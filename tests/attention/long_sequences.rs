//! Attention for long sequences (`attention::long_sequences`): each method against full
//! attention under the mask it stands for (outputs and input gradients), what a query can
//! and cannot see, memory that grows linearly with the length, and the checks of the
//! arguments.

use std::panic::{AssertUnwindSafe, catch_unwind};

use attention::{
    AttentionWeights, LocalWindow, LowRankAttention, LowRankAttentionConfig,
    LshOptions, Mask, SdpaOptions, SparsePattern, local_window_attention,
    local_window_attention_with, low_rank_attention, lsh_attention, lsh_buckets,
    scaled_dot_product_attention, scaled_dot_product_attention_with,
    sparse_attention,
};
use engine::gradcheck::gradcheck;
use engine::nn::{Module, StateDict};
use engine::random::rng_from_seed;
use engine::{Tensor, memory};

/// Agreement asked of two ways of computing the same attention, in outputs and gradients.
const TOL: f32 = 1e-5;

/// Standard normal values from a seed of their own, so that tests do not share a stream.
fn randn(shape: &[usize], seed: u64) -> Tensor {
    Tensor::normal_with(shape, 0.0, 1.0, &mut rng_from_seed(seed))
}

/// The largest absolute difference between two tensors of one shape.
#[track_caller]
fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
    assert_eq!(a.shape(), b.shape());
    a.to_vec()
        .iter()
        .zip(b.to_vec())
        .fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

/// `f(inputs)` and the gradient of `Σ w ⊙ f(inputs)` with respect to each input, for fixed
/// random weights `w` (a plain sum would hide errors: a row of softmax weights always sums
/// to 1).
fn output_and_grads(
    f: impl Fn(&[Tensor]) -> Tensor,
    inputs: &[Tensor],
) -> (Tensor, Vec<Tensor>) {
    let leaves: Vec<Tensor> =
        inputs.iter().map(|t| t.detach().requires_grad_()).collect();
    let out = f(&leaves);
    let w = randn(out.shape(), 0x7765_6967);
    (&out * &w).sum().backward();
    let grads = leaves
        .iter()
        .map(|t| t.grad().expect("every input takes part"))
        .collect();
    (out.detach(), grads)
}

/// Checks that `fast` and `full` agree to [`TOL`] in output and in every input gradient.
#[track_caller]
fn assert_same_attention(
    case: &str,
    fast: impl Fn(&[Tensor]) -> Tensor,
    full: impl Fn(&[Tensor]) -> Tensor,
    inputs: &[Tensor],
) {
    let (out, grads) = output_and_grads(fast, inputs);
    let (expected, expected_grads) = output_and_grads(full, inputs);
    let diff = max_diff(&out, &expected);
    assert!(diff < TOL, "{case}: outputs differ by {diff}");
    for (i, (g, e)) in grads.iter().zip(&expected_grads).enumerate() {
        let diff = max_diff(g, e);
        assert!(
            diff < TOL,
            "{case}: gradients of input {i} differ by {diff}"
        );
    }
}

/// Full attention with a `[n, n]` (or `[B, n, n]`) keep mask.
fn full_masked(q: &Tensor, k: &Tensor, v: &Tensor, keep: &Tensor) -> Tensor {
    let keep = if keep.rank() == 2 {
        keep.unsqueeze(0)
    } else {
        keep.clone()
    };
    let options = SdpaOptions {
        mask: Mask::keep(&keep),
        ..Default::default()
    };
    scaled_dot_product_attention_with(q, k, v, &options).0
}

/// A `[n, n]` 0/1 tensor from a rule, written out in the test so that it does not lean on
/// the library's own `keep_mask`.
fn mask_from(n: usize, sees: impl Fn(usize, usize) -> bool) -> Tensor {
    let keep = (0..n)
        .flat_map(|i| (0..n).map(move |j| (i, j)))
        .map(|(i, j)| if sees(i, j) { 1.0 } else { 0.0 })
        .collect();
    Tensor::from_vec(keep, [n, n])
}

/// Queries, keys and values `[B, n, d]`, `[B, n, d]`, `[B, n, dv]`.
fn qkv(batch: usize, n: usize, d: usize, dv: usize, seed: u64) -> [Tensor; 3] {
    [
        randn(&[batch, n, d], seed),
        randn(&[batch, n, d], seed + 1),
        randn(&[batch, n, dv], seed + 2),
    ]
}

/// The bytes a forward and backward pass adds at its peak to what was live before.
fn peak_of(run: impl FnOnce()) -> usize {
    memory::reset_peak();
    let before = memory::live_bytes();
    run();
    memory::peak_bytes() - before
}

/// The peak bytes of a forward and backward pass of `attend` on `[1, n, d]` inputs, at
/// `n` and `2n`, as the ratio `peak(2n) / peak(n)`; and the same ratio for full attention,
/// which the accounting must tell apart (its `[n, n]` scores make it about 4).
fn memory_ratios(
    n: usize,
    d: usize,
    attend: impl Fn(&Tensor, &Tensor, &Tensor) -> Tensor,
) -> (f64, f64) {
    let peak = |len: usize, full: bool| {
        let [q, k, v] = qkv(1, len, d, d, 11);
        let [q, k, v] = [q, k, v].map(|t| t.requires_grad_());
        peak_of(|| {
            let out = if full {
                scaled_dot_product_attention(&q, &k, &v, &Mask::none()).0
            } else {
                attend(&q, &k, &v)
            };
            out.sum().backward();
        }) as f64
    };
    (
        peak(2 * n, false) / peak(n, false),
        peak(2 * n, true) / peak(n, true),
    )
}

#[track_caller]
fn assert_linear_memory(method: &str, (ratio, full): (f64, f64)) {
    assert!(
        ratio < 2.5,
        "{method}: doubling n multiplied the peak memory by {ratio:.2}, where linear growth gives about 2"
    );
    assert!(
        full > 3.0,
        "full attention's peak memory grew by {full:.2} when n doubled: the measurement cannot tell quadratic from linear"
    );
}

fn message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("expected a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

// ---- local window ----

#[test]
fn local_window_keep_mask_is_the_band_written_out() {
    let band = LocalWindow {
        window: 1,
        ..Default::default()
    };
    #[rustfmt::skip]
    let expected = vec![
        1.0, 1.0, 0.0, 0.0, 0.0,
        1.0, 1.0, 1.0, 0.0, 0.0,
        0.0, 1.0, 1.0, 1.0, 0.0,
        0.0, 0.0, 1.0, 1.0, 1.0,
        0.0, 0.0, 0.0, 1.0, 1.0,
    ];
    assert_eq!(band.keep_mask(5).to_vec(), expected);
    let past = LocalWindow {
        window: 2,
        causal: true,
        ..Default::default()
    };
    #[rustfmt::skip]
    let expected = vec![
        1.0, 0.0, 0.0, 0.0, 0.0,
        1.0, 1.0, 0.0, 0.0, 0.0,
        1.0, 1.0, 1.0, 0.0, 0.0,
        0.0, 1.0, 1.0, 1.0, 0.0,
        0.0, 0.0, 1.0, 1.0, 1.0,
    ];
    assert_eq!(past.keep_mask(5).to_vec(), expected);
}

#[test]
fn local_window_equals_full_attention_under_the_band() {
    // (n, window): the window divides n, does not, is 0, covers the sequence.
    let cases = [(12, 3), (13, 3), (17, 4), (7, 0), (9, 20), (16, 15)];
    for (case, &(n, window)) in cases.iter().enumerate() {
        for causal in [false, true] {
            let inputs = qkv(2, n, 4, 3, 100 + case as u64);
            let keep = mask_from(n, |i, j| {
                if causal {
                    j <= i && i - j <= window
                } else {
                    i.abs_diff(j) <= window
                }
            });
            let options = LocalWindow {
                window,
                causal,
                ..Default::default()
            };
            assert_same_attention(
                &format!("n = {n}, window = {window}, causal = {causal}"),
                |t| local_window_attention_with(&t[0], &t[1], &t[2], &options),
                |t| full_masked(&t[0], &t[1], &t[2], &keep),
                &inputs,
            );
        }
    }
}

#[test]
fn local_window_attention_is_the_non_causal_form_and_takes_a_scale() {
    let [q, k, v] = qkv(1, 10, 4, 2, 7);
    let plain = local_window_attention(&q, &k, &v, 2);
    let named = LocalWindow {
        window: 2,
        ..Default::default()
    };
    let same = local_window_attention_with(&q, &k, &v, &named);
    assert_eq!(plain.to_vec(), same.to_vec());
    // A scale of 0.5 is the default 1/√4 = 0.5: the same numbers; 2.0 is not.
    let scaled = |scale| {
        let options = LocalWindow {
            scale: Some(scale),
            ..named
        };
        local_window_attention_with(&q, &k, &v, &options)
    };
    assert!(max_diff(&scaled(0.5), &plain) < 1e-6);
    assert!(max_diff(&scaled(2.0), &plain) > 1e-3);
}

#[test]
fn a_key_outside_the_window_does_not_change_the_query_output() {
    // Window 3: the sequence is cut into chunks of 3, and query 4 (chunk [3, 4, 5]) is
    // compared with the keys of chunks [0, 1, 2] and [6, 7, 8]; keys 0 and 8 are among
    // them but outside its window, key 12 is far away. Query 3 sees key 0, query 7 sees 8.
    let [q, k, v] = qkv(1, 16, 4, 2, 21);
    let before = local_window_attention(&q, &k, &v, 3);
    for (j, neighbour) in [(0, 3), (8, 7), (12, 10)] {
        let changed = |t: &Tensor, seed| {
            let mut values = t.to_vec();
            let d = t.shape()[2];
            let noise = randn(&[d], seed).to_vec();
            for (x, e) in values[j * d..(j + 1) * d].iter_mut().zip(noise) {
                *x += 3.0 * e;
            }
            Tensor::from_vec(values, t.shape())
        };
        let after = local_window_attention(&q, &changed(&k, 1), &changed(&v, 2), 3);
        let row = |t: &Tensor, i: usize| t.narrow(1, i, 1).to_vec();
        assert_eq!(row(&after, 4), row(&before, 4), "key {j} changed query 4");
        assert_ne!(
            row(&after, neighbour),
            row(&before, neighbour),
            "key {j} is in query {neighbour}'s window, which must see it"
        );
    }
}

#[test]
fn local_window_memory_grows_linearly_with_the_length() {
    let ratios = memory_ratios(256, 4, |q, k, v| local_window_attention(q, k, v, 8));
    assert_linear_memory("local_window_attention", ratios);
}

// ---- sparse pattern ----

#[test]
fn sparse_keep_mask_is_the_pattern_written_out() {
    let pattern = SparsePattern {
        block: 3,
        global: 2,
        ..Default::default()
    };
    // Blocks {0, 1, 2}, {3, 4, 5}, {6}; positions 0 and 1 are global.
    #[rustfmt::skip]
    let expected = vec![
        1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
        1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0,
        1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0,
        1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0,
        1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0,
        1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ];
    assert_eq!(pattern.keep_mask(7).to_vec(), expected);
    assert!(pattern.sees(6, 1) && pattern.sees(1, 6) && !pattern.sees(6, 2));
}

#[test]
fn sparse_attention_equals_full_attention_under_the_pattern() {
    // (n, block, global): blocks only; a global position inside the first block; global
    // positions spanning blocks; a block longer than the sequence; all positions global.
    let cases = [
        (12, 4, 0),
        (13, 4, 2),
        (10, 3, 5),
        (9, 20, 1),
        (8, 2, 8),
        (11, 4, 12),
        (14, 1, 3),
        (10, 4, 0), // a short last block and no global position
    ];
    for (case, &(n, block, global)) in cases.iter().enumerate() {
        let inputs = qkv(2, n, 4, 3, 200 + case as u64);
        let keep =
            mask_from(n, |i, j| i / block == j / block || i < global || j < global);
        let pattern = SparsePattern {
            block,
            global,
            ..Default::default()
        };
        assert_same_attention(
            &format!("n = {n}, block = {block}, global = {global}"),
            |t| sparse_attention(&t[0], &t[1], &t[2], &pattern),
            |t| full_masked(&t[0], &t[1], &t[2], &keep),
            &inputs,
        );
    }
}

#[test]
fn sparse_memory_grows_linearly_with_the_length() {
    let pattern = SparsePattern {
        block: 16,
        global: 2,
        ..Default::default()
    };
    let ratios = memory_ratios(256, 4, |q, k, v| sparse_attention(q, k, v, &pattern));
    assert_linear_memory("sparse_attention", ratios);
}

// ---- low rank ----

fn identity(n: usize) -> Tensor {
    Tensor::ones([n, n]).tril(0).triu(0)
}

fn low_rank_config(seq_len: usize, proj_len: usize) -> LowRankAttentionConfig {
    LowRankAttentionConfig {
        seq_len,
        proj_len,
        ..Default::default()
    }
}

#[test]
fn low_rank_with_identity_projections_equals_full_attention() {
    let n = 12;
    let eye = identity(n);
    assert_same_attention(
        "low_rank_attention, E = F = I",
        |t| low_rank_attention(&t[0], &t[1], &t[2], &eye, &eye),
        |t| scaled_dot_product_attention(&t[0], &t[1], &t[2], &Mask::none()).0,
        &qkv(2, n, 4, 3, 31),
    );
    // The module, with the identity loaded as its parameters.
    let state = StateDict::from([("E", eye.clone()), ("F", eye.clone())]);
    let layer =
        LowRankAttention::from_state_dict(low_rank_config(n, n), &state).unwrap();
    assert_same_attention(
        "LowRankAttention, E = F = I",
        |t| layer.forward(&t[0], &t[1], &t[2]),
        |t| scaled_dot_product_attention(&t[0], &t[1], &t[2], &Mask::none()).0,
        &qkv(2, n, 4, 3, 32),
    );
}

#[test]
fn low_rank_output_is_attention_to_e_k_and_f_v_and_a_shorter_sequence_uses_the_first_columns()
 {
    engine::manual_seed(3);
    let layer = LowRankAttention::new(low_rank_config(16, 4));
    let [q, k, v] = qkv(3, 16, 8, 5, 41);
    assert_eq!(layer.forward(&q, &k, &v).shape(), &[3, 16, 5]);
    // 10 positions: the first 10 columns of E and F, as padding with zeros would give.
    let [q, k, v] = qkv(3, 10, 8, 5, 42);
    let short = layer.forward(&q, &k, &v);
    assert_eq!(short.shape(), &[3, 10, 5]);
    let (e, f) = (layer.e().narrow(1, 0, 10), layer.f().narrow(1, 0, 10));
    assert_eq!(
        short.to_vec(),
        low_rank_attention(&q, &k, &v, &e, &f).to_vec()
    );
    // The definition, written out: attention against E K with values F V.
    let (ek, fv) = (e.matmul(&k), f.matmul(&v));
    let defined = scaled_dot_product_attention(&q, &ek, &fv, &Mask::none()).0;
    assert!(max_diff(&short, &defined) < TOL);
    let pad = |t: &Tensor| Tensor::concat(&[t, &Tensor::zeros([3, 6, t.size(2)])], 1);
    let padded = low_rank_attention(&q, &pad(&k), &pad(&v), layer.e(), layer.f());
    assert!(max_diff(&short, &padded) < TOL);
}

#[test]
fn low_rank_gradients_reach_e_and_f() {
    // Finite differences through every input, E and F included, on a tiny case.
    let [q, k, v] = qkv(1, 4, 2, 2, 51);
    let (e, f) = (randn(&[2, 4], 52), randn(&[2, 4], 53));
    gradcheck(
        |t| low_rank_attention(&t[0], &t[1], &t[2], &t[3], &t[4]),
        &[q.clone(), k.clone(), v.clone(), e, f],
    )
    .unwrap();
    // The module's parameters receive them.
    engine::manual_seed(5);
    let layer = LowRankAttention::new(low_rank_config(4, 2));
    let w = randn(&[1, 4, 2], 54);
    (&layer.forward(&q, &k, &v) * &w).sum().backward();
    for p in layer.parameters() {
        let g = p.grad().expect("E and F take part");
        assert!(g.to_vec().iter().any(|x| x.abs() > 1e-4), "{g:?}");
    }
}

#[test]
fn low_rank_new_draws_e_and_f_from_the_seeded_generator_as_linear_does() {
    let draw = |seed| {
        engine::manual_seed(seed);
        let layer = LowRankAttention::new(low_rank_config(25, 3));
        (layer.e().to_vec(), layer.f().to_vec())
    };
    let (e, f) = draw(9);
    assert_eq!(
        draw(9),
        (e.clone(), f.clone()),
        "the same seed, the same E and F"
    );
    assert_ne!(draw(10).0, e);
    assert_ne!(e, f, "E and F are drawn separately");
    // U(−1/√25, 1/√25), PyTorch's Linear(25, 3) weight.
    assert!(e.iter().chain(&f).all(|x| x.abs() <= 0.2));
    assert!(e.iter().any(|x| x.abs() > 0.15));
    let layer = LowRankAttention::new(low_rank_config(25, 3));
    let names: Vec<String> =
        layer.named_parameters().into_iter().map(|p| p.0).collect();
    assert_eq!(names, ["E", "F"]);
    assert!(layer.e().requires_grad() && layer.e().is_leaf());
}

#[test]
fn low_rank_memory_grows_linearly_with_the_length_at_fixed_k() {
    let (e256, f256) = (randn(&[8, 256], 61), randn(&[8, 256], 62));
    let (e512, f512) = (randn(&[8, 512], 63), randn(&[8, 512], 64));
    let ratios = memory_ratios(256, 4, |q, k, v| {
        if k.size(1) == 256 {
            low_rank_attention(q, k, v, &e256, &f256)
        } else {
            low_rank_attention(q, k, v, &e512, &f512)
        }
    });
    assert_linear_memory("low_rank_attention", ratios);
}

// ---- LSH ----

/// Reformer's keys: the shared vectors at unit length.
fn unit_keys(x: &Tensor) -> Tensor {
    x / (x.square().sum_dim_keepdim(-1) + 1e-6).sqrt()
}

/// The `[B, n, n]` mask LSH attention stands for, built from the buckets alone: query `i`
/// sees key `j` of its own bucket whose chunk in the order sorted by (bucket, position) is
/// `i`'s or the one before; itself only when nothing else is visible (`exclude_self`).
fn lsh_mask(buckets: &Tensor, chunk: usize, exclude_self: bool) -> Tensor {
    let (batch, n) = (buckets.shape()[0], buckets.shape()[1]);
    let all = buckets.to_vec();
    let mut keep = Vec::new();
    for b in 0..batch {
        let bucket = &all[b * n..(b + 1) * n];
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&i, &j| bucket[i].total_cmp(&bucket[j]).then(i.cmp(&j)));
        let mut chunk_of = vec![0; n];
        for (slot, &i) in order.iter().enumerate() {
            chunk_of[i] = slot / chunk;
        }
        for i in 0..n {
            let sees = |j: usize| {
                bucket[i] == bucket[j]
                    && (chunk_of[j] == chunk_of[i] || chunk_of[j] + 1 == chunk_of[i])
            };
            let others = (0..n).any(|j| j != i && sees(j));
            keep.extend((0..n).map(|j| {
                let seen = sees(j) && (j != i || !exclude_self || !others);
                if seen { 1.0 } else { 0.0 }
            }));
        }
    }
    Tensor::from_vec(keep, [batch, n, n])
}

fn lsh(n_buckets: usize, chunk: usize, seed: u64) -> LshOptions {
    LshOptions {
        n_buckets,
        chunk,
        seed,
        ..Default::default()
    }
}

#[test]
fn lsh_with_one_bucket_and_one_chunk_equals_full_attention() {
    let n = 12;
    let inputs = [randn(&[2, n, 4], 71), randn(&[2, n, 3], 72)];
    for exclude_self in [true, false] {
        for chunk in [n, 40] {
            let options = LshOptions {
                exclude_self,
                ..lsh(1, chunk, 0)
            };
            // Shared queries and keys, keys at unit length, the diagonal left out.
            let keep = mask_from(n, |i, j| i != j || !exclude_self);
            assert_same_attention(
                &format!("one bucket, chunk {chunk}, exclude_self = {exclude_self}"),
                |t| lsh_attention(&t[0], &t[1], &options),
                |t| full_masked(&t[0], &unit_keys(&t[0]), &t[1], &keep),
                &inputs,
            );
        }
    }
}

#[test]
fn lsh_equals_full_attention_under_its_bucket_and_chunk_mask() {
    // (n, n_buckets, chunk): chunks that divide n and do not, a chunk over everything.
    let cases = [(24, 4, 4), (23, 4, 5), (20, 2, 20), (30, 8, 4)];
    for (case, &(n, n_buckets, chunk)) in cases.iter().enumerate() {
        for exclude_self in [true, false] {
            let options = LshOptions {
                exclude_self,
                ..lsh(n_buckets, chunk, 5 + case as u64)
            };
            let inputs = [randn(&[2, n, 4], 80 + case as u64), randn(&[2, n, 3], 90)];
            let buckets = lsh_buckets(&inputs[0], &options);
            let distinct: std::collections::BTreeSet<u32> =
                buckets.to_vec().iter().map(|&b| b as u32).collect();
            assert!(distinct.len() > 1, "the case must use several buckets");
            let keep = lsh_mask(&buckets, chunk, exclude_self);
            assert_same_attention(
                &format!(
                    "n = {n}, {n_buckets} buckets, chunk {chunk}, exclude_self = {exclude_self}"
                ),
                |t| lsh_attention(&t[0], &t[1], &options),
                |t| full_masked(&t[0], &unit_keys(&t[0]), &t[1], &keep),
                &inputs,
            );
        }
    }
}

#[test]
fn a_key_in_another_bucket_does_not_change_the_query_output() {
    let (n, j) = (32, 5);
    let x = randn(&[1, n, 6], 101);
    let v = randn(&[1, n, 3], 102);
    for chunk in [n, 8] {
        let options = lsh(4, chunk, 3);
        let buckets = lsh_buckets(&x, &options).to_vec();
        // Move vector j a little (keeping its bucket, so the sorted order stays) and change
        // its value a lot.
        let mut moved = x.to_vec();
        let noise = randn(&[6], 103).to_vec();
        for (a, e) in moved[j * 6..(j + 1) * 6].iter_mut().zip(noise) {
            *a += 0.05 * e;
        }
        let moved = Tensor::from_vec(moved, [1, n, 6]);
        assert_eq!(lsh_buckets(&moved, &options).to_vec(), buckets);
        let mut revalued = v.to_vec();
        for a in &mut revalued[j * 3..(j + 1) * 3] {
            *a += 5.0;
        }
        let revalued = Tensor::from_vec(revalued, [1, n, 3]);
        let before = lsh_attention(&x, &v, &options);
        let after = lsh_attention(&moved, &revalued, &options);
        let row = |t: &Tensor, i: usize| t.narrow(1, i, 1).to_vec();
        let (mut other, mut same_changed) = (0, 0);
        for i in (0..n).filter(|&i| i != j) {
            if buckets[i] != buckets[j] {
                other += 1;
                assert_eq!(
                    row(&after, i),
                    row(&before, i),
                    "chunk {chunk}, query {i}"
                );
            } else if row(&after, i) != row(&before, i) {
                same_changed += 1;
            }
        }
        assert!(other > 0, "the case must have queries in other buckets");
        assert!(
            same_changed > 0,
            "chunk {chunk}: no query of key {j}'s own bucket saw it change"
        );
    }
}

#[test]
fn lsh_is_deterministic_for_a_seed() {
    let x = randn(&[2, 32, 4], 111);
    let v = randn(&[2, 32, 3], 112);
    let run = |seed| lsh_attention(&x, &v, &lsh(4, 8, seed)).to_vec();
    // Whatever the thread's generator does in between.
    engine::manual_seed(1);
    let first = run(42);
    let _ = Tensor::randn([10]);
    assert_eq!(run(42), first);
    let buckets = |seed| lsh_buckets(&x, &lsh(4, 8, seed)).to_vec();
    assert_eq!(buckets(42), buckets(42));
    assert_ne!(buckets(43), buckets(42), "another seed, other rotations");
    assert_ne!(run(43), first);
}

#[test]
fn lsh_buckets_are_the_argmax_over_the_rotations_and_their_negatives() {
    let options = lsh(8, 4, 9);
    let x = randn(&[3, 40, 5], 121);
    let buckets = lsh_buckets(&x, &options).to_vec();
    assert!(
        buckets
            .iter()
            .all(|&b| b.fract() == 0.0 && (0.0..8.0).contains(&b))
    );
    // The hash sees directions only: a longer vector keeps its bucket, and the opposite
    // vector lands in the bucket n_buckets / 2 away (argmax over [−xR, xR]).
    assert_eq!(lsh_buckets(&(&x * 2.5), &options).to_vec(), buckets);
    let opposite = lsh_buckets(&-&x, &options).to_vec();
    for (a, b) in buckets.iter().zip(opposite) {
        assert_eq!((a + 4.0) % 8.0, b);
    }
    assert_eq!(
        lsh_buckets(&x, &lsh(1, 4, 9)).to_vec(),
        vec![0.0; 120],
        "one bucket holds everything"
    );
}

#[test]
fn lsh_memory_grows_linearly_with_the_length() {
    let options = lsh(8, 16, 0);
    let ratios = memory_ratios(256, 4, |q, _, v| lsh_attention(q, v, &options));
    assert_linear_memory("lsh_attention", ratios);
}

// ---- argument checks ----

#[test]
fn an_empty_sequence_gives_an_empty_output() {
    let [q, k, v] = qkv(2, 0, 4, 3, 131);
    let pattern = SparsePattern {
        block: 4,
        global: 1,
        ..Default::default()
    };
    let outputs = [
        local_window_attention(&q, &k, &v, 2),
        sparse_attention(&q, &k, &v, &pattern),
        lsh_attention(&q, &v, &lsh(4, 4, 0)),
        low_rank_attention(
            &q,
            &k,
            &v,
            &Tensor::zeros([2, 0]),
            &Tensor::zeros([2, 0]),
        ),
    ];
    for out in outputs {
        assert_eq!(out.shape(), &[2, 0, 3]);
    }
}

#[test]
fn bad_arguments_are_refused_with_the_function_and_the_shapes() {
    let z = |shape: &[usize]| Tensor::zeros(shape);
    let m = message(|| {
        local_window_attention(&z(&[1, 8, 4]), &z(&[1, 6, 4]), &z(&[1, 6, 2]), 2);
    });
    assert!(
        m.starts_with(
            "local_window_attention: queries [1, 8, 4] and keys [1, 6, 4] must be the same n positions"
        ),
        "{m}"
    );
    let m = message(|| {
        local_window_attention(&z(&[1, 8, 4]), &z(&[1, 8, 4]), &z(&[1, 6, 2]), 2);
    });
    assert!(
        m.starts_with(
            "local_window_attention: keys [1, 8, 4] and values [1, 6, 2] must hold the same number of entries"
        ),
        "{m}"
    );
    let m = message(|| {
        sparse_attention(
            &z(&[1, 8, 4]),
            &z(&[1, 8, 4]),
            &z(&[1, 8, 2]),
            &SparsePattern::default(),
        );
    });
    assert!(
        m.starts_with(
            "sparse_attention: SparsePattern::block must be at least 1, found 0"
        ),
        "{m}"
    );
    let m = message(|| {
        lsh_attention(&z(&[1, 8, 4]), &z(&[1, 8, 2]), &lsh(3, 4, 0));
    });
    assert!(
        m.starts_with(
            "lsh_attention: n_buckets must be 1 or an even number ≥ 2, found 3"
        ),
        "{m}"
    );
    let m = message(|| {
        lsh_attention(&z(&[1, 8, 4]), &z(&[1, 7, 2]), &lsh(2, 4, 0));
    });
    assert!(
        m.starts_with("lsh_attention: qk [1, 8, 4] and values [1, 7, 2] must be the same n positions"),
        "{m}"
    );
    let m = message(|| {
        let e = z(&[2, 6]);
        low_rank_attention(&z(&[1, 8, 4]), &z(&[1, 8, 4]), &z(&[1, 8, 2]), &e, &e);
    });
    assert!(
        m.starts_with(
            "low_rank_attention: the projection e must have shape [k, n] = [k, 8] for 8 keys"
        ),
        "{m}"
    );
    let layer = LowRankAttention::new(low_rank_config(4, 2));
    let m = message(|| {
        layer.forward(&z(&[1, 6, 4]), &z(&[1, 6, 4]), &z(&[1, 6, 4]));
    });
    assert!(
        m.starts_with("LowRankAttention: keys [1, 6, 4] hold 6 positions but the projections E and F [2, 4] were made for at most seq_len = 4"),
        "{m}"
    );
    let m = message(|| {
        let options = LocalWindow {
            window: 2,
            scale: Some(0.0),
            ..Default::default()
        };
        local_window_attention_with(
            &z(&[1, 4, 2]),
            &z(&[1, 4, 2]),
            &z(&[1, 4, 2]),
            &options,
        );
    });
    assert!(
        m.starts_with(
            "local_window_attention_with: scale must be finite and greater than 0"
        ),
        "{m}"
    );
}

#[test]
fn low_rank_refuses_bad_inputs_and_configs_and_reports_its_sizes() {
    let z = |shape: &[usize]| Tensor::zeros(shape);
    let e = z(&[2, 8]);
    let m = message(|| {
        low_rank_attention(&z(&[8, 4]), &z(&[1, 8, 4]), &z(&[1, 8, 2]), &e, &e);
    });
    assert_eq!(
        m,
        "low_rank_attention: queries must have shape [B, Q, d], found [8, 4]"
    );
    let m = message(|| {
        low_rank_attention(&z(&[1, 8, 4]), &z(&[1, 8, 5]), &z(&[1, 8, 2]), &e, &e);
    });
    assert!(
        m.starts_with("low_rank_attention: keys [1, 8, 5] has 5 at dimension 2"),
        "{m}"
    );
    let layer = LowRankAttention::new(low_rank_config(8, 2));
    assert_eq!((layer.seq_len(), layer.proj_len()), (8, 2));
    let m = message(|| {
        layer.forward(&z(&[1, 8, 4]), &z(&[1, 8, 5]), &z(&[1, 8, 2]));
    });
    assert!(
        m.starts_with("LowRankAttention: keys [1, 8, 5] has 5 at dimension 2"),
        "{m}"
    );
    for (config, name) in [
        (low_rank_config(0, 2), "seq_len"),
        (low_rank_config(4, 0), "proj_len"),
    ] {
        let m = message(|| {
            LowRankAttention::new(config);
        });
        assert!(
            m.starts_with(&format!(
                "LowRankAttention::new: {name} must be at least 1, found 0"
            )),
            "{m}"
        );
        let state = StateDict::from([("E", z(&[2, 4])), ("F", z(&[2, 4]))]);
        let m = message(|| {
            let _ = LowRankAttention::from_state_dict(config, &state);
        });
        assert!(
            m.starts_with(&format!(
                "LowRankAttention::from_state_dict: {name} must be at least 1, found 0"
            )),
            "{m}"
        );
    }
}

#[test]
fn low_rank_keeps_its_last_weights_over_the_mixtures() {
    engine::manual_seed(5);
    let layer = LowRankAttention::new(low_rank_config(12, 3));
    assert!(layer.last_attention_weights().is_none());
    let [q, k, v] = qkv(2, 10, 4, 3, 51);
    let out = layer.forward(&q, &k, &v);
    let weights = layer.last_attention_weights().expect("forward keeps them");
    // One weight per query and mixture, each row a distribution, and the output its
    // weighted sum of the mixtures of the values.
    assert_eq!(weights.shape(), &[2, 10, 3]);
    for sum in weights.sum_dim(-1).to_vec() {
        assert!((sum - 1.0).abs() < 1e-6, "{sum}");
    }
    let mixed_values = layer.f().narrow(1, 0, 10).matmul(&v);
    assert!(max_diff(&out, &weights.matmul(&mixed_values)) < TOL);
}

#[test]
fn the_long_sequence_functions_refuse_vectors_of_no_features() {
    let z = |shape: &[usize]| Tensor::zeros(shape);
    let hint = "have no features (d = 0): every score would be an empty sum";
    let m = message(|| {
        local_window_attention(&z(&[1, 4, 0]), &z(&[1, 4, 0]), &z(&[1, 4, 2]), 2);
    });
    assert!(
        m.starts_with(&format!("local_window_attention: queries [1, 4, 0] {hint}")),
        "{m}"
    );
    let m = message(|| {
        lsh_attention(&z(&[1, 4, 0]), &z(&[1, 4, 2]), &lsh(2, 4, 0));
    });
    assert!(
        m.starts_with(&format!("lsh_attention: qk [1, 4, 0] {hint}")),
        "{m}"
    );
    // One feature is enough.
    let one =
        local_window_attention(&z(&[1, 4, 1]), &z(&[1, 4, 1]), &z(&[1, 4, 2]), 2);
    assert_eq!(one.shape(), &[1, 4, 2]);
}

#[test]
fn lsh_takes_a_vector_of_zeros_as_a_key_of_no_direction() {
    // A zero vector (padding, say) is normalised to zero, not divided by zero: every
    // query scores 0 against it, and every output stays finite.
    let [qk, _, v] = qkv(1, 8, 4, 3, 61);
    let mut rows = qk.to_vec();
    rows[8..12].fill(0.0); // position 2
    let qk = Tensor::from_vec(rows, [1, 8, 4]);
    let out = lsh_attention(&qk, &v, &lsh(2, 4, 3));
    assert_eq!(out.shape(), &[1, 8, 3]);
    assert!(
        out.to_vec().iter().all(|x| x.is_finite()),
        "{:?}",
        out.to_vec()
    );
}
