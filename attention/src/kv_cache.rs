//! A key/value cache for incremental decoding.

use engine::Tensor;
use engine::memory::Reservation;

/// The keys and values of the tokens seen so far, per batch element and head, so that
/// decoding token `t` attends to tokens `0..=t` without recomputing their projections.
///
/// The cache owns one buffer for keys and one for values, laid out
/// `[B · H, capacity, d]`. [`append`](KvCache::append) writes new tokens after the current
/// ones; when they do not fit, the capacity at least doubles (amortised O(1) per token),
/// moving what is stored. [`reset`](KvCache::reset) forgets the sequence but keeps the
/// memory for the next one.
///
/// The buffers are counted like tensors: in [`engine::memory::live_bytes`], in the peak,
/// and against [`engine::memory::set_budget`], which a growth that does not fit is refused
/// by, with a message naming the cache's layout and the bytes.
///
/// The cache stores values, not graph nodes: gradients do not flow through it. It is for
/// inference: [`append`](KvCache::append) refuses keys or values that require a gradient
/// while gradients are being recorded (run decoding under [`engine::no_grad`]).
///
/// | method | shape |
/// |---|---|
/// | [`append`](KvCache::append) `keys` | `[B, H, T, dk]` |
/// | [`append`](KvCache::append) `values` | `[B, H, T, dv]` |
/// | [`keys`](KvCache::keys) | `[B, H, len, dk]` |
/// | [`values`](KvCache::values) | `[B, H, len, dv]` |
///
/// ```
/// use attention::KvCache;
/// use engine::Tensor;
///
/// let mut cache = KvCache::new(2);
/// cache.append(&Tensor::ones(&[1, 2, 3, 4]), &Tensor::zeros(&[1, 2, 3, 4]));
/// assert_eq!(cache.len(), 3);
/// assert!(cache.capacity() >= 3); // grew past the initial 2
/// assert_eq!(cache.keys().shape(), &[1, 2, 3, 4]);
/// cache.reset();
/// assert!(cache.is_empty());
/// ```
///
/// On a GPU (keys and values that live there), the cache keeps them there as two tensors,
/// `[B, H, len, d]`, joined with `concat` at every append (a copy of the cache on the GPU,
/// O(len) per token), and reads them with the GPU's matrix products: nothing is read back
/// to the host. Its capacity is then its length, and its memory is the GPU's, not counted
/// in `engine::memory`.
#[derive(Debug)]
pub struct KvCache {
    /// The stored keys and values when they live on a GPU (see above).
    on_device: Option<(Tensor, Tensor)>,
    keys: Vec<f32>,
    values: Vec<f32>,
    /// The two buffers' memory, as `engine::memory` counts it.
    counted: Reservation,
    /// `[B, H, dk, dv]`, fixed by the first append after a reset.
    layout: Option<[usize; 4]>,
    len: usize,
    capacity: usize,
    initial_capacity: usize,
}

impl KvCache {
    /// An empty cache with room for `initial_capacity` tokens before it first grows. Nothing
    /// is allocated until the first [`append`](KvCache::append), which reserves that many
    /// tokens (or more if it brings more).
    pub fn new(initial_capacity: usize) -> Self {
        KvCache {
            on_device: None,
            keys: Vec::new(),
            values: Vec::new(),
            counted: Reservation::new(),
            layout: None,
            len: 0,
            capacity: 0,
            initial_capacity,
        }
    }

    /// The number of tokens stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no token is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many tokens fit before the buffers grow again.
    pub fn capacity(&self) -> usize {
        if self.on_device.is_some() {
            return self.len;
        }
        self.capacity
    }

    /// Forgets every stored token (the next append may use a new batch size or head
    /// layout). The allocation is kept: a next sequence of the same layout fits in the
    /// same [`capacity`](KvCache::capacity) without growing.
    pub fn reset(&mut self) {
        self.len = 0;
        self.layout = None;
        self.on_device = None;
    }

