//! One function per GPU kernel: it takes the input buffers and the sizes, queues the
//! launch, and returns the output buffer. The ops' forward passes call these; the WGSL is
//! in `shaders/`, one file per kernel, with `shaders/common.wgsl` prepended to each.

use super::buffer::GpuBuffer;
use super::launch::{GROUP, Kernel, MAX_GROUPS_PER_DIM, grid, launch, spans};
use crate::activation::Activation;
use crate::ops::elementwise_fn::{BinaryFn, UnaryFn};

/// `f` applied to every element of `x`.
#[track_caller]
pub(crate) fn unary(x: &GpuBuffer, f: UnaryFn) -> GpuBuffer {
    let (formula, a, b) = unary_formula(f);
    let gpu = x.gpu();
    let out = GpuBuffer::uninit(gpu, f.name(), x.len());
    let name = format!("unary {formula}");
    let source = || include_str!("shaders/unary.wgsl").replace("FORMULA", formula);
    launch(
        gpu,
        f.name(),
        &Kernel::made(&name, &source),
        &[x.len() as u32, a.to_bits(), b.to_bits()],
        &[x.raw()],
        out.raw(),
        grid(x.len()),
    );
    out
}

/// The WGSL formula of `f` in terms of `v` (the element) and the constants `a`, `b`, with
/// the values of those constants. The same definitions as `UnaryFn::apply`; the
/// transcendental functions are WGSL's, so results agree with the CPU's to f32 rounding,
/// not bit for bit.
fn unary_formula(f: UnaryFn) -> (&'static str, f32, f32) {
    let formula = match f {
        UnaryFn::Neg => "-v",
        UnaryFn::Exp => "exp(v)",
        UnaryFn::Log => "log(v)",
        UnaryFn::Tanh => "tanh_safe(v)",
        UnaryFn::Sigmoid => "1.0 / (1.0 + exp(-v))",
        // `v < 0 ? 0 : v`, as on the CPU: NaN stays NaN, as in PyTorch.
        UnaryFn::Relu => "select(v, 0.0, v < 0.0)",
        UnaryFn::GeluErf => "v * normal_cdf(v)",
        UnaryFn::GeluTanh => {
            "0.5 * v * (1.0 + tanh_safe(SQRT_2_OVER_PI * (v + GELU_CUBIC * v * v * v)))"
        }
        UnaryFn::Sqrt => "sqrt(v)",
        UnaryFn::Powf(_) => "powf(v, a)",
        // `v ≤ 0 ? 0 : 1`: 1 at NaN, as on the CPU and in PyTorch.
        UnaryFn::Step => "select(1.0, 0.0, v <= 0.0)",
        UnaryFn::GeluErfGrad => "normal_cdf(v) + v * normal_pdf(v)",
        UnaryFn::GeluTanhGrad => {
            "0.5 * (1.0 + tanh_safe(SQRT_2_OVER_PI * (v + GELU_CUBIC * v * v * v))) + 0.5 * v * (1.0 - tanh_safe(SQRT_2_OVER_PI * (v + GELU_CUBIC * v * v * v)) * tanh_safe(SQRT_2_OVER_PI * (v + GELU_CUBIC * v * v * v))) * SQRT_2_OVER_PI * (1.0 + 3.0 * GELU_CUBIC * v * v)"
        }
        UnaryFn::Abs => "abs(v)",
        // ±0 stays ±0 and NaN stays NaN, as on the CPU.
        UnaryFn::Sign => "select(select(v, -1.0, v < 0.0), 1.0, v > 0.0)",
        UnaryFn::Clamp(..) => "select(select(v, b, v > b), a, v < a)",
        UnaryFn::ClampGrad(..) => "select(0.0, 1.0, a <= v && v <= b)",
    };
    let (a, b) = match f {
        UnaryFn::Powf(p) => (p, 0.0),
        UnaryFn::Clamp(lo, hi) | UnaryFn::ClampGrad(lo, hi) => (lo, hi),
        _ => (0.0, 0.0),
    };
    (formula, a, b)
}

