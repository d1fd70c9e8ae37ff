// Rows picked by an index along the middle dimension of x viewed as [outer, n, inner]:
// out[o, j, i] = x[o, index[j], i]. The kernel of index_select and embedding.
// params: [outer, n, inner, count]; index: `count` u32 (checked on the host)

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> index: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = flat_index(wid, nwg, lid);
    let n = params[1];
    let inner = params[2];
    let count = params[3];
    if (t >= params[0] * count * inner) {
        return;
    }
    let i = t % inner;
    let j = (t / inner) % count;
    let o = t / (inner * count);
    out[t] = x[(o * n + index[j]) * inner + i];
}
