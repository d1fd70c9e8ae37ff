// A contiguous copy of a strided view: out[i] = x[offset + Σ index_d · stride_d], the
// kernel of permute, transpose, narrow and expand (a stride of 0 repeats a value).
// params: [n, rank, offset, shape[rank], strides[rank]]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

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
    var at = params[2];
    for (var d = rank; d > 0u; d--) {
        let size = params[2u + d];
        at += (rest % size) * params[2u + rank + d];
        rest = rest / size;
    }
    out[i] = x[at];
}