/// The WGSL formula of a binary function of `x` and `y`.
fn binary_formula(f: BinaryFn) -> &'static str {
    match f {
        BinaryFn::Add => "x + y",
        BinaryFn::Sub => "x - y",
        BinaryFn::Mul => "x * y",
        BinaryFn::Div => "x / y",
        BinaryFn::Gt => "select(0.0, 1.0, x > y)",
        BinaryFn::Ge => "select(0.0, 1.0, x >= y)",
        BinaryFn::Lt => "select(0.0, 1.0, x < y)",
        BinaryFn::Le => "select(0.0, 1.0, x <= y)",
        BinaryFn::Eq => "select(0.0, 1.0, x == y)",
        BinaryFn::Maximum => "select(max(x, y), x + y, is_nan(x) || is_nan(y))",
        BinaryFn::Minimum => "select(min(x, y), x + y, is_nan(x) || is_nan(y))",
    }
}

/// The strides with which an operand of shape `shape` is read over the broadcast shape
/// `out`: its row-major strides, 0 along dimensions of size 1 and dimensions it lacks.
pub(crate) fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<u32> {
    let offset = out.len() - shape.len();
    let mut strides = vec![0u32; out.len()];
    let mut step = 1usize;
    for d in (0..shape.len()).rev() {
        if shape[d] != 1 {
            strides[offset + d] = step as u32;
        }
        step *= shape[d];
    }
    strides
}

/// The row-major strides of a contiguous tensor of shape `shape`, in elements.
pub(crate) fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

fn as_u32(values: &[usize]) -> impl Iterator<Item = u32> + '_ {
    values.iter().map(|&v| v as u32)
}

/// `f(a, b)` elementwise over the broadcast shape `out`.
#[track_caller]
pub(crate) fn binary(
    f: BinaryFn,
    (a, a_shape): (&GpuBuffer, &[usize]),
    (b, b_shape): (&GpuBuffer, &[usize]),
    out_shape: &[usize],
) -> GpuBuffer {
    let gpu = a.gpu();
    let n: usize = out_shape.iter().product();
    let out = GpuBuffer::uninit(gpu, f.name(), n);
    let mut params = vec![n as u32, out_shape.len() as u32];
    params.extend(as_u32(out_shape));
    params.extend(broadcast_strides(a_shape, out_shape));
    params.extend(broadcast_strides(b_shape, out_shape));
    let formula = binary_formula(f);
    let name = format!("binary {formula}");
    let source = || include_str!("shaders/binary.wgsl").replace("FORMULA", formula);
    let kernel = Kernel::made(&name, &source);
    launch(
        gpu,
        f.name(),
        &kernel,
        &params,
        &[a.raw(), b.raw()],
        out.raw(),
        grid(n),
    );
    out
}

/// `cond ? a : b` elementwise over the broadcast shape `out`.
#[track_caller]
pub(crate) fn where_cond(
    (cond, c_shape): (&GpuBuffer, &[usize]),
    (a, a_shape): (&GpuBuffer, &[usize]),
    (b, b_shape): (&GpuBuffer, &[usize]),
    out_shape: &[usize],
) -> GpuBuffer {
    let gpu = a.gpu();
    let n: usize = out_shape.iter().product();
    let out = GpuBuffer::uninit(gpu, "where", n);
    let mut params = vec![n as u32, out_shape.len() as u32];
    params.extend(as_u32(out_shape));
    for shape in [c_shape, a_shape, b_shape] {
        params.extend(broadcast_strides(shape, out_shape));
    }
    let kernel = Kernel::fixed("where", include_str!("shaders/where.wgsl"));
    launch(
        gpu,
        "where",
        &kernel,
        &params,
        &[cond.raw(), a.raw(), b.raw()],
        out.raw(),
        grid(n),
    );
    out
}

