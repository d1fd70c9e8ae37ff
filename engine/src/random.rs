//! Seeded random numbers: the same seed gives the same tensors on every machine.
//!
//! Each thread owns a generator (ChaCha8, whose output is fixed by its specification),
//! seeded with 0 until [`manual_seed`] says otherwise, like `torch.manual_seed`. Functions
//! that take `&mut impl Rng` let a caller use a generator of their own instead.

use std::cell::RefCell;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The generator type the engine uses.
pub type EngineRng = ChaCha8Rng;

thread_local! {
    static RNG: RefCell<EngineRng> = RefCell::new(EngineRng::seed_from_u64(0));
}

/// Reseeds this thread's generator.
pub fn manual_seed(seed: u64) {
    RNG.with(|r| *r.borrow_mut() = EngineRng::seed_from_u64(seed));
}

/// A fresh generator from a seed, for code that wants its own stream.
pub fn rng_from_seed(seed: u64) -> EngineRng {
    EngineRng::seed_from_u64(seed)
}

/// Runs `f` with this thread's generator.
pub(crate) fn with_rng<R>(f: impl FnOnce(&mut EngineRng) -> R) -> R {
    RNG.with(|r| f(&mut r.borrow_mut()))
}
