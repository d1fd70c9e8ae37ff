// Shared by every kernel: the thread's flat index, and the functions WGSL lacks.

// The index of this thread among all threads of a launch of `grid(n)` workgroups of 256
// (see `launch.rs`): workgroups are spread over x and y, 65,535 at most along each.
fn flat_index(wid: vec3<u32>, nwg: vec3<u32>, lid: vec3<u32>) -> u32 {
    return (wid.y * nwg.x + wid.x) * 256u + lid.x;
}

// By its bits: WGSL lets a compiler assume that floats are never NaN, and `x != x` is
// then folded to false (lavapipe does).
fn is_nan(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

fn is_finite(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// tanh without overflow: WGSL's own may compute e^(2x) and give NaN for large |x|.
fn tanh_safe(x: f32) -> f32 {
    return tanh(clamp(x, -15.0, 15.0));
}

// The error function (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7).
fn erf_approx(x: f32) -> f32 {
    let a = abs(x);
    let t = 1.0 / (1.0 + 0.3275911 * a);
    let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let y = 1.0 - poly * exp(-a * a);
    return select(y, -y, x < 0.0);
}

fn normal_cdf(x: f32) -> f32 {
    return 0.5 * (1.0 + erf_approx(x * 0.70710678118654752));
}

fn normal_pdf(x: f32) -> f32 {
    return 0.39894228040143268 * exp(-0.5 * x * x);
}

// x^p with the sign rules of C's powf, which WGSL's pow leaves undefined for x < 0.
fn powf(x: f32, p: f32) -> f32 {
    if (p == 0.0) {
        return 1.0;
    }
    if (p == 2.0) {
        return x * x;
    }
    let magnitude = pow(abs(x), p);
    if (x >= 0.0) {
        return magnitude;
    }
    if (floor(p) != p) {
        return bitcast<f32>(0x7fc00000u); // NaN: a negative number to a fractional power
    }
    let odd = (abs(p) % 2.0) == 1.0;
    return select(magnitude, -magnitude, odd);
}

const SQRT_2_OVER_PI: f32 = 0.7978845608028654;
const GELU_CUBIC: f32 = 0.044715;
