// out[i] = cond ? a : b, elementwise with broadcasting (as in binary.wgsl); any non-zero
// condition counts as true.
// params: [n, rank, shape[rank], cond_strides[rank], a_strides[rank], b_strides[rank]]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> cond: array<f32>;
@group(0) @binding(2) var<storage, read> a: array<f32>;
@group(0) @binding(3) var<storage, read> b: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = flat_index(wid, nwg, lid);
    if (i >= params[0]) {
        return;
    }
    let rank = params[1];
    var rest = i;
    var ic = 0u;
    var ia = 0u;
    var ib = 0u;
    for (var d = rank; d > 0u; d--) {
        let size = params[1u + d];
        let index = rest % size;
        rest = rest / size;
        ic += index * params[1u + rank + d];
        ia += index * params[1u + 2u * rank + d];
        ib += index * params[1u + 3u * rank + d];
    }
    out[i] = select(b[ib], a[ia], cond[ic] != 0.0);
}
