//! The loops around the micro-kernel (see the [parent module](super)), and the split of a
//! product's rows between threads.

use std::cell::RefCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::super::pool::{self, Task};
use super::{MicroKernel, View, pack};

/// Steps along `k` per packed block: part of the definition of the result (each block is
/// summed on its own, then added to the element), so the same on every path.
pub(super) const KC: usize = 256;
/// Rows per packed block of `a` (a whole number of tiles of every kernel: 12, 6 and 4
/// rows).
const MC: usize = 96;
/// Columns per packed block of `b` (a whole number of tiles of every kernel: 32, 16 and 8
/// columns).
const NC: usize = 1024;

/// The largest tile of any kernel, in values: a tile across the edge of the result is
/// computed into a buffer of this size.
const MAX_TILE: usize = 12 * 32;

/// Rows of `b` packed at once: each thread packs up to `KB × NC` values (8 MiB) of `b`
/// before it computes its first rows against them.
const KB: usize = 8 * KC;

/// A product on more than one thread gives each at least this many multiply-adds (about
/// 30 µs of work on one core): handing work to a thread costs microseconds, and more when
/// the thread has gone to sleep.
const MIN_WORK_PER_THREAD: usize = 1 << 21;

/// Pack buffers, one set per thread that works on a product.
#[derive(Default)]
struct Workspace {
    a: Vec<f32>,
    b: Vec<f32>,
}

thread_local! {
    /// The buffers of the products this thread starts, for itself and its helpers, kept
    /// between products so that packing does not allocate.
    static WORKSPACES: RefCell<Vec<Workspace>> = const { RefCell::new(Vec::new()) };
}

/// `out = a · b` with the micro-kernel `K` of `MR × NR` tiles on up to `threads` threads.
///
/// The work goes in stretches of `b` (up to `KB` rows and `NC` columns) and, within one,
/// in runs of `MC` rows of the result. Threads take runs one at a time until none is left,
/// so a thread that the system holds back leaves more runs to the others instead of holding
/// up the product. Each thread packs the stretch of `b` itself, before its first run: the
/// threads share nothing that one of them writes, so no core waits for a cache line that
/// another core holds. Stretches follow each other in order of `k`, so every element's sum
/// is added in the same order whoever computes it.
///
/// # Safety
/// The CPU must have the instructions of `K`'s path.
pub(super) unsafe fn sgemm<
    K: MicroKernel<MR, NR>,
    const MR: usize,
    const NR: usize,
>(
    a: View,
    b: View,
    out: &mut [f32],
    threads: usize,
) {
    const {
        assert!(MC.is_multiple_of(MR) && NC.is_multiple_of(NR) && MR * NR <= MAX_TILE)
    };
    let (m, k, n) = (a.rows, a.cols, b.cols);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        out.fill(0.0); // every entry is an empty sum
        return;
    }
    let runs = m.div_ceil(MC);
    let threads = threads
        .min(runs)
        .min((m * k * n / MIN_WORK_PER_THREAD).max(1));
    WORKSPACES.with_borrow_mut(|spaces| {
        if spaces.len() < threads {
            spaces.resize_with(threads, Workspace::default);
        }
        for jc in (0..n).step_by(NC) {
            for kb in (0..k).step_by(KB) {
                let stretch = Block {
                    depth: (kb, KB.min(k - kb)),
                    columns: (jc, NC.min(n - jc)),
                    n,
                };
                // Each run of rows waits in a slot for the thread that takes it.
                let slots: Vec<_> = out
                    .chunks_mut(MC * n)
                    .enumerate()
                    .map(|(r, rows)| Mutex::new(Some((r * MC, rows))))
                    .collect();
                let next = AtomicUsize::new(0);
                let (slots, next) = (&slots, &next);
                let work = move |space: &mut Workspace| {
                    let mut packed = false;
                    while let Some(slot) =
                        slots.get(next.fetch_add(1, Ordering::Relaxed))
                    {
                        let run = slot
                            .lock()
                            .expect("a run's lock is never poisoned")
                            .take();
                        let (i_lo, rows) = run.expect("each run is taken once");
                        if !packed {
                            pack_b::<NR>(b, stretch, &mut space.b);
                            packed = true;
                        }
                        let (packed_b, a_space) = (&space.b, &mut space.a);
                        // SAFETY: this function's contract.
                        unsafe {
                            multiply_stretch::<K, MR, NR>(
                                a,
                                packed_b,
                                stretch,
                                (i_lo, rows),
                                a_space,
                            )
                        };
                    }
                };
                if threads == 1 {
                    // Most products (one head's, one layer's at a time) stay on the
                    // calling thread, without the pool's boxed tasks.
                    work(&mut spaces[0]);
                } else {
                    let tasks = spaces[..threads].iter_mut();
                    pool::run_all(
                        tasks
                            .map(|space| Box::new(move || work(space)) as Task)
                            .collect(),
                    );
                }
            }
        }
    });
}

/// A block of `b`: rows `p0..p0 + kc` (`depth`) and columns `j0..j0 + nc` (`columns`) of
/// its `n` columns.
#[derive(Clone, Copy, Debug)]
struct Block {
    depth: (usize, usize),
    columns: (usize, usize),
    n: usize,
}

impl Block {
    /// Panels of `nr` columns across the block.
    fn panels_across(self, nr: usize) -> usize {
        self.columns.1.div_ceil(nr)
    }

    /// The blocks of up to `KC` rows that make up this one, each with the offset of its
    /// panels of `nr` columns in the packed stretch.
    fn kc_blocks(self, nr: usize) -> impl Iterator<Item = (Block, usize)> {
        let (p0, depth) = self.depth;
        (p0..p0 + depth).step_by(KC).map(move |pc| {
            let block = Block {
                depth: (pc, KC.min(p0 + depth - pc)),
                ..self
            };
            (block, (pc - p0) * self.panels_across(nr) * nr)
        })
    }
}

