//! The KV cache's buffers are counted by `engine::memory` like tensors, and checked against
//! the memory budget.

use attention::KvCache;
use engine::{Tensor, memory, no_grad};

#[test]
fn the_cache_buffers_are_counted_in_live_bytes_until_the_cache_is_dropped() {
    let keys = Tensor::ones([2, 2, 5, 4]);
    let values = Tensor::zeros([2, 2, 5, 3]);
    let before = memory::live_bytes();
    let mut cache = KvCache::new(8);
    assert_eq!(
        memory::live_bytes(),
        before,
        "nothing before the first append"
    );
    no_grad(|| cache.append(&keys, &values));
    // Capacity 8 of [B, H] = [2, 2]: 2·2·8·(4 + 3) values of 4 bytes.
    assert_eq!(cache.capacity(), 8);
    assert_eq!(memory::live_bytes() - before, 2 * 2 * 8 * 7 * 4);
    // Growing to 16 tokens doubles it.
    no_grad(|| cache.append(&keys, &values));
    assert_eq!(cache.capacity(), 16);
    assert_eq!(memory::live_bytes() - before, 2 * 2 * 16 * 7 * 4);
    // A reset keeps the memory; a copy holds its own; dropping gives it back.
    cache.reset();
    assert_eq!(memory::live_bytes() - before, 2 * 2 * 16 * 7 * 4);
    let copy = cache.clone();
    assert_eq!(memory::live_bytes() - before, 2 * 2 * 2 * 16 * 7 * 4);
    drop(copy);
    drop(cache);
    assert_eq!(memory::live_bytes(), before);
}

#[test]
fn a_growth_past_the_memory_budget_is_refused_with_the_layout_and_bytes() {
    let keys = Tensor::ones([1, 2, 4, 8]);
    let mut cache = KvCache::new(4);
    no_grad(|| cache.append(&keys, &keys));
    memory::set_budget(Some(memory::live_bytes() + 256));
    let refused = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // 4 more tokens do not fit: growing to 8 needs 2·1·2·4·8 more values.
        no_grad(|| cache.append(&keys, &keys));
    }));
    memory::set_budget(None);
    let payload = refused.expect_err("the budget refuses the growth");
    let message = payload.downcast_ref::<String>().expect("a message");
    assert!(
        message.starts_with(
            "KvCache::append: growing the cache from 4 to 8 tokens of [B, H, dk, dv] = [1, 2, 8, 8] needs 512 bytes (128 values of 4 bytes), but this thread's memory budget is"
        ),
        "{message}"
    );
    assert_eq!(cache.len(), 4, "the refused append changed nothing");
    assert_eq!(cache.capacity(), 4);
}