    /// Appends `T` tokens: `keys: [B, H, T, dk]`, `values: [B, H, T, dv]`.
    #[track_caller]
    pub fn append(&mut self, keys: &Tensor, values: &Tensor) {
        assert!(
            keys.rank() == 4
                && values.rank() == 4
                && keys.shape()[..3] == values.shape()[..3],
            "KvCache::append: keys and values must be [B, H, T, d] with the same B, H and T, found {:?} and {:?}",
            keys.shape(),
            values.shape()
        );
        let recording = engine::grad_mode::is_enabled()
            && (keys.requires_grad() || values.requires_grad());
        assert!(
            !recording,
            "KvCache::append: the keys or values require a gradient, but the cache stores plain values, so that gradient would be lost\n  hint: decoding is inference: run it inside engine::no_grad(|| ...)"
        );
        let (b, h, t) = (keys.shape()[0], keys.shape()[1], keys.shape()[2]);
        let layout = [b, h, keys.shape()[3], values.shape()[3]];
        if keys.device().is_gpu() || self.on_device.is_some() {
            self.append_on_device(keys, values, layout);
            return;
        }
        match self.layout {
            None => {
                // After a reset the allocation is reused: it holds this many tokens of the
                // new layout (and nothing stored needs to move, since len is 0).
                let [_, _, dk, dv] = layout;
                let fits = |buffer: &[f32], d: usize| {
                    buffer.len().checked_div(b * h * d).unwrap_or(0)
                };
                self.layout = Some(layout);
                self.capacity = fits(&self.keys, dk).min(fits(&self.values, dv));
            }
            Some(expected) => assert!(
                expected == layout,
                "KvCache::append: the cache holds [B, H, dk, dv] = {expected:?} but the new tokens have {layout:?}; hint: reset() the cache between sequences"
            ),
        }
        if self.len + t > self.capacity {
            self.grow(
                (self.len + t)
                    .max(self.capacity.saturating_mul(2))
                    .max(self.initial_capacity),
            );
        }
        let [_, _, dk, dv] = layout;
        write_rows(
            &mut self.keys,
            &keys.to_vec(),
            b * h,
            self.capacity,
            self.len,
            t,
            dk,
        );
        write_rows(
            &mut self.values,
            &values.to_vec(),
            b * h,
            self.capacity,
            self.len,
            t,
            dv,
        );
        self.len += t;
    }

    /// [`append`](KvCache::append) for keys and values on a GPU.
    #[track_caller]
    fn append_on_device(
        &mut self,
        keys: &Tensor,
        values: &Tensor,
        layout: [usize; 4],
    ) {
        assert!(
            self.on_device.is_some() || self.len == 0,
            "KvCache::append: the cache holds {} tokens in host memory, and these keys live on {}\n  hint: reset() the cache between sequences, or move the keys and values to the device of the ones before",
            self.len,
            keys.device()
        );
        match self.layout {
            None => self.layout = Some(layout),
            Some(expected) => assert!(
                expected == layout,
                "KvCache::append: the cache holds [B, H, dk, dv] = {expected:?} but the new tokens have {layout:?}; hint: reset() the cache between sequences"
            ),
        }
        let device = keys.device();
        let values = values.to(&device);
        self.on_device = Some(match self.on_device.take() {
            None => (keys.detach(), values.detach()),
            Some((k, v)) => (
                Tensor::concat(&[&k, &keys.to(&k.device())], 2),
                Tensor::concat(&[&v, &values.to(&v.device())], 2),
            ),
        });
        self.len += keys.shape()[2];
    }

    /// The stored keys, `[B, H, len, dk]`: a copy, made on every call, for looking at what
    /// the cache holds. A decoding step does not make it: [`CausalSelfAttention::step`]
    /// reads the stored keys where they are.
    ///
    /// [`CausalSelfAttention::step`]: crate::CausalSelfAttention::step
    #[track_caller]
    pub fn keys(&self) -> Tensor {
        if let Some((keys, _)) = &self.on_device {
            return keys.clone();
        }
        self.read(&self.keys, 2)
    }

    /// The stored values, `[B, H, len, dv]`: a copy, made on every call, like
    /// [`keys`](KvCache::keys).
    #[track_caller]
    pub fn values(&self) -> Tensor {
        if let Some((_, values)) = &self.on_device {
            return values.clone();
        }
        self.read(&self.values, 3)
    }

