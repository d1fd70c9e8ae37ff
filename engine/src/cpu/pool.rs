//! Worker threads for matrix products that wait for work by spinning a while before they
//! sleep.
//!
//! Starting a thread, or waking one that sleeps, takes tens of microseconds, and on a
//! virtual machine whose idle CPUs the host hands to others it can take far longer: on a
//! 2-core virtual machine, a product of 512 × 512 matrices split between two threads
//! started for it took 3 ms in most runs, more than on one thread (2 ms). So the workers of
//! this pool, once they finish a task, watch for the next one for [`SPIN`] before they
//! sleep, as OpenMP's workers do by default; PyTorch's products keep their threads that way
//! (told to sleep at once, `OMP_WAIT_POLICY=PASSIVE`, its median for the same product rose
//! from 1.1 to 1.5 ms on that machine). A product started within that time reaches them at
//! once. While they watch, they hand the CPU to any other thread that waits for it.
//!
//! One caller uses the pool at a time; a caller that finds it busy (another of the
//! program's threads is multiplying) runs its tasks itself, one after another. Tasks must
//! not depend on which thread runs them: the products' results are the same bits either way.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long an idle worker watches for work before it sleeps.
const SPIN: Duration = Duration::from_millis(5);

/// A task for a worker: it may borrow from the caller of [`run_all`] for `'a`.
pub(crate) type Task<'a> = Box<dyn FnOnce() + Send + 'a>;

/// What a panic carries.
type Payload = Box<dyn Any + Send>;

/// The tasks of one call of [`run_all`], each taken by the thread that runs it.
type Slots<'a> = [Mutex<Option<Task<'a>>>];

/// The slots of the current call, their lifetime erased (see the SAFETY note in `run_all`).
#[derive(Clone, Copy)]
struct SlotsRef(*const Slots<'static>);

// SAFETY: the slots are `Mutex`es of `Send` tasks, so other threads may take them; the
// pointer stays valid while any worker may use it (see `run_all`).
unsafe impl Send for SlotsRef {}

struct Pool {
    /// Held by the one caller that uses the pool.
    in_use: Mutex<()>,
    /// The current call: its number and its tasks. Workers sleep on `wake`.
    current: Mutex<(u64, Option<SlotsRef>)>,
    wake: Condvar,
    /// The number of the current call, watched by spinning workers.
    call: AtomicU64,
    /// Workers that have not yet finished the current call.
    unfinished: AtomicUsize,
    /// What the first task that panicked on a worker during the current call panicked with.
    panic: Mutex<Option<Payload>>,
    /// Worker threads (not counting the caller).
    workers: usize,
}

/// The number of threads a large product may use: `MATMUL_NUM_THREADS` if it is set (read
/// once per process), else one per physical core (hyper-threads share one core's
/// arithmetic units, which a product keeps busy).
pub(crate) fn product_threads() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        threads_from(std::env::var("MATMUL_NUM_THREADS").ok().as_deref())
    })
}

/// The thread count that a value of `MATMUL_NUM_THREADS` asks for: a whole number of at
/// least 1; anything else (or no value) means one per physical core.
fn threads_from(variable: Option<&str>) -> usize {
    variable
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or_else(num_cpus::get_physical)
}

