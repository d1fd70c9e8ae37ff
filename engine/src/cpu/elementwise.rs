//! Elementwise kernels: one input (map), two inputs with broadcasting, and `where`.
//!
//! Broadcasting kernels walk the output a row at a time ([`BroadcastRows`]): along a row
//! each operand is either a contiguous slice or one repeated value, so the inner loop is a
//! plain iteration over slices that the compiler can vectorise, and the index arithmetic
//! happens once per row instead of once per element.
//!
//! `map` and `zip_broadcast` take the function as a generic closure, so each function gets
//! its own copy of the loop with the function's formula inside it (the caller chooses the
//! function once, outside the loop, see `ops/unary.rs`). Each loop is compiled three times:
//! for AVX-512 (16 lanes), for AVX2 with FMA (8 lanes) and plain; the path that
//! [`kernels::active`](crate::kernels::active) names on the calling thread runs. The three
//! copies do the same operations in the same order on each element, so they give the same
//! bits (see `math.rs`).
//!
//! Both fill their output in blocks that large tensors share out between threads
//! (`parallel::for_each_block`); each element depends on its index alone. The path is read
//! on the calling thread, before the split, and carried into every block: it is set per
//! thread ([`kernels::with_path`](crate::kernels::with_path)), so a worker thread could not
//! read it for itself.

use super::BroadcastRows;
use super::parallel::for_each_block;
use crate::kernels::{self, KernelPath};
use crate::spare;

/// Compiles `$body` (an expression using the generic parameters of `$name`) for each kernel
/// path: `$name` dispatches on a [`KernelPath`], `$avx512` and `$avx2` are the copies
/// compiled with those CPU features, `$portable` the plain one.
macro_rules! on_every_path {
    (
        fn $name:ident / $avx512:ident / $avx2:ident / $portable:ident
        <$($g:ident: $bound:path),*>($($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        #[inline(always)]
        fn $portable<$($g: $bound),*>($($arg: $ty),*) $body

        /// # Safety
        /// The CPU must support AVX-512F.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f")]
        unsafe fn $avx512<$($g: $bound),*>($($arg: $ty),*) {
            $portable($($arg),*)
        }

        /// # Safety
        /// The CPU must support AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx2<$($g: $bound),*>($($arg: $ty),*) {
            $portable($($arg),*)
        }

        #[inline(always)]
        fn $name<$($g: $bound),*>(path: KernelPath, $($arg: $ty),*) {
            match path {
                // SAFETY: `kernels::active` names only paths this CPU supports.
                #[cfg(target_arch = "x86_64")]
                KernelPath::Avx512 => unsafe { $avx512($($arg),*) },
                // SAFETY: as above.
                #[cfg(target_arch = "x86_64")]
                KernelPath::Avx2 => unsafe { $avx2($($arg),*) },
                _ => $portable($($arg),*),
            }
        }
    };
}

/// Applies `f` to every element.
pub(crate) fn map<F>(a: &[f32], f: F) -> Vec<f32>
where
    F: Fn(f32) -> f32 + Sync + Copy,
{
    let path = kernels::active();
    let mut out = spare::for_overwrite(a.len());
    for_each_block(&mut out, 1, |start, block| {
        map_block(path, &a[start..start + block.len()], block, f);
    });
    out
}

on_every_path! {
    fn map_block / map_block_avx512 / map_block_avx2 / map_block_portable
    <F: Fn(f32) -> f32>(src: &[f32], dst: &mut [f32], f: F) {
        for (d, &x) in dst.iter_mut().zip(src) {
            *d = f(x);
        }
    }
}

/// One row of an operand: `len` values from `start`, or the value at `start` repeated.
#[inline(always)]
fn row(data: &[f32], start: usize, step: usize, len: usize) -> Row<'_> {
    if step == 1 {
        Row::Slice(&data[start..start + len])
    } else {
        Row::Repeat(data[start])
    }
}

enum Row<'a> {
    Slice(&'a [f32]),
    Repeat(f32),
}

/// Applies `f` to paired elements of `a` and `b`, each broadcast to `out`.
pub(crate) fn zip_broadcast<F>(
    a: &[f32],
    a_shape: &[usize],
    b: &[f32],
    b_shape: &[usize],
    out: &[usize],
    f: F,
) -> Vec<f32>
where
    F: Fn(f32, f32) -> f32 + Sync + Copy,
{
    let path = kernels::active();
    let rows = BroadcastRows::new(&[a_shape, b_shape], out);
    let mut result = spare::for_overwrite(out.iter().product());
    if result.is_empty() {
        return result;
    }
    let starts: Vec<(usize, usize)> = rows.starts(0).zip(rows.starts(1)).collect();
    let operands = Operands {
        a,
        b,
        starts: &starts,
        inner: rows.inner,
        steps: (rows.inner_steps[0], rows.inner_steps[1]),
    };
    for_each_block(&mut result, 1, |start, block| {
        zip_block(path, &operands, start, block, f);
    });
    result
}

/// The two operands of [`zip_broadcast`] and where each output row starts in them.
struct Operands<'a> {
    a: &'a [f32],
    b: &'a [f32],
    /// For each output row, the index of its first element in `a` and in `b`.
    starts: &'a [(usize, usize)],
    /// The length of an output row.
    inner: usize,
    /// How far `a` and `b` move along a row: 1, or 0 where the operand is repeated.
    steps: (usize, usize),
}

