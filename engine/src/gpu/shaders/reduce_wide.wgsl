// Like reduce.wgsl, for long lines: one workgroup of 256 invocations per output element.
// Each invocation combines every 256th value of the line (j = lid, lid + 256, …), then the
// workgroup combines its 256 partial results in a tree through workgroup memory: 8 rounds
// of halving instead of one invocation walking all n values. KIND is 0 (sum), 1 (max) or
// 2 (min); max and min give NaN when a value is NaN.
// params: [outer, n, inner, kind]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

var<workgroup> partial: array<f32, 256>;

fn combine(kind: u32, a: f32, b: f32) -> f32 {
    if (kind == 0u) {
        return a + b;
    }
    if (is_nan(a) || is_nan(b)) {
        return a + b;
    }
    return select(min(a, b), max(a, b), kind == 1u);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let o = wid.y * nwg.x + wid.x; // the output element of this workgroup
    let outer = params[0];
    let n = params[1];
    let inner = params[2];
    let kind = params[3];
    // Every invocation reaches the barriers below, even in a workgroup past the end.
    let in_range = o < outer * inner;
    var acc = 0.0;
    if (kind == 1u) {
        acc = bitcast<f32>(0xff800000u); // -inf
    } else if (kind == 2u) {
        acc = bitcast<f32>(0x7f800000u); // +inf
    }
    if (in_range) {
        let base = (o / inner) * n * inner + o % inner;
        for (var j = lid.x; j < n; j += 256u) {
            acc = combine(kind, acc, x[base + j * inner]);
        }
    }
    partial[lid.x] = acc;
    workgroupBarrier();
    for (var half = 128u; half > 0u; half = half / 2u) {
        if (lid.x < half) {
            partial[lid.x] = combine(kind, partial[lid.x], partial[lid.x + half]);
        }
        workgroupBarrier();
    }
    if (in_range && lid.x == 0u) {
        out[o] = partial[0];
    }
}