/// The contiguous copy of the view of `x` with shape `shape`, `strides` and `offset` (all
/// in elements): the kernel of `permute`, `narrow` and `expand`.
#[track_caller]
pub(crate) fn strided_copy(
    op: &str,
    x: &GpuBuffer,
    offset: usize,
    shape: &[usize],
    strides: &[usize],
) -> GpuBuffer {
    let gpu = x.gpu();
    let n: usize = shape.iter().product();
    let out = GpuBuffer::uninit(gpu, op, n);
    let mut params = vec![n as u32, shape.len() as u32, offset as u32];
    params.extend(as_u32(shape));
    params.extend(as_u32(strides));
    let kernel =
        Kernel::fixed("strided_copy", include_str!("shaders/strided_copy.wgsl"));
    launch(gpu, op, &kernel, &params, &[x.raw()], out.raw(), grid(n));
    out
}

/// Writes the contiguous `src` of shape `shape` into the view of `out` with `strides` and
/// `offset`: how `concat` places each input.
#[track_caller]
pub(crate) fn scatter_copy(
    op: &str,
    src: &GpuBuffer,
    out: &GpuBuffer,
    offset: usize,
    shape: &[usize],
    strides: &[usize],
) {
    let n: usize = shape.iter().product();
    let mut params = vec![n as u32, shape.len() as u32, offset as u32];
    params.extend(as_u32(shape));
    params.extend(as_u32(strides));
    let kernel =
        Kernel::fixed("scatter_copy", include_str!("shaders/scatter_copy.wgsl"));
    launch(
        src.gpu(),
        op,
        &kernel,
        &params,
        &[src.raw()],
        out.raw(),
        grid(n),
    );
}

/// What [`reduce`] computes along its dimension.
#[derive(Clone, Copy)]
pub(crate) enum Reduction {
    Sum = 0,
    Max = 1,
    Min = 2,
}

/// Lines at least this long are reduced by a workgroup each (`reduce_wide.wgsl`); shorter
/// ones by an invocation each (`reduce.wgsl`), which keeps more of a large GPU busy when
/// there are many short lines.
pub(crate) const WIDE_REDUCTION: usize = 256;

/// The sum, maximum or minimum over the middle dimension of `x` seen as
/// `[outer, n, inner]`, giving `[outer, inner]`.
#[track_caller]
pub(crate) fn reduce(
    op: &str,
    x: &GpuBuffer,
    (outer, n, inner): (usize, usize, usize),
    kind: Reduction,
) -> GpuBuffer {
    let gpu = x.gpu();
    let out = GpuBuffer::uninit(gpu, op, outer * inner);
    let params = [outer as u32, n as u32, inner as u32, kind as u32];
    let wide = n >= WIDE_REDUCTION;
    let (name, groups) = if wide {
        // One workgroup per output: a grid of outer·inner workgroups.
        ("reduce_wide", grid((outer * inner) * GROUP as usize))
    } else {
        ("reduce", grid(outer * inner))
    };
    let source = if wide {
        include_str!("shaders/reduce_wide.wgsl")
    } else {
        include_str!("shaders/reduce.wgsl")
    };
    let kernel = Kernel::fixed(name, source);
    launch(gpu, op, &kernel, &params, &[x.raw()], out.raw(), groups);
    out
}

/// The position of the maximum (`max`) or minimum of the middle dimension of `x` seen as
/// `[outer, n, inner]`, as `f32` whole numbers `[outer, inner]`.
#[track_caller]
pub(crate) fn arg_extreme(
    op: &str,
    x: &GpuBuffer,
    (outer, n, inner): (usize, usize, usize),
    max: bool,
) -> GpuBuffer {
    let kernel =
        Kernel::fixed("arg_extreme", include_str!("shaders/arg_extreme.wgsl"));
    per_line(
        op,
        &kernel,
        x,
        (outer, n, inner),
        u32::from(max),
        outer * inner,
    )
}