/// Packs `stretch` of `b` into `packed`: for each of its blocks of `KC` rows, `⌈nc / NR⌉`
/// panels of `NR` columns.
fn pack_b<const NR: usize>(b: View, stretch: Block, packed: &mut Vec<f32>) {
    let (jc, nc) = stretch.columns;
    let across = stretch.panels_across(NR);
    packed.resize(stretch.depth.1 * across * NR, 0.0);
    for (block, offset) in stretch.kc_blocks(NR) {
        let kc = block.depth.1;
        let panels = packed[offset..].chunks_exact_mut(kc * NR);
        for (q, panel) in panels.take(across).enumerate() {
            let j0 = jc + q * NR;
            pack::pack_b::<NR>(b, block.depth, (j0, NR.min(jc + nc - j0)), panel);
        }
    }
}

/// Rows `i_lo..` of `a · b` over `stretch` into `out` (whole rows of the result,
/// row-major), block by block of `KC` rows. `packed_b` is the stretch packed by [`pack_b`].
///
/// # Safety
/// The CPU must have the instructions of `K`'s path.
unsafe fn multiply_stretch<
    K: MicroKernel<MR, NR>,
    const MR: usize,
    const NR: usize,
>(
    a: View,
    packed_b: &[f32],
    stretch: Block,
    (i_lo, out): (usize, &mut [f32]),
    a_space: &mut Vec<f32>,
) {
    let panels = stretch.panels_across(NR) * NR;
    for (block, offset) in stretch.kc_blocks(NR) {
        let packed = &packed_b[offset..offset + block.depth.1 * panels];
        // SAFETY: this function's contract.
        unsafe {
            multiply_rows::<K, MR, NR>(a, packed, block, (i_lo, &mut *out), a_space)
        };
    }
}

/// Rows `i_lo..` of `a · b` over `block` into `out` (at most `MC` whole rows of the
/// result, row-major): stores the block's products when it is the first along `k`, adds
/// them after that. `packed_b` is the block, packed.
///
/// # Safety
/// The CPU must have the instructions of `K`'s path.
unsafe fn multiply_rows<K: MicroKernel<MR, NR>, const MR: usize, const NR: usize>(
    a: View,
    packed_b: &[f32],
    block: Block,
    (i_lo, out): (usize, &mut [f32]),
    a_space: &mut Vec<f32>,
) {
    let (k, n) = (a.cols, block.n);
    let ((pc, kc), (jc, _)) = (block.depth, block.columns);
    let m = out.len() / n;
    debug_assert!(m <= MC, "a run has at most MC rows");
    let accumulate = pc > 0;
    // With one panel across, `a` is read in place: each of its values is used once, so
    // packing it would cost as much as the use.
    let a_in_place = block.panels_across(NR) == 1;
    a_space.resize(MC * KC, 0.0);
    if !a_in_place {
        pack::pack_a::<MR>(a, (i_lo, m), (pc, kc), a_space);
    }
    let mut tile = [0.0; MAX_TILE];
    for (panel, i0) in (0..m).step_by(MR).enumerate() {
        let mr = MR.min(m - i0);
        // In place for a whole panel; a short last panel is packed alone.
        let read_in_place = a_in_place && mr == MR;
        // The panel, whether its steps are side by side, and the stride (see `kernel`).
        let a_src: (&[f32], bool, usize) = if read_in_place && a.transposed {
            (&a.data[pc * a.rows + i_lo + i0..], true, a.rows)
        } else if read_in_place {
            (&a.data[(i_lo + i0) * k + pc..], false, k)
        } else if a_in_place {
            pack::pack_a::<MR>(a, (i_lo + i0, mr), (pc, kc), a_space);
            (a_space, true, MR)
        } else {
            (&a_space[panel * kc * MR..], true, MR)
        };
        for (q, b_panel) in packed_b.chunks_exact(kc * NR).enumerate() {
            let j0 = jc + q * NR;
            let nr = NR.min(n - j0);
            if mr == MR && nr == NR {
                let c = (&mut out[i0 * n + j0..], n);
                // SAFETY: this function's contract.
                unsafe { micro_tile::<K, MR, NR>(kc, a_src, b_panel, c, accumulate) };
            } else {
                // A tile across the edge: computed whole, stored in part.
                let whole = (&mut tile[..MR * NR], NR);
                // SAFETY: this function's contract.
                unsafe { micro_tile::<K, MR, NR>(kc, a_src, b_panel, whole, false) };
                for r in 0..mr {
                    let dst = &mut out[(i0 + r) * n + j0..][..nr];
                    let src = &tile[r * NR..][..nr];
                    if accumulate {
                        dst.iter_mut().zip(src).for_each(|(d, s)| *d += s);
                    } else {
                        dst.copy_from_slice(src);
                    }
                }
            }
        }
    }
}

/// One tile by the micro-kernel, `a` given as its panel, whether its steps are side by
/// side, and its stride.
///
/// # Safety
/// The CPU must have the instructions of `K`'s path.
unsafe fn micro_tile<K: MicroKernel<MR, NR>, const MR: usize, const NR: usize>(
    kc: usize,
    (a, step_major, stride): (&[f32], bool, usize),
    b: &[f32],
    c: (&mut [f32], usize),
    accumulate: bool,
) {
    // SAFETY: this function's contract.
    unsafe {
        if step_major {
            K::tile::<true>(kc, (a, stride), b, c, accumulate)
        } else {
            K::tile::<false>(kc, (a, stride), b, c, accumulate)
        }
    }
}
