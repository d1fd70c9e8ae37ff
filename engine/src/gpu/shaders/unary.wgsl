// out[i] = f(x[i]). `f` is spliced in by `kernels.rs`, one pipeline per function.
// params: [n, a, b] (a and b: the function's constants as f32 bits, e.g. clamp's
// bounds).

@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;

fn f(v: f32, a: f32, b: f32) -> f32 {
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
    out[i] = f(x[i], bitcast<f32>(params[1]), bitcast<f32>(params[2]));
}