/// `softmax` (or `log_softmax`) over the middle dimension of `x` seen as
/// `[outer, n, inner]`.
#[track_caller]
pub(crate) fn softmax(
    x: &GpuBuffer,
    (outer, n, inner): (usize, usize, usize),
    log: bool,
) -> GpuBuffer {
    let op = if log { "log_softmax" } else { "softmax" };
    let kernel = Kernel::fixed("softmax", include_str!("shaders/softmax.wgsl"));
    per_line(op, &kernel, x, (outer, n, inner), u32::from(log), x.len())
}

/// Launches `kernel` with one invocation per line of `x` seen as `[outer, n, inner]` (a
/// line runs along the middle dimension) and the parameters `[outer, n, inner, flag]`,
/// writing a new buffer of `out_len` values.
#[track_caller]
fn per_line(
    op: &str,
    kernel: &Kernel,
    x: &GpuBuffer,
    (outer, n, inner): (usize, usize, usize),
    flag: u32,
    out_len: usize,
) -> GpuBuffer {
    let gpu = x.gpu();
    let out = GpuBuffer::uninit(gpu, op, out_len);
    let params = [outer as u32, n as u32, inner as u32, flag];
    let groups = grid(outer * inner);
    launch(gpu, op, kernel, &params, &[x.raw()], out.raw(), groups);
    out
}

/// The sizes of a batched product `out[b] = A[b] · B[b]`, `[m, k] · [k, n]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MatmulDims {
    pub(crate) batch: usize,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// Elements between consecutive matrices of A (0: one matrix for every batch).
    pub(crate) a_batch_stride: usize,
    /// Elements between consecutive matrices of B (0: one matrix for every batch).
    pub(crate) b_batch_stride: usize,
    /// A is stored `[k, m]` (read transposed).
    pub(crate) a_transposed: bool,
    /// B is stored `[n, k]` (read transposed).
    pub(crate) b_transposed: bool,
}

/// The two tilings of [`matmul`]: each thread computes `t × t` outputs of a `16t × 16t`
/// tile. Small products use the 64 × 64 tile, which leaves fewer threads idle at the
/// edges; large ones the 128 × 128 tile, which reads main memory half as often.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tiling {
    Tile64,
    Tile128,
}

impl Tiling {
    /// The tiling for a product of `m × n` outputs per matrix: 128 × 128 tiles once there
    /// are enough of them to keep a large GPU busy and each matrix fills one (at least
    /// 128 rows and columns: a batch of many small matrices computes each in one tile, and
    /// a 128 × 128 one would be four times as much idle work as a 64 × 64 one).
    pub(crate) fn for_size(dims: &MatmulDims) -> Tiling {
        let fills_a_tile = dims.m >= 128 && dims.n >= 128;
        if fills_a_tile
            && dims.batch * dims.m.div_ceil(128) * dims.n.div_ceil(128) >= 256
        {
            Tiling::Tile128
        } else {
            Tiling::Tile64
        }
    }

    fn per_thread(self) -> usize {
        match self {
            Tiling::Tile64 => 4,
            Tiling::Tile128 => 8,
        }
    }
}

/// The batched matrix product, with the tiling chosen by size.
#[track_caller]
pub(crate) fn matmul(
    op: &str,
    a: &GpuBuffer,
    b: &GpuBuffer,
    dims: MatmulDims,
) -> GpuBuffer {
    matmul_tiled(op, a, b, dims, Tiling::for_size(&dims), MAX_GROUPS_PER_DIM)
}

