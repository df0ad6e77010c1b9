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

/// `f` on the kept pools, or None if another thread holds them. Never waits: a lock held by a
/// thread of the parent when the process forks stays held for ever in the child.
fn with_pools<T>(f: impl FnOnce(&mut Vec<KeptPool>) -> T) -> Option<T> {
    match POOLS.try_lock() {
        Ok(mut pools) => Some(f(&mut pools)),
        Err(TryLockError::Poisoned(p)) => Some(f(&mut p.into_inner())),
        Err(TryLockError::WouldBlock) => None,
    }
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
    with_pools(|pools| {
        if pools.len() < MAX_KEPT_POOLS && !pools.iter().any(|(_, size, _)| *size == n) {
            pools.push((pid, n, Arc::clone(&p)));
        }
    });
    Ok(p)
}
