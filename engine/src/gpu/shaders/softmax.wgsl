// softmax (or log_softmax when LOG is 1) along the middle dimension of x viewed as
// [outer, n, inner]: one thread per row, three passes (max, sum of exp(x - max), write).
// params: [outer, n, inner, log]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = flat_index(wid, nwg, lid);
    let outer = params[0];
    let n = params[1];
    let inner = params[2];
    if (i >= outer * inner) {
        return;
    }
    let base = (i / inner) * n * inner + i % inner;
    var top = bitcast<f32>(0xff800000u);
    for (var j = 0u; j < n; j++) {
        top = max(top, x[base + j * inner]);
    }
    // As on the CPU: a row with no finite maximum (all -inf, or a +inf) is not shifted,
    // so all -inf gives 0/0 = NaN everywhere (as in PyTorch), and a +inf gives NaN there.
    if (!is_finite(top)) {
        top = 0.0;
    }
    var total = 0.0;
    for (var j = 0u; j < n; j++) {
        total += exp(x[base + j * inner] - top);
    }
    if (params[3] == 1u) {
        let log_total = log(total);
        for (var j = 0u; j < n; j++) {
            out[base + j * inner] = x[base + j * inner] - top - log_total;
        }
    } else {
        for (var j = 0u; j < n; j++) {
            out[base + j * inner] = exp(x[base + j * inner] - top) / total;
        }
    }
}
