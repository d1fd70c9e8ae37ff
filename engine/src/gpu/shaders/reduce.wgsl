// Reduces the middle dimension of x viewed as [outer, n, inner]: one thread per output
// element walks its n values in order. KIND is 0 (sum), 1 (max) or 2 (min); max and min
// give NaN when a value is NaN, as on the CPU.
// params: [outer, n, inner, kind]

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
    let kind = params[3];
    if (i >= outer * inner) {
        return;
    }
    let o = i / inner;
    let base = o * n * inner + i % inner;
    var acc = 0.0;
    if (kind == 1u) {
        acc = bitcast<f32>(0xff800000u); // -inf
    } else if (kind == 2u) {
        acc = bitcast<f32>(0x7f800000u); // +inf
    }
    for (var j = 0u; j < n; j++) {
        let v = x[base + j * inner];
        if (kind == 0u) {
            acc += v;
        } else if (is_nan(v) || is_nan(acc)) {
            acc = v + acc;
        } else if (kind == 1u) {
            acc = max(acc, v);
        } else {
            acc = min(acc, v);
        }
    }
    out[i] = acc;
}
