// The derivative of a gather: out[e] = Σ g[s] over the sources s listed for e, in order.
// The lists are built on the host from the offsets (starts[e]..starts[e+1] into sources),
// so each output is one thread's sum and no two threads write the same value: WGSL has no
// atomic add for floats, and this way the sum's order is fixed.
// params: [n_out]

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> g: array<f32>;
@group(0) @binding(2) var<storage, read> starts: array<u32>;
@group(0) @binding(3) var<storage, read> sources: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let e = flat_index(wid, nwg, lid);
    if (e >= params[0]) {
        return;
    }
    var acc = 0.0;
    for (var s = starts[e]; s < starts[e + 1u]; s++) {
        acc += g[sources[s]];
    }
    out[e] = acc;
}