    /// The attention scores of `queries: [B, H, T, dk]` against the stored keys,
    /// `queries · keysᵀ`: `[B, H, T, len]`. The keys are read where they are stored, so a
    /// decoding step does not copy the whole cache (as [`keys`](KvCache::keys) does) to
    /// compute them. The numbers are those of `queries.matmul_t(&cache.keys())` up to the
    /// order in which each dot product adds its terms.
    #[track_caller]
    pub(crate) fn scores(&self, queries: &Tensor) -> Tensor {
        let [b, h, dk, _] = self.layout_for("scores");
        let t = queries.size(2);
        assert!(
            queries.shape() == [b, h, t, dk],
            "KvCache::scores: the queries must be [B, H, T, dk] = [{b}, {h}, T, {dk}] like the stored keys, found {:?}",
            queries.shape()
        );
        if let Some((keys, _)) = &self.on_device {
            return queries.matmul_t(keys);
        }
        let queries = queries.to_vec();
        let mut out = Vec::with_capacity(b * h * t * self.len);
        for (block, rows) in queries.chunks_exact((t * dk).max(1)).enumerate() {
            let start = block * self.capacity * dk;
            let keys = &self.keys[start..start + self.len * dk];
            for query in rows.chunks_exact(dk.max(1)) {
                out.extend(keys.chunks_exact(dk.max(1)).map(|key| dot(query, key)));
            }
        }
        out.resize(b * h * t * self.len, 0.0); // dk = 0: every score is an empty sum
        Tensor::from_vec(out, [b, h, t, self.len])
    }

    /// The attention output of `weights: [B, H, T, len]` over the stored values,
    /// `weights · values`: `[B, H, T, dv]`, reading the values where they are stored. The
    /// numbers are those of `weights.matmul(&cache.values())` up to the order in which
    /// each output adds its terms.
    #[track_caller]
    pub(crate) fn weighted_values(&self, weights: &Tensor) -> Tensor {
        let [b, h, _, dv] = self.layout_for("weighted_values");
        let t = weights.size(2);
        assert!(
            weights.shape() == [b, h, t, self.len],
            "KvCache::weighted_values: the weights must be [B, H, T, len] = [{b}, {h}, T, {}], one per stored token, found {:?}",
            self.len,
            weights.shape()
        );
        if let Some((_, values)) = &self.on_device {
            return weights.matmul(values);
        }
        let weights = weights.to_vec();
        let mut out = vec![0.0; b * h * t * dv];
        if dv > 0 && self.len > 0 {
            let rows = weights.chunks_exact(self.len).zip(out.chunks_exact_mut(dv));
            for (row, (weights, out)) in rows.enumerate() {
                let start = row / t * self.capacity * dv;
                weighted_sum(
                    weights,
                    &self.values[start..start + self.len * dv],
                    out,
                );
            }
        }
        Tensor::from_vec(out, [b, h, t, dv])
    }

    /// `[B, H, dk, dv]`, or a panic naming `call` when nothing is stored.
    #[track_caller]
    fn layout_for(&self, call: &str) -> [usize; 4] {
        self.layout.unwrap_or_else(|| {
            panic!("KvCache::{call}: the cache is empty; append tokens first")
        })
    }

    #[track_caller]
    fn read(&self, buffer: &[f32], dim_index: usize) -> Tensor {
        let layout = self
            .layout
            .expect("KvCache: the cache is empty; append tokens first");
        let (rows, d) = (layout[0] * layout[1], layout[dim_index]);
        let mut out = Vec::with_capacity(rows * self.len * d);
        for r in 0..rows {
            let start = r * self.capacity * d;
            out.extend_from_slice(&buffer[start..start + self.len * d]);
        }
        Tensor::from_vec(out, [layout[0], layout[1], self.len, d])
    }

    #[track_caller]
    fn grow(&mut self, new_capacity: usize) {
        let [b, h, dk, dv] = self.layout.expect("layout is set before growing");
        // Check the sizes before allocating: an absurd capacity (`KvCache::new(usize::MAX)`)
        // must be a message, not an overflow or an abort inside the allocator.
        let elements = |d: usize| {
            b.checked_mul(h)
                .and_then(|n| n.checked_mul(new_capacity))
                .and_then(|n| n.checked_mul(d))
                .filter(|&n| n <= isize::MAX as usize / size_of::<f32>())
        };
        let sizes = elements(dk).zip(elements(dv));
        let fits = sizes.is_some_and(|(nk, nv)| {
            Vec::<f32>::new().try_reserve_exact(nk).is_ok()
                && Vec::<f32>::new().try_reserve_exact(nv).is_ok()
        });
        assert!(
            fits,
            "KvCache::append: growing to {new_capacity} tokens of [B, H, dk, dv] = {:?} needs {}, more than this machine can allocate\n  hint: KvCache::new(initial_capacity) reserves initial_capacity tokens at the first append; ask for what a sequence needs",
            [b, h, dk, dv],
            match sizes {
                Some((nk, nv)) => engine::memory::human((nk + nv) * size_of::<f32>()),
                None => "more bytes than a usize can count".to_string(),
            }
        );
        let (nk, nv) = sizes.expect("checked above");
        let old_capacity = self.capacity;
        self.counted.resize("KvCache::append", nk + nv, || {
            format!(
                "growing the cache from {old_capacity} to {new_capacity} tokens of [B, H, dk, dv] = {:?}",
                [b, h, dk, dv]
            )
        });
        self.keys =
            relayout(&self.keys, b * h, self.capacity, new_capacity, self.len, dk);
        self.values = relayout(
            &self.values,
            b * h,
            self.capacity,
            new_capacity,
            self.len,
            dv,
        );
        self.capacity = new_capacity;
    }
}

