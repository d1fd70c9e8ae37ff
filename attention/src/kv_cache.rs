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
#[derive(Debug)]
pub struct KvCache {
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
        self.capacity
    }

    /// Forgets every stored token (the next append may use a new batch size or head
    /// layout). The allocation is kept: a next sequence of the same layout fits in the
    /// same [`capacity`](KvCache::capacity) without growing.
    pub fn reset(&mut self) {
        self.len = 0;
        self.layout = None;
    }

    /// Appends `T` tokens: `keys: [B, H, T, dk]`, `values: [B, H, T, dv]`.
    #[track_caller]
    pub fn append(&mut self, keys: &Tensor, values: &Tensor) {
        assert!(
            keys.rank() == 4 && values.rank() == 4 && keys.shape()[..3] == values.shape()[..3],
            "KvCache::append: keys and values must be [B, H, T, d] with the same B, H and T, found {:?} and {:?}",
            keys.shape(),
            values.shape()
        );
        let recording =
            engine::grad_mode::is_enabled() && (keys.requires_grad() || values.requires_grad());
        assert!(
            !recording,
            "KvCache::append: the keys or values require a gradient, but the cache stores plain values, so that gradient would be lost\n  hint: decoding is inference: run it inside engine::no_grad(|| ...)"
        );
        let (b, h, t) = (keys.shape()[0], keys.shape()[1], keys.shape()[2]);
        let layout = [b, h, keys.shape()[3], values.shape()[3]];
        match self.layout {
            None => {
                // After a reset the allocation is reused: it holds this many tokens of the
                // new layout (and nothing stored needs to move, since len is 0).
                let [_, _, dk, dv] = layout;
                let fits =
                    |buffer: &[f32], d: usize| buffer.len().checked_div(b * h * d).unwrap_or(0);
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

    /// The stored keys, `[B, H, len, dk]`.
    #[track_caller]
    pub fn keys(&self) -> Tensor {
        self.read(&self.keys, 2)
    }

    /// The stored values, `[B, H, len, dv]`.
    #[track_caller]
    pub fn values(&self) -> Tensor {
        self.read(&self.values, 3)
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
        self.keys = relayout(&self.keys, b * h, self.capacity, new_capacity, self.len, dk);
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