/// The batched matrix product with a given tiling, in launches of at most `max_per_dim`
/// workgroups along each dimension (the tests below run both tilings, and limits small
/// enough to split small products).
#[track_caller]
pub(crate) fn matmul_tiled(
    op: &str,
    a: &GpuBuffer,
    b: &GpuBuffer,
    dims: MatmulDims,
    tiling: Tiling,
    max_per_dim: usize,
) -> GpuBuffer {
    let gpu = a.gpu();
    let out = GpuBuffer::uninit(gpu, op, dims.batch * dims.m * dims.n);
    let t = tiling.per_thread();
    let tile = 16 * t;
    let name = format!("matmul {tile}x{tile}");
    let source = || {
        let bk = 1024 / tile;
        include_str!("shaders/matmul.wgsl")
            .replace("TM_VALUE", &t.to_string())
            .replace("TN_VALUE", &t.to_string())
            .replace("TM_TIMES_TN", &(t * t).to_string())
            .replace("BK_TIMES_BN", &(bk * tile).to_string())
    };
    let kernel = Kernel::made(&name, &source);
    // One workgroup per tile: the column tiles along x, the row tiles along y, the
    // matrices along z. A launch holds at most 65,535 workgroups along each, so a batch
    // of more matrices (a large batch times its heads) or a side of more tiles takes
    // several launches, each told where its first workgroup starts.
    let max = max_per_dim;
    for (first_matrix, matrices) in spans(dims.batch, max) {
        for (first_row_tile, row_tiles) in spans(dims.m.div_ceil(tile), max) {
            for (first_col_tile, col_tiles) in spans(dims.n.div_ceil(tile), max) {
                let params = [
                    dims.m as u32,
                    dims.n as u32,
                    dims.k as u32,
                    dims.a_batch_stride as u32,
                    dims.b_batch_stride as u32,
                    u32::from(dims.a_transposed),
                    u32::from(dims.b_transposed),
                    first_col_tile as u32,
                    first_row_tile as u32,
                    first_matrix as u32,
                ];
                let groups = (col_tiles as u32, row_tiles as u32, matrices as u32);
                // With k = 0 the kernel's loop over k runs no step and writes zeros, as
                // it should.
                launch(
                    gpu,
                    op,
                    &kernel,
                    &params,
                    &[a.raw(), b.raw()],
                    out.raw(),
                    groups,
                );
            }
        }
    }
    out
}

/// Rows of `x` seen as `[outer, n, inner]` picked along the middle dimension by `index`.
#[track_caller]
pub(crate) fn index_select(
    op: &str,
    x: &GpuBuffer,
    (outer, n, inner): (usize, usize, usize),
    index: &[usize],
) -> GpuBuffer {
    let gpu = x.gpu();
    let count = index.len();
    let out = GpuBuffer::uninit(gpu, op, outer * count * inner);
    let index: Vec<u32> = as_u32(index).collect();
    let index = GpuBuffer::upload_words(gpu, op, &index);
    let kernel =
        Kernel::fixed("index_select", include_str!("shaders/index_select.wgsl"));
    let params = [outer as u32, n as u32, inner as u32, count as u32];
    launch(
        gpu,
        op,
        &kernel,
        &params,
        &[x.raw(), index.raw()],
        out.raw(),
        grid(outer * count * inner),
    );
    out
}

/// `out[i] = x[offsets[i]]`.
#[track_caller]
pub(crate) fn gather(op: &str, x: &GpuBuffer, offsets: &[usize]) -> GpuBuffer {
    let gpu = x.gpu();
    let out = GpuBuffer::uninit(gpu, op, offsets.len());
    let words: Vec<u32> = as_u32(offsets).collect();
    let offsets_buffer = GpuBuffer::upload_words(gpu, op, &words);
    let kernel = Kernel::fixed("gather", include_str!("shaders/gather.wgsl"));
    launch(
        gpu,
        op,
        &kernel,
        &[words.len() as u32],
        &[x.raw(), offsets_buffer.raw()],
        out.raw(),
        grid(words.len()),
    );
    out
}

