// The fused additive scores and their gradients: four entry points over one layout,
// queries [B, Q, H], keys [B, K, H], w [H], scores and upstream [B, Q, K]. Each thread
// computes one output value and recomputes the activation it needs, so nothing of size
// B·Q·K·H is ever stored. kernels.rs splices into `main` the function to call, and into
// `act` and `act_slope` the activation's body (tanh or ReLU).
// params: [B, Q, K, H, number of outputs]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> queries: array<f32>;
@group(0) @binding(2) var<storage, read> keys: array<f32>;
@group(0) @binding(3) var<storage, read> w: array<f32>;
@group(0) @binding(4) var<storage, read> upstream: array<f32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

// The activation f and its slope f', spliced in by kernels.rs.
fn act(x: f32) -> f32 {
    ACT_VALUE
}

fn act_slope(x: f32) -> f32 {
    ACT_SLOPE
}

// scores[b, q, k] = Σ_h w[h] f(queries[b, q, h] + keys[b, k, h])
fn scores(t: u32) {
    let Q = params[1];
    let K = params[2];
    let H = params[3];
    let k = t % K;
    let q = (t / K) % Q;
    let b = t / (K * Q);
    let qb = (b * Q + q) * H;
    let kb = (b * K + k) * H;
    var acc = 0.0;
    for (var h = 0u; h < H; h++) {
        acc = fma(w[h], act(queries[qb + h] + keys[kb + h]), acc);
    }
    out[t] = acc;
}

// d queries[b, q, h] = Σ_k upstream[b, q, k] · w[h] f'(queries[b, q, h] + keys[b, k, h])
fn grad_queries(t: u32) {
    let Q = params[1];
    let K = params[2];
    let H = params[3];
    let h = t % H;
    let bq = t / H;
    let b = bq / Q;
    let qv = queries[t];
    var acc = 0.0;
    for (var k = 0u; k < K; k++) {
        let slope = act_slope(qv + keys[(b * K + k) * H + h]);
        acc = fma(upstream[bq * K + k], slope, acc);
    }
    out[t] = acc * w[h];
}

// d keys[b, k, h] = Σ_q upstream[b, q, k] · w[h] f'(queries[b, q, h] + keys[b, k, h])
fn grad_keys(t: u32) {
    let Q = params[1];
    let K = params[2];
    let H = params[3];
    let h = t % H;
    let bk = t / H;
    let b = bk / K;
    let k = bk % K;
    let kv = keys[t];
    var acc = 0.0;
    for (var q = 0u; q < Q; q++) {
        let slope = act_slope(queries[(b * Q + q) * H + h] + kv);
        acc = fma(upstream[(b * Q + q) * K + k], slope, acc);
    }
    out[t] = acc * w[h];
}

// d w[h] = Σ_{b, q, k} upstream[b, q, k] f(queries[b, q, h] + keys[b, k, h])
fn grad_w(h: u32) {
    let B = params[0];
    let Q = params[1];
    let K = params[2];
    let H = params[3];
    var acc = 0.0;
    for (var b = 0u; b < B; b++) {
        for (var q = 0u; q < Q; q++) {
            let qv = queries[(b * Q + q) * H + h];
            for (var k = 0u; k < K; k++) {
                let x = qv + keys[(b * K + k) * H + h];
                acc = fma(upstream[(b * Q + q) * K + k], act(x), acc);
            }
        }
    }
    out[h] = acc;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = flat_index(wid, nwg, lid);
    // Every binding is named here, so that each entry point's pipeline has all five.
    _ = queries[0];
    _ = keys[0];
    _ = w[0];
    _ = upstream[0];
    if (t >= params[4]) {
        return;
    }
    ENTRY(t);
}
