//! Additive attention's scores without the `[B, Q, K, h]` tensor: the fused
//! computation written as plain loops, forward and backward, to read beside the
//! engine's op [`engine::Tensor::additive_scores`].

/// The sizes of one scoring call: `queries: [batch, queries, hidden]`,
/// `keys: [batch, keys, hidden]`, `w: [hidden]`, scores `[batch, queries, keys]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreDims {
    /// `B`.
    pub batch: usize,
    /// `Q`, queries per batch element.
    pub queries: usize,
    /// `K`, keys per batch element.
    pub keys: usize,
    /// `h`, the hidden size in which queries and keys are added.
    pub hidden: usize,
}

impl ScoreDims {
    #[track_caller]
    fn check(&self, what: &str, queries: &[f32], keys: &[f32], w: &[f32]) {
        let ScoreDims {
            batch,
            queries: nq,
            keys: nk,
            hidden,
        } = *self;
        for (name, len, want) in [
            ("queries", queries.len(), batch * nq * hidden),
            ("keys", keys.len(), batch * nk * hidden),
            ("w", w.len(), hidden),
        ] {
            assert!(
                len == want,
                "{what}: {name} holds {len} values, {self:?} needs {want}"
            );
        }
    }
}

// ANCHOR: fused_scores
/// `s[b, i, j] = Σₕ w[h] · tanh(q[b, i, h] + k[b, j, h])`, one (query, key) pair at a
/// time.
///
/// The broadcast form first builds every `q[b, i, :] + k[b, j, :]`, a `[B, Q, K, h]`
/// tensor, then its `tanh` (another), then the product with `w`. Here each pair's `h`
/// terms are summed as they are made, so nothing but the `[B, Q, K]` scores is
/// stored.
pub fn fused_scores(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    dims: ScoreDims,
) -> Vec<f32> {
    dims.check("fused_scores", queries, keys, w);
    let ScoreDims {
        batch,
        queries: nq,
        keys: nk,
        hidden: h,
    } = dims;
    let mut scores = vec![0.0; batch * nq * nk];
    for b in 0..batch {
        for i in 0..nq {
            let q = &queries[(b * nq + i) * h..][..h];
            for j in 0..nk {
                let k = &keys[(b * nk + j) * h..][..h];
                let mut s = 0.0;
                for ((&q_h, &k_h), &w_h) in q.iter().zip(k).zip(w) {
                    s += w_h * (q_h + k_h).tanh();
                }
                scores[(b * nq + i) * nk + j] = s;
            }
        }
    }
    scores
}
// ANCHOR_END: fused_scores

/// The gradients of [`fused_scores`]' three inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct ScoreGrads {
    /// `∂L/∂queries`, `[B, Q, h]`.
    pub queries: Vec<f32>,
    /// `∂L/∂keys`, `[B, K, h]`.
    pub keys: Vec<f32>,
    /// `∂L/∂w`, `[h]`.
    pub w: Vec<f32>,
}

// ANCHOR: fused_backward
/// The backward pass of [`fused_scores`], given `upstream = ∂L/∂s`, `[B, Q, K]`.
///
/// With `t = tanh(q[b, i, h] + k[b, j, h])` and `g = upstream[b, i, j]`:
/// `∂L/∂w[h] += g·t`, and since `tanh' = 1 − tanh²`, both `∂L/∂q[b, i, h]` and
/// `∂L/∂k[b, j, h]` gain `g·w[h]·(1 − t²)`. The broadcast form's autograd keeps every
/// `t` from the forward pass, `B·Q·K·h` of them; here `t` is computed again, one at a
/// time: one more `tanh` per term instead of a tensor that does not fit in memory.
pub fn fused_scores_backward(
    queries: &[f32],
    keys: &[f32],
    w: &[f32],
    upstream: &[f32],
    dims: ScoreDims,
) -> ScoreGrads {
    dims.check("fused_scores_backward", queries, keys, w);
    let ScoreDims {
        batch,
        queries: nq,
        keys: nk,
        hidden: h,
    } = dims;
    assert_eq!(
        upstream.len(),
        batch * nq * nk,
        "fused_scores_backward: upstream is [B, Q, K]"
    );
    let mut grads = ScoreGrads {
        queries: vec![0.0; queries.len()],
        keys: vec![0.0; keys.len()],
        w: vec![0.0; h],
    };
    for b in 0..batch {
        for i in 0..nq {
            let q = &queries[(b * nq + i) * h..][..h];
            for j in 0..nk {
                let k = &keys[(b * nk + j) * h..][..h];
                let g = upstream[(b * nq + i) * nk + j];
                for x in 0..h {
                    let t = (q[x] + k[x]).tanh(); // recomputed, never stored
                    let d = g * w[x] * (1.0 - t * t);
                    grads.w[x] += g * t;
                    grads.queries[(b * nq + i) * h + x] += d;
                    grads.keys[(b * nk + j) * h + x] += d;
                }
            }
        }
    }
    grads
}
// ANCHOR_END: fused_backward