/// A copy holds buffers of its own, counted (and checked against the budget) as the
/// original's are.
impl Clone for KvCache {
    #[track_caller]
    fn clone(&self) -> Self {
        let mut counted = Reservation::new();
        counted.resize("KvCache::clone", self.counted.values(), || {
            format!("a copy of a cache of {} tokens", self.capacity)
        });
        KvCache {
            on_device: self.on_device.clone(),
            keys: self.keys.clone(),
            values: self.values.clone(),
            counted,
            layout: self.layout,
            len: self.len,
            capacity: self.capacity,
            initial_capacity: self.initial_capacity,
        }
    }
}

/// `Σ a[i]·b[i]` over eight running sums, which the compiler keeps in vector registers
/// (a single sum would make every addition wait for the one before it).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (a8, a_rest) = a.as_chunks::<8>();
    let (b8, b_rest) = b.as_chunks::<8>();
    let mut sums = [0.0f32; 8];
    for (x, y) in a8.iter().zip(b8) {
        for lane in 0..8 {
            sums[lane] += x[lane] * y[lane];
        }
    }
    let [s0, s1, s2, s3, s4, s5, s6, s7] = sums;
    let mut total = ((s0 + s4) + (s1 + s5)) + ((s2 + s6) + (s3 + s7));
    for (x, y) in a_rest.iter().zip(b_rest) {
        total += x * y;
    }
    total
}

/// `out[c] = Σ_j weights[j] · rows[j][c]`, for `rows` the `weights.len()` rows of
/// `out.len()` values each, laid end to end: one pass over the rows for each block of 32,
/// 16 or 8 columns, then the last few columns.
fn weighted_sum(weights: &[f32], rows: &[f32], out: &mut [f32]) {
    let d = out.len();
    let mut c = 0;
    while c < d {
        c += match d - c {
            32.. => weighted_columns::<32, 1>(weights, rows, d, c, out),
            16.. => weighted_columns::<16, 2>(weights, rows, d, c, out),
            8.. => weighted_columns::<8, 4>(weights, rows, d, c, out),
            _ => weighted_columns::<1, 4>(weights, rows, d, c, out),
        };
    }
}

/// [`weighted_sum`] for columns `c..c + W` (returns `W`). The running sums of a fixed
/// number of columns stay in vector registers; `S` sets of them over alternate rows keep
/// `S` additions in flight instead of each waiting for the one before.
fn weighted_columns<const W: usize, const S: usize>(
    weights: &[f32],
    rows: &[f32],
    d: usize,
    c: usize,
    out: &mut [f32],
) -> usize {
    let row = |j: usize| -> &[f32; W] {
        rows[j * d + c..j * d + c + W]
            .try_into()
            .expect("W columns")
    };
    let mut sums = [[0.0f32; W]; S];
    let (groups, rest) = weights.as_chunks::<S>();
    for (g, ws) in groups.iter().enumerate() {
        for (r, (&w, sum)) in ws.iter().zip(&mut sums).enumerate() {
            let values = row(g * S + r);
            for lane in 0..W {
                sum[lane] += w * values[lane];
            }
        }
    }
    for (i, &w) in rest.iter().enumerate() {
        let values = row(groups.len() * S + i);
        for lane in 0..W {
            sums[0][lane] += w * values[lane];
        }
    }
    for lane in 0..W {
        out[c + lane] = sums.iter().map(|sum| sum[lane]).sum();
    }
    W
}