/// The derivative of a gather: `out[e] = Σ g[s]` over every `s` with `targets[s] = e`,
/// for `n_out` outputs, summed in the order of `s`.
#[track_caller]
pub(crate) fn scatter_add(
    op: &str,
    g: &GpuBuffer,
    targets: &[usize],
    n_out: usize,
) -> GpuBuffer {
    let gpu = g.gpu();
    // Sources grouped by target (a counting sort, which keeps each group in order).
    let mut starts = vec![0u32; n_out + 1];
    for &t in targets {
        starts[t + 1] += 1;
    }
    for e in 0..n_out {
        starts[e + 1] += starts[e];
    }
    let mut next = starts.clone();
    let mut sources = vec![0u32; targets.len()];
    for (s, &t) in targets.iter().enumerate() {
        sources[next[t] as usize] = s as u32;
        next[t] += 1;
    }
    let out = GpuBuffer::uninit(gpu, op, n_out);
    let starts = GpuBuffer::upload_words(gpu, op, &starts);
    let sources = GpuBuffer::upload_words(gpu, op, &sources);
    let kernel =
        Kernel::fixed("segment_sum", include_str!("shaders/segment_sum.wgsl"));
    launch(
        gpu,
        op,
        &kernel,
        &[n_out as u32],
        &[g.raw(), starts.raw(), sources.raw()],
        out.raw(),
        grid(n_out),
    );
    out
}

/// Which output of the additive-scores kernel to compute.
#[derive(Clone, Copy)]
pub(crate) enum Additive {
    Scores,
    GradQueries,
    GradKeys,
    GradW,
}

