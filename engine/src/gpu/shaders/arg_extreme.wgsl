// The position of the largest (MAX = 1) or smallest (MAX = 0) value along the middle
// dimension of x viewed as [outer, n, inner], as an f32 whole number. As on the CPU: the
// first position wins a tie, and a NaN beats every number (the first NaN wins).
// params: [outer, n, inner, max]

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
    var best = 0u;
    for (var k = 1u; k < n; k++) {
        let current = x[base + best * inner];
        if (is_nan(current)) {
            break;
        }
        let v = x[base + k * inner];
        let beats = is_nan(v) || select((v < current), (v > current), params[3] == 1u);
        if (beats) {
            best = k;
        }
    }
    out[i] = f32(best);
}
