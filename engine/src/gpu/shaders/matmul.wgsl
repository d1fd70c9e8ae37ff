// A batched matrix product out[b] = A[b] · B[b], tiled through workgroup memory.
//
// A workgroup of 16 × 16 threads computes one BM × BN tile of the output, BM = 16·TM
// and BN = 16·TN; each thread computes TM × TN of its values, kept in registers. For
// each step of BK along the shared dimension, the workgroup copies a BM × BK block of
// A and a BK × BN block of B into workgroup memory (each thread copies four values of
// each), waits at a barrier, and then every thread reads its TM values of A and TN
// values of B from that fast memory BK times: each value copied from main memory is
// used by 16 threads.
//
// A is read as [M, K] (or stored [K, M] when a_t = 1), B as [K, N] (or stored [N, K]
// when b_t = 1): the transposed forms the derivatives of matmul use, without a copy.
// A batch stride of 0 reuses one matrix for every batch (a [K, N] weight). A launch
// holds at most 65,535 workgroups along each dimension, so a large product takes several
// launches; each is told its first column tile, row tile and matrix. params:
// [M, N, K, a_batch_stride, b_batch_stride, a_t, b_t, first_x, first_y, first_z]

// ANCHOR: bindings
@group(0) @binding(0) var<storage, read> params: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;
// ANCHOR_END: bindings

// ANCHOR: tiles
const TM: u32 = TM_VALUEu;
const TN: u32 = TN_VALUEu;
const BM: u32 = 16u * TM;
const BN: u32 = 16u * TN;
const BK: u32 = 1024u / BM; // so that each thread copies 4 values of A per step

var<workgroup> tile_a: array<f32, 1024>; // [BK][BM]
var<workgroup> tile_b: array<f32, BK_TIMES_BN>; // [BK][BN]
// ANCHOR_END: tiles

// ANCHOR: entry
@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>,
        @builtin(local_invocation_id) lid: vec3<u32>) {
    let M = params[0];
    let N = params[1];
    let K = params[2];
    let matrix = params[9] + wid.z;
    let a_base = matrix * params[3];
    let b_base = matrix * params[4];
    let a_t = params[5] == 1u;
    let b_t = params[6] == 1u;
    let row0 = (params[8] + wid.y) * BM;
    let col0 = (params[7] + wid.x) * BN;
    let thread = lid.y * 16u + lid.x;

    var acc: array<f32, TM_TIMES_TN>;
    for (var i = 0u; i < TM * TN; i++) {
        acc[i] = 0.0;
    }
    var a_reg: array<f32, TM>;
    var b_reg: array<f32, TN>;
    // ANCHOR_END: entry

    // ANCHOR: copy
    for (var k0 = 0u; k0 < K; k0 += BK) {
        // Copy the blocks, reading main memory along its contiguous direction.
        for (var r = 0u; r < BM * BK / 256u; r++) {
            let e = thread + r * 256u;
            var mm: u32;
            var kk: u32;
            if (a_t) {
                kk = e / BM;
                mm = e % BM;
            } else {
                mm = e / BK;
                kk = e % BK;
            }
            let m = row0 + mm;
            let k = k0 + kk;
            var v = 0.0;
            if (m < M && k < K) {
                v = a[a_base + select(m * K + k, k * M + m, a_t)];
            }
            tile_a[kk * BM + mm] = v;
        }
        for (var r = 0u; r < BN * BK / 256u; r++) {
            let e = thread + r * 256u;
            var nn: u32;
            var kk: u32;
            if (b_t) {
                nn = e / BK;
                kk = e % BK;
            } else {
                kk = e / BN;
                nn = e % BN;
            }
            let n = col0 + nn;
            let k = k0 + kk;
            var v = 0.0;
            if (n < N && k < K) {
                v = b[b_base + select(k * N + n, n * K + k, b_t)];
            }
            tile_b[kk * BN + nn] = v;
        }
        workgroupBarrier();
        // ANCHOR_END: copy
        // ANCHOR: compute
        // Thread (x, y) owns rows y, y + 16, … and columns x, x + 16, … of the tile.
        for (var kk = 0u; kk < BK; kk++) {
            for (var i = 0u; i < TM; i++) {
                a_reg[i] = tile_a[kk * BM + lid.y + 16u * i];
            }
            for (var j = 0u; j < TN; j++) {
                b_reg[j] = tile_b[kk * BN + lid.x + 16u * j];
            }
            for (var i = 0u; i < TM; i++) {
                for (var j = 0u; j < TN; j++) {
                    acc[i * TN + j] = fma(a_reg[i], b_reg[j], acc[i * TN + j]);
                }
            }
        }
        workgroupBarrier();
    }
    // ANCHOR_END: compute

    // ANCHOR: write
    let out_base = matrix * M * N;
    for (var i = 0u; i < TM; i++) {
        let m = row0 + lid.y + 16u * i;
        for (var j = 0u; j < TN; j++) {
            let n = col0 + lid.x + 16u * j;
            if (m < M && n < N) {
                out[out_base + m * N + n] = acc[i * TN + j];
            }
        }
    }
}
// ANCHOR_END: write
