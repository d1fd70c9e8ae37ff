// out[i] = f(a[..], b[..]) with broadcasting: each operand is read through strides over
// the output's shape, 0 along a dimension it is broadcast over.
// params: [n, rank, shape[rank], a_strides[rank], b_strides[rank]]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

fn f(x: f32, y: f32) -> f32 {
    return FORMULA;
}

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
    var ia = 0u;
    var ib = 0u;
    for (var d = rank; d > 0u; d--) {
        let size = params[1u + d];
        let index = rest % size;
        rest = rest / size;
        ia += index * params[1u + rank + d];
        ib += index * params[1u + 2u * rank + d];
    }
    out[i] = f(a[ia], b[ib]);
}