/// Runs every task and returns when all have finished: the first on the calling thread, the
/// next ones on the pool's workers (the pool has [`product_threads`]` - 1` of them, started
/// at the first call), and any beyond those on the calling thread. A panic in a task is
/// raised again here, after every task has finished.
pub(crate) fn run_all(tasks: Vec<Task<'_>>) {
    let pool = pool();
    let guard = match pool.in_use.try_lock() {
        Ok(guard) if tasks.len() > 1 && pool.workers > 0 => guard,
        _ => {
            // Alone: every task on this thread, a panic raised again once all have run.
            let panics = tasks
                .into_iter()
                .filter_map(|task| catch_unwind(AssertUnwindSafe(task)).err());
            if let Some(payload) = panics.fold(None, |first, p| first.or(Some(p))) {
                resume_unwind(payload);
            }
            return;
        }
    };
    let slots: Vec<Mutex<Option<Task>>> =
        tasks.into_iter().map(|t| Mutex::new(Some(t))).collect();
    // SAFETY (of erasing the lifetime): `slots`, and what its tasks borrow, outlive every
    // use of this pointer. Workers use it only between the call's publication below and
    // counting themselves out of `unfinished`, and this function does not return (nor
    // unwind) before that count reaches zero.
    let erased = SlotsRef(&*slots as *const Slots as *const Slots<'static>);
    pool.unfinished.store(pool.workers, Ordering::SeqCst);
    {
        let mut current = pool
            .current
            .lock()
            .expect("the pool's lock is never poisoned");
        current.0 += 1;
        current.1 = Some(erased);
        pool.call.store(current.0, Ordering::SeqCst);
    }
    pool.wake.notify_all();
    // The caller's share: the first task, and those the workers do not take.
    let mine = slots
        .iter()
        .enumerate()
        .filter(|&(i, _)| i == 0 || i > pool.workers)
        .filter_map(|(_, slot)| {
            catch_unwind(AssertUnwindSafe(|| take_and_run(slot))).err()
        })
        .fold(None, |first: Option<Payload>, p| first.or(Some(p)));
    // Every worker counts itself out once it is done with the slots (see the SAFETY note).
    watch(|| pool.unfinished.load(Ordering::SeqCst) == 0, None);
    pool.current
        .lock()
        .expect("the pool's lock is never poisoned")
        .1 = None;
    let worker_panic = pool
        .panic
        .lock()
        .expect("the pool's lock is never poisoned")
        .take();
    drop(guard);
    if let Some(payload) = mine.or(worker_panic) {
        resume_unwind(payload);
    }
}

fn take_and_run(slot: &Mutex<Option<Task>>) {
    let task = slot.lock().expect("a slot's lock is never poisoned").take();
    if let Some(task) = task {
        task();
    }
}

/// Watches for `done` without sleeping: a few checks a short pause apart, then the CPU
/// offered to any other thread that waits for it (the thread being waited for may share
/// this one's CPU), and again. Returns whether `done` held within `limit` (no limit: `None`).
fn watch(done: impl Fn() -> bool, limit: Option<Duration>) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if done() {
                return true;
            }
            std::hint::spin_loop();
        }
        if limit.is_some_and(|limit| start.elapsed() > limit) {
            return false;
        }
        std::thread::yield_now();
    }
}

/// The pool, started at the first call.
fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = product_threads();
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            in_use: Mutex::new(()),
            current: Mutex::new((0, None)),
            wake: Condvar::new(),
            call: AtomicU64::new(0),
            unfinished: AtomicUsize::new(0),
            panic: Mutex::new(None),
            workers: threads.saturating_sub(1),
        }));
        for index in 1..threads {
            std::thread::Builder::new()
                .name(format!("engine-matmul-{index}"))
                .spawn(move || work(pool, index))
                .expect("the operating system starts a thread");
        }
        pool
    })
}