/// One output of the fused additive scores (see `shaders/additive.wgsl`), for queries
/// `[B, Q, H]`, keys `[B, K, H]`, `w: [H]` and (for the gradients) `upstream: [B, Q, K]`.
#[track_caller]
pub(crate) fn additive(
    which: Additive,
    activation: Activation,
    [queries, keys, w, upstream]: [&GpuBuffer; 4],
    (b, q, k, h): (usize, usize, usize, usize),
) -> GpuBuffer {
    let gpu = queries.gpu();
    let (entry, n) = match which {
        Additive::Scores => ("scores", b * q * k),
        Additive::GradQueries => ("grad_queries", b * q * h),
        Additive::GradKeys => ("grad_keys", b * k * h),
        Additive::GradW => ("grad_w", h),
    };
    let out = GpuBuffer::uninit(gpu, "additive_scores", n);
    let name = format!("additive {entry} {activation}");
    let (value, slope) = match activation {
        Activation::Tanh => (
            "return tanh_safe(x);",
            "let t = tanh_safe(x);\n    return 1.0 - t * t;",
        ),
        // The element-wise relu and its derivative: NaN stays NaN, the slope at 0 is 0.
        Activation::Relu => (
            "return select(x, 0.0, x < 0.0);",
            "return select(1.0, 0.0, x <= 0.0);",
        ),
    };
    let source = || {
        include_str!("shaders/additive.wgsl")
            .replace("ENTRY", entry)
            .replace("ACT_VALUE", value)
            .replace("ACT_SLOPE", slope)
    };
    let kernel = Kernel::made(&name, &source);
    let params = [b as u32, q as u32, k as u32, h as u32, n as u32];
    launch(
        gpu,
        "additive_scores",
        &kernel,
        &params,
        &[queries.raw(), keys.raw(), w.raw(), upstream.raw()],
        out.raw(),
        grid(n),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The process's GPU; a machine without one fails these tests, unless
    /// `ENGINE_GPU_TESTS=skip` opts out (as in `tests/devices/harness.rs`).
    fn test_gpu() -> Option<crate::gpu::Gpu> {
        match crate::gpu::open() {
            Ok(gpu) => Some(gpu),
            Err(e) if std::env::var("ENGINE_GPU_TESTS").as_deref() == Ok("skip") => {
                eprintln!("GPU TESTS SKIPPED (ENGINE_GPU_TESTS=skip): {e}");
                None
            }
            Err(e) => panic!(
                "the engine was built with its wgpu feature, so these tests need a GPU adapter:\n{e}"
            ),
        }
    }

    /// `out[b] = A[b] · B[b]` by the definition, on the host.
    fn product(a: &[f32], b: &[f32], d: &MatmulDims) -> Vec<f32> {
        let mut out = vec![0.0; d.batch * d.m * d.n];
        for p in 0..d.batch {
            for i in 0..d.m {
                for j in 0..d.n {
                    let mut sum = 0.0;
                    for l in 0..d.k {
                        let x = if d.a_transposed {
                            l * d.m + i
                        } else {
                            i * d.k + l
                        };
                        let y = if d.b_transposed {
                            j * d.k + l
                        } else {
                            l * d.n + j
                        };
                        sum +=
                            a[p * d.a_batch_stride + x] * b[p * d.b_batch_stride + y];
                    }
                    out[(p * d.m + i) * d.n + j] = sum;
                }
            }
        }
        out
    }

    #[test]
    fn products_split_over_several_launches_along_every_dimension_are_exact() {
        let Some(gpu) = test_gpu() else { return };
        // 70 rows and 150 columns are 2 × 3 tiles of 64 (1 × 2 of 128): with at most 1, 2
        // or 3 workgroups per dimension and launch, the matrices, the row tiles and the
        // column tiles are each cut into several launches.
        let (batch, m, n, k) = (5, 70, 150, 9);
        for (a_t, b_t, shared_b) in [
            (false, false, false),
            (true, false, false),
            (false, true, true),
            (true, true, false),
        ] {
            let dims = MatmulDims {
                batch,
                m,
                n,
                k,
                a_batch_stride: m * k,
                b_batch_stride: if shared_b { 0 } else { k * n },
                a_transposed: a_t,
                b_transposed: b_t,
            };
            let a: Vec<f32> = (0..batch * m * k)
                .map(|i| ((i * 7) % 13) as f32 - 6.0)
                .collect();
            let b_len = if shared_b { k * n } else { batch * k * n };
            let b: Vec<f32> =
                (0..b_len).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
            let expected = product(&a, &b, &dims);
            let a = GpuBuffer::upload(&gpu, "matmul", &a);
            let b = GpuBuffer::upload(&gpu, "matmul", &b);
            for tiling in [Tiling::Tile64, Tiling::Tile128] {
                for max_per_dim in [1, 2, 3, MAX_GROUPS_PER_DIM] {
                    let got =
                        matmul_tiled("matmul", &a, &b, dims, tiling, max_per_dim)
                            .read();
                    // Small whole numbers: every sum is exact in f32.
                    assert_eq!(
                        got, expected,
                        "{dims:?}, {tiling:?}, at most {max_per_dim} workgroups per dimension"
                    );
                }
            }
        }
    }

    #[test]
    fn large_tiles_only_for_matrices_that_fill_them_in_numbers() {
        let dims = |batch, m, n| MatmulDims {
            batch,
            m,
            n,
            k: 8,
            a_batch_stride: m * 8,
            b_batch_stride: 8 * n,
            a_transposed: false,
            b_transposed: false,
        };
        // 256 tiles of 128 × 128: one matrix of 2048², or 256 of 128².
        assert_eq!(Tiling::for_size(&dims(1, 2048, 2048)), Tiling::Tile128);
        assert_eq!(Tiling::for_size(&dims(256, 128, 128)), Tiling::Tile128);
        // Fewer tiles than that, or matrices smaller than one tile, however many.
        assert_eq!(Tiling::for_size(&dims(255, 128, 128)), Tiling::Tile64);
        assert_eq!(Tiling::for_size(&dims(1, 2048, 1920)), Tiling::Tile64);
        assert_eq!(Tiling::for_size(&dims(70_000, 2, 2)), Tiling::Tile64);
        assert_eq!(Tiling::for_size(&dims(4096, 127, 4096)), Tiling::Tile64);
    }
}