on_every_path! {
    fn zip_block / zip_block_avx512 / zip_block_avx2 / zip_block_portable
    <F: Fn(f32, f32) -> f32>(operands: &Operands<'_>, start: usize, block: &mut [f32], f: F) {
        let Operands { a, b, starts, inner: n, steps: (sa, sb) } = *operands;
        // A block may begin or end inside a row: along a row each operand moves by its
        // step, so the stretch from position p starts at the row's start + step · p.
        let mut done = 0;
        while done < block.len() {
            let (r, p) = ((start + done) / n, (start + done) % n);
            let len = (n - p).min(block.len() - done);
            let (ia, ib) = starts[r];
            let dst = &mut block[done..done + len];
            match (row(a, ia + sa * p, sa, len), row(b, ib + sb * p, sb, len)) {
                (Row::Slice(x), Row::Slice(y)) => {
                    for ((d, &x), &y) in dst.iter_mut().zip(x).zip(y) {
                        *d = f(x, y);
                    }
                }
                (Row::Slice(x), Row::Repeat(y)) => {
                    for (d, &x) in dst.iter_mut().zip(x) {
                        *d = f(x, y);
                    }
                }
                (Row::Repeat(x), Row::Slice(y)) => {
                    for (d, &y) in dst.iter_mut().zip(y) {
                        *d = f(x, y);
                    }
                }
                (Row::Repeat(x), Row::Repeat(y)) => dst.fill(f(x, y)),
            }
            done += len;
        }
    }
}

/// `cond != 0 ? a : b`, each of the three broadcast to `out`.
pub(crate) fn select(
    cond: (&[f32], &[usize]),
    a: (&[f32], &[usize]),
    b: (&[f32], &[usize]),
    out: &[usize],
) -> Vec<f32> {
    let rows = BroadcastRows::new(&[cond.1, a.1, b.1], out);
    let n = rows.inner;
    let [sc, sa, sb] = [0, 1, 2].map(|i| rows.inner_steps[i]);
    let mut result = spare::with_capacity(out.iter().product());
    for ((ic, ia), ib) in rows.starts(0).zip(rows.starts(1)).zip(rows.starts(2)) {
        for k in 0..n {
            let pick = cond.0[ic + sc * k] != 0.0;
            result.push(if pick {
                a.0[ia + sa * k]
            } else {
                b.0[ib + sb * k]
            });
        }
    }
    result
}

/// Copies `a` broadcast to `out` (the forward of `expand`).
pub(crate) fn broadcast_to(a: &[f32], a_shape: &[usize], out: &[usize]) -> Vec<f32> {
    let rows = BroadcastRows::new(&[a_shape], out);
    let (n, step) = (rows.inner, rows.inner_steps[0]);
    let mut result = spare::with_capacity(out.iter().product());
    for start in rows.starts(0) {
        match row(a, start, step, n) {
            Row::Slice(x) => result.extend_from_slice(x),
            Row::Repeat(x) => result.extend(std::iter::repeat_n(x, n)),
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::seeded_values;
    use crate::threads::PARALLEL_MIN;

    #[test]
    fn zip_broadcast_gives_the_same_bits_on_every_path_and_broadcasts() {
        // Attention's pairings (every query against every key), a row broadcast, a scalar,
        // and one output large enough to be split between threads.
        let cases: [(&[usize], &[usize], &[usize]); 5] = [
            (&[4, 3, 1, 19], &[4, 1, 5, 19], &[4, 3, 5, 19]),
            (&[6, 33], &[33], &[6, 33]),
            (&[1], &[2, 17], &[2, 17]),
            (&[7, 1], &[1, 9], &[7, 9]),
            (&[1 << 10, 1, 64], &[1, 17, 64], &[1 << 10, 17, 64]),
        ];
        assert!(cases[4].2.iter().product::<usize>() >= PARALLEL_MIN);
        for (a_shape, b_shape, out) in cases {
            let a = seeded_values(a_shape.iter().product(), 1);
            let b: Vec<f32> = seeded_values(b_shape.iter().product(), 2)
                .into_iter()
                .map(|x| x + 1.5)
                .collect();
            let run = |path| {
                kernels::with_path(path, || {
                    let sum =
                        zip_broadcast(&a, a_shape, &b, b_shape, out, |x, y| x + y);
                    let quotient =
                        zip_broadcast(&a, a_shape, &b, b_shape, out, |x, y| x / y);
                    (sum, quotient)
                })
            };
            let (sum, quotient) = run(KernelPath::Portable);
            // The definition, one element at a time through the row-major index.
            let index = |shape: &[usize], flat: usize| {
                let mut rest = flat;
                let mut at = 0;
                let mut stride = 1;
                for d in (0..out.len()).rev() {
                    let i = rest % out[d];
                    rest /= out[d];
                    if d + shape.len() >= out.len() {
                        let k = d + shape.len() - out.len();
                        if shape[k] != 1 {
                            at += i * stride;
                        }
                        stride *= shape[k];
                    }
                }
                at
            };
            for i in 0..sum.len() {
                let (x, y) = (a[index(a_shape, i)], b[index(b_shape, i)]);
                assert_eq!(sum[i].to_bits(), (x + y).to_bits(), "{out:?} at {i}");
                assert_eq!(
                    quotient[i].to_bits(),
                    (x / y).to_bits(),
                    "{out:?} at {i}"
                );
            }
            for path in KernelPath::supported() {
                let (s, q) = run(path);
                let same = |u: &[f32], v: &[f32]| {
                    u.iter().zip(v).all(|(p, q)| p.to_bits() == q.to_bits())
                };
                assert!(same(&s, &sum) && same(&q, &quotient), "{path}: {out:?}");
            }
        }
    }
}