/// A worker's life: wait for a call, run task `index` if there is one, count itself out.
fn work(pool: &'static Pool, index: usize) {
    let mut seen = 0;
    loop {
        let called = || pool.call.load(Ordering::SeqCst) != seen;
        if !watch(called, Some(SPIN)) {
            let mut current = pool
                .current
                .lock()
                .expect("the pool's lock is never poisoned");
            while current.0 == seen {
                current = pool
                    .wake
                    .wait(current)
                    .expect("the pool's lock is never poisoned");
            }
        }
        let (call, slots) = *pool
            .current
            .lock()
            .expect("the pool's lock is never poisoned");
        seen = call;
        let slots = slots.expect("a call publishes its tasks before its number");
        // SAFETY: the caller of `run_all` keeps the slots alive until this worker counts
        // itself out below.
        let slots = unsafe { &*slots.0 };
        if let Some(slot) = slots.get(index)
            && let Err(payload) =
                catch_unwind(AssertUnwindSafe(|| take_and_run(slot)))
        {
            let mut first = pool
                .panic
                .lock()
                .expect("the pool's lock is never poisoned");
            first.get_or_insert(payload);
        }
        pool.unfinished.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_count_is_what_matmul_num_threads_asks_or_one_per_core() {
        let cores = num_cpus::get_physical();
        assert_eq!(threads_from(Some("3")), 3);
        assert_eq!(threads_from(Some(" 2 ")), 2);
        for unusable in [None, Some(""), Some("0"), Some("two"), Some("-1")] {
            assert_eq!(threads_from(unusable), cores, "{unusable:?}");
        }
        // This process's count, read once, follows the same rule.
        let here = std::env::var("MATMUL_NUM_THREADS").ok();
        assert_eq!(product_threads(), threads_from(here.as_deref()));
    }

    #[test]
    fn tasks_run_on_the_workers_when_the_pool_is_free() {
        // The second task runs on a worker whenever no other caller holds the pool; other
        // tests may hold it for a while, so try for up to a few seconds.
        if product_threads() < 2 {
            return; // one core: no workers, every task runs on the caller
        }
        let on_two_threads = (0..1000).any(|_| {
            std::thread::sleep(Duration::from_millis(3));
            let threads = Mutex::new(Vec::new());
            let tasks = (0..2).map(|_| {
                Box::new(|| threads.lock().unwrap().push(std::thread::current().id()))
                    as Task
            });
            run_all(tasks.collect());
            let threads = threads.into_inner().unwrap();
            threads[0] != threads[1]
        });
        assert!(on_two_threads, "every call ran both tasks on one thread");
    }

    #[test]
    fn every_task_runs_once_and_may_borrow_from_the_caller() {
        // More tasks than workers: the caller runs the rest.
        let mut out = vec![0; 7];
        let tasks = out.chunks_mut(1).enumerate();
        run_all(
            tasks
                .map(|(i, one)| Box::new(move || one[0] += i + 1) as Task)
                .collect(),
        );
        assert_eq!(out, [1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn callers_on_several_threads_all_get_their_tasks_run() {
        // While one caller holds the pool, the others run their tasks themselves.
        let done = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..50 {
                        let tasks = (0..3).map(|_| {
                            Box::new(|| {
                                done.fetch_add(1, Ordering::SeqCst);
                            }) as Task
                        });
                        run_all(tasks.collect());
                    }
                });
            }
        });
        assert_eq!(done.load(Ordering::SeqCst), 4 * 50 * 3);
    }

    #[test]
    fn a_panic_reaches_the_caller_after_every_other_task_has_run() {
        for bad in 0..3 {
            let done = AtomicUsize::new(0);
            let result = catch_unwind(AssertUnwindSafe(|| {
                let tasks = (0..3).map(|i| {
                    let done = &done;
                    Box::new(move || {
                        assert!(i != bad, "task {i} fails");
                        std::thread::sleep(Duration::from_millis(2));
                        done.fetch_add(1, Ordering::SeqCst);
                    }) as Task
                });
                run_all(tasks.collect());
            }));
            let payload = result.expect_err("the panic is raised again");
            let message = payload
                .downcast_ref::<String>()
                .expect("a formatted message");
            assert_eq!(message, &format!("task {bad} fails"));
            assert_eq!(done.load(Ordering::SeqCst), 2, "the other tasks finished");
        }
        // And the pool still works.
        let mut out = [0, 0];
        let tasks = out.iter_mut().map(|x| Box::new(move || *x = 1) as Task);
        run_all(tasks.collect());
        assert_eq!(out, [1, 1]);
    }
}