/// Copies the first `len` rows of every `[old_cap, d]` block into `[new_cap, d]` blocks.
fn relayout(
    buffer: &[f32],
    blocks: usize,
    old_cap: usize,
    new_cap: usize,
    len: usize,
    d: usize,
) -> Vec<f32> {
    let mut out = vec![0.0; blocks * new_cap * d];
    for blk in 0..blocks {
        let (from, to) = (blk * old_cap * d, blk * new_cap * d);
        out[to..to + len * d].copy_from_slice(&buffer[from..from + len * d]);
    }
    out
}

/// Writes `t` new rows (`[blocks, t, d]` in `src`) after row `len` of each block.
fn write_rows(
    buffer: &mut [f32],
    src: &[f32],
    blocks: usize,
    cap: usize,
    len: usize,
    t: usize,
    d: usize,
) {
    for blk in 0..blocks {
        let to = (blk * cap + len) * d;
        buffer[to..to + t * d].copy_from_slice(&src[blk * t * d..(blk + 1) * t * d]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Small whole numbers: every product and every partial sum of them is exact in `f32`,
    /// so any order of the additions gives the same bits.
    fn small_integers(shape: [usize; 4], seed: usize) -> Tensor {
        let n = shape.iter().product::<usize>();
        let values = (0..n).map(|i| ((i * 7 + seed * 13) % 9) as f32 - 4.0);
        Tensor::from_vec(values.collect(), shape)
    }

    /// A cache of `[B, H] = [2, 3]`, `dk = 13`, `dv = 59` (32 + 16 + 8 + 3 columns), that
    /// grew (so rows past `len` lie between the blocks) and was reset and refilled (so those
    /// rows hold an earlier sequence's numbers), holding `len` tokens.
    fn used_cache(len: usize) -> KvCache {
        let mut cache = KvCache::new(2);
        for seed in 0..3 {
            cache.append(
                &small_integers([2, 3, 4, 13], seed),
                &small_integers([2, 3, 4, 59], seed + 5),
            );
        }
        cache.reset();
        for seed in 0..len {
            cache.append(
                &small_integers([2, 3, 1, 13], seed + 20),
                &small_integers([2, 3, 1, 59], seed + 40),
            );
        }
        assert_eq!((cache.len(), cache.capacity()), (len, 16));
        cache
    }

    #[test]
    fn scores_read_in_place_equal_the_product_with_the_copied_keys_bit_for_bit() {
        for len in [1, 5, 9] {
            let cache = used_cache(len);
            for t in [1, 3] {
                let queries = small_integers([2, 3, t, 13], t);
                let scores = cache.scores(&queries);
                assert_eq!(scores.shape(), &[2, 3, t, len]);
                assert_eq!(
                    scores.to_vec(),
                    queries.matmul_t(&cache.keys()).to_vec(),
                    "len {len}, {t} queries"
                );
            }
        }
    }

    #[test]
    fn values_weighted_in_place_equal_the_product_with_the_copied_values_bit_for_bit()
    {
        // 9 stored tokens: two groups of four and one left over.
        for len in [1, 4, 9] {
            let cache = used_cache(len);
            for t in [1, 2] {
                let weights = small_integers([2, 3, t, len], len + t);
                let out = cache.weighted_values(&weights);
                assert_eq!(out.shape(), &[2, 3, t, 59]);
                assert_eq!(
                    out.to_vec(),
                    weights.matmul(&cache.values()).to_vec(),
                    "len {len}, {t} queries"
                );
            }
        }
    }

    /// `weighted_sum` written out: each column summed over the rows in `S` interleaved
    /// running sums (row `j` into sum `j % S`, a last incomplete group into sum 0), added
    /// in order at the end, with `S` = 1, 2, 4 for the blocks of 32, 16, 8 columns taken
    /// from the left, and 4 for each column after them.
    fn weighted_sum_by_definition(
        weights: &[f32],
        rows: &[f32],
        d: usize,
    ) -> Vec<f32> {
        let mut sets = Vec::new();
        while sets.len() < d {
            let (width, s) = match d - sets.len() {
                32.. => (32, 1),
                16.. => (16, 2),
                8.. => (8, 4),
                _ => (1, 4),
            };
            sets.extend(std::iter::repeat_n(s, width));
        }
        (0..d)
            .map(|c| {
                let s = sets[c];
                let whole = weights.len() - weights.len() % s;
                let mut sums = vec![0.0f32; s];
                for (j, &w) in weights.iter().enumerate() {
                    let set = if j < whole { j % s } else { 0 };
                    sums[set] += w * rows[j * d + c];
                }
                sums.iter().sum()
            })
            .collect()
    }

    #[test]
    fn weighted_sums_add_in_the_order_their_definition_states() {
        // 59 columns: blocks of 32, 16 and 8, then 3 single columns; 9 rows: groups of 1,
        // 2 and 4 with a remainder.
        let (d, len) = (59, 9);
        engine::manual_seed(11);
        let weights = Tensor::randn([len]).to_vec();
        let rows = Tensor::randn([len * d]).to_vec();
        let mut out = vec![f32::NAN; d];
        weighted_sum(&weights, &rows, &mut out);
        let want = weighted_sum_by_definition(&weights, &rows, d);
        let first = out
            .iter()
            .zip(&want)
            .position(|(a, b)| a.to_bits() != b.to_bits());
        assert_eq!(first, None, "{out:?}\n{want:?}");
    }

    #[test]
    fn empty_keys_or_values_give_empty_sums_and_empty_rows() {
        // Keys of size 0: every score is an empty sum, 0. Values of size 0: every output
        // row is empty. Neither may split a buffer into chunks of 0.
        let mut cache = KvCache::new(4);
        cache.append(&Tensor::ones([1, 2, 3, 0]), &Tensor::ones([1, 2, 3, 0]));
        let scores = cache.scores(&Tensor::ones([1, 2, 2, 0]));
        assert_eq!(scores.shape(), &[1, 2, 2, 3]);
        assert!(scores.to_vec().iter().all(|&s| s == 0.0));
        let out = cache.weighted_values(&Tensor::ones([1, 2, 2, 3]));
        assert_eq!(out.shape(), &[1, 2, 2, 0]);
        // No token stored yet (an append of none sets the layout): every output is an
        // empty sum, 0.
        let mut none = KvCache::new(4);
        none.append(&Tensor::ones([1, 2, 0, 3]), &Tensor::ones([1, 2, 0, 5]));
        let out = none.weighted_values(&Tensor::ones([1, 2, 2, 0]));
        assert_eq!(out.to_vec(), vec![0.0; 20]);
    }

    #[test]
    fn random_values_read_in_place_agree_with_the_copies_to_rounding() {
        engine::manual_seed(3);
        let mut cache = KvCache::new(3);
        for _ in 0..7 {
            // 60 features of values: the blocks of 32, 16 and 8 columns, and 4 more.
            cache
                .append(&Tensor::randn([1, 2, 5, 24]), &Tensor::randn([1, 2, 5, 60]));
        }
        let queries = Tensor::randn([1, 2, 1, 24]);
        let weights = Tensor::randn([1, 2, 3, 35]).softmax(-1);
        let far = |a: Tensor, b: Tensor| {
            a.to_vec()
                .iter()
                .zip(b.to_vec())
                .fold(0f32, |m, (x, y)| m.max((x - y).abs()))
        };
        let scores = far(cache.scores(&queries), queries.matmul_t(&cache.keys()));
        assert!(scores < 1e-5, "scores differ by {scores}");
        let out = far(
            cache.weighted_values(&weights),
            weights.matmul(&cache.values()),
        );
        assert!(out < 1e-6, "outputs differ by {out}");
    }

    #[test]
    #[should_panic(
        expected = "KvCache::scores: the queries must be [B, H, T, dk] = [2, 3, T, 13] like the stored keys, found [2, 3, 1, 11]"
    )]
    fn queries_of_another_layout_are_refused() {
        used_cache(2).scores(&Tensor::zeros([2, 3, 1, 11]));
    }

    #[test]
    #[should_panic(
        expected = "KvCache::weighted_values: the weights must be [B, H, T, len] = [2, 3, T, 2], one per stored token, found [2, 3, 1, 3]"
    )]
    fn weights_for_another_number_of_tokens_are_refused() {
        used_cache(2).weighted_values(&Tensor::zeros([2, 3, 1, 3]));
    }

    #[test]
    #[should_panic(
        expected = "KvCache::scores: the cache is empty; append tokens first"
    )]
    fn an_empty_cache_has_no_scores() {
        KvCache::new(4).scores(&Tensor::zeros([1, 1, 1, 4]));
    }
}
