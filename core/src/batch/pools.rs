//! Thread pools by size, kept between batches.

use std::sync::{Arc, Mutex, TryLockError};

use crate::Error;

/// A kept pool: the process that made it, its number of threads, the pool.
type KeptPool = (u32, usize, Arc<rayon::ThreadPool>);

/// Thread pools by size, kept so that batch calls reuse warm threads (and their piece caches).
/// Tagged with the process id: a forked child never uses its parent's (dead) threads.
static POOLS: Mutex<Vec<KeptPool>> = Mutex::new(Vec::new());

/// At most this many pool sizes are kept.
const MAX_KEPT_POOLS: usize = 8;

/// Tries at taking the lock before going without the kept pools.
const LOCK_TRIES: usize = 200;

/// `f` on the kept pools, or None if another thread keeps holding them. Never blocks: a lock
/// held by a thread of the parent when the process forks stays held for ever in the child.
fn with_pools<T>(f: impl FnOnce(&mut Vec<KeptPool>) -> T) -> Option<T> {
    for _ in 0..LOCK_TRIES {
        match POOLS.try_lock() {
            Ok(mut pools) => return Some(f(&mut pools)),
            Err(TryLockError::Poisoned(p)) => return Some(f(&mut p.into_inner())),
            Err(TryLockError::WouldBlock) => std::thread::yield_now(),
        }
    }
    None
}

/// A pool of `num_threads` threads (clamped to 1..=1024): a kept one, or a new one that is kept
/// when there is room.
pub fn pool(num_threads: usize) -> Result<Arc<rayon::ThreadPool>, Error> {
    let n = num_threads.clamp(1, 1024);
    let pid = std::process::id();
    let kept = with_pools(|pools| {
        // A parent's pools are leaked, not dropped: dropping one wakes its threads through
        // locks that one of them may have held at the fork.
        let (mine, parents): (Vec<_>, Vec<_>) = std::mem::take(pools)
            .into_iter()
            .partition(|(owner, _, _)| *owner == pid);
        *pools = mine;
        parents.into_iter().for_each(std::mem::forget);
        pools
            .iter()
            .find(|(_, size, _)| *size == n)
            .map(|(_, _, p)| Arc::clone(p))
    });
    if let Some(p) = kept.flatten() {
        return Ok(p);
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| Error::InvalidArgument(format!("cannot start {n} threads: {e}")))?;
    let p = Arc::new(p);
    // Another thread may have kept a pool of this size meanwhile: that one is used.
    let kept = with_pools(|pools| {
        if let Some((_, _, q)) = pools.iter().find(|(_, size, _)| *size == n) {
            return Arc::clone(q);
        }
        if pools.len() < MAX_KEPT_POOLS {
            pools.push((pid, n, Arc::clone(&p)));
        }
        p.clone()
    });
    Ok(kept.unwrap_or(p))
}
