//! Thread pools for every parallel entry point (batch encode, WordPiece batches, training).
//!
//! Idea: one rayon pool per requested size, made on first use and kept, so a call costs no thread
//! start-up. Two invariants a long-running process needs:
//! - **Bounded.** A caller's `num_threads` is checked against [`max_threads`] before any thread
//!   starts; a larger value is an error, never a literal request for 10⁶ threads. Sizes are
//!   bounded, so the kept pools are too.
//! - **Fork-safe.** `fork` copies memory but not threads: a child inherits the parent's pool
//!   handles with no workers behind them, and the first job it sends there waits forever. Pools are
//!   therefore kept per process id; a child sees a different pid and makes its own pools. The
//!   parent's set is leaked in the child rather than dropped, because dropping would signal
//!   workers that do not exist there (and might take a lock a parent thread held at fork time).
//!
//! Downside: a process that forks many times leaks one small map per generation of children that
//! used a pool (a few hundred bytes each; the threads themselves were never copied).

use crate::error::{Error, Result};
use rayon::ThreadPool;
use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The machine's cores as the OS reports them to this process (1 if it cannot tell).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The largest `num_threads` accepted: 4 × the cores, and at least 8 (tiktoken's default, so
/// code written for tiktoken runs unchanged on small machines). More threads than cores only
/// adds switching; far more is a mistake to report, not a request to honour.
pub fn max_threads() -> usize {
    (4 * cores()).max(8)
}

/// The pool size for a caller's `num_threads`: 0 means every core; above [`max_threads`] is an
/// error naming the limit.
pub fn resolve(num_threads: usize) -> Result<usize> {
    match num_threads {
        0 => Ok(cores()),
        n if n <= max_threads() => Ok(n),
        n => Err(Error::invalid(format!(
            "num_threads={n} is more than the limit of {} (4 × {} cores, at least 8); \
             pass 0 to use every core",
            max_threads(),
            cores()
        ))),
    }
}

/// Threads for work that has no `num_threads` of its own (one long text): 0 = every core.
/// [`set_default_threads`] changes it (the Python package does so from `SUBWORD_NUM_THREADS`).
static DEFAULT_THREADS: AtomicUsize = AtomicUsize::new(0);

/// Set the process-wide thread count (checked like any `num_threads`; 1 = never parallel).
pub fn set_default_threads(num_threads: usize) -> Result<()> {
    resolve(num_threads)?;
    DEFAULT_THREADS.store(num_threads, Ordering::Relaxed);
    Ok(())
}

/// The process-wide thread count as set (0 = every core).
pub fn default_threads() -> usize {
    DEFAULT_THREADS.load(Ordering::Relaxed)
}

/// Threads a parallel loop started here would get: the current pool's when called from one of its
/// workers (a batch item), else the process-wide setting's.
pub fn parallelism() -> usize {
    if rayon::current_thread_index().is_some() {
        rayon::current_num_threads()
    } else {
        resolve(default_threads()).unwrap_or(1)
    }
}

/// Run `f`, whose parallel loops then use the current pool (inside a worker) or the process-wide
/// one.
pub fn run_parallel<T: Send>(f: impl FnOnce() -> T + Send) -> Result<T> {
    if rayon::current_thread_index().is_some() {
        Ok(f())
    } else {
        install(default_threads(), f)
    }
}

/// The pools of one process.
struct Pools {
    pid: u32,
    by_size: Mutex<HashMap<usize, Arc<ThreadPool>>>,
}

/// The current process's pools; replaced (and the old set leaked) when the pid changes.
static CURRENT: AtomicPtr<Pools> = AtomicPtr::new(std::ptr::null_mut());

fn pools() -> &'static Pools {
    let pid = std::process::id();
    loop {
        let seen = CURRENT.load(Ordering::Acquire);
        // SAFETY: every pointer stored in CURRENT comes from `Box::leak` and is never freed.
        if let Some(p) = unsafe { seen.as_ref() } {
            if p.pid == pid {
                return p;
            }
        }
        let fresh: &'static mut Pools = Box::leak(Box::new(Pools {
            pid,
            by_size: Mutex::new(HashMap::new()),
        }));
        let fresh_ptr: *mut Pools = fresh;
        match CURRENT.compare_exchange(seen, fresh_ptr, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return fresh,
            Err(_) => {
                // Another thread of this process installed its set first; use that one.
                // SAFETY: `fresh_ptr` was never shared, so it can be freed.
                drop(unsafe { Box::from_raw(fresh_ptr) });
            }
        }
    }
}

/// Run `f` on a pool of `num_threads` threads (0 = every core); nested rayon calls inside `f` use
/// the same pool.
pub fn install<T: Send>(num_threads: usize, f: impl FnOnce() -> T + Send) -> Result<T> {
    Ok(pool(num_threads)?.install(f))
}

/// The pool of `num_threads` threads (0 = every core), made on first use.
fn pool(num_threads: usize) -> Result<Arc<ThreadPool>> {
    let n = resolve(num_threads)?;
    let pool = {
        let mut by_size = pools().by_size.lock().unwrap_or_else(|e| e.into_inner());
        match by_size.get(&n) {
            Some(p) => p.clone(),
            None => {
                let p = rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .thread_name(|i| format!("subword-{i}"))
                    .build()
                    .map_err(|e| {
                        Error::invalid(format!("cannot start {n} threads ({e}); pass fewer"))
                    })?;
                let p = Arc::new(p);
                by_size.insert(n, p.clone());
                p
            }
        }
    };
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_bounded_and_zero_means_every_core() {
        assert_eq!(resolve(0).unwrap(), cores());
        assert_eq!(resolve(max_threads()).unwrap(), max_threads());
        let err = resolve(max_threads() + 1).unwrap_err().to_string();
        assert!(err.contains("limit"), "{err}");
        assert_eq!(install(2, rayon::current_num_threads).unwrap(), 2);
        // The same size reuses its pool: the thread names stay those of the first pool.
        let a = install(3, || std::thread::current().name().map(str::to_string)).unwrap();
        assert!(a.unwrap().starts_with("subword-"));
    }
}
