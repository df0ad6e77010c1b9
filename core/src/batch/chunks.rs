//! Planning a batch into runs of texts, and handing the runs out to threads.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::pool;
use crate::Error;

/// Runs are at most this many texts long.
const MAX_RUN: usize = 1024;
/// With several threads, a run is at most this fraction of a thread's share of the batch.
const RUNS_PER_SHARE: usize = 16;

/// The runs of texts that the threads of a batch claim in turn, as ranges of the batch.
///
/// With several threads the runs shrink toward the end, each half of a thread's share of what
/// is left (but never longer than a sixteenth of its share of the batch), so that the threads
/// finish together: with runs of one size, a worker waited at the end for the calling thread
/// to make the lists of its last run.
pub fn batch_chunks(texts: usize, threads: usize) -> Vec<Range<usize>> {
    let threads = threads.max(1);
    let size = texts.div_ceil(threads * RUNS_PER_SHARE).clamp(1, MAX_RUN);
    let mut chunks = Vec::new();
    let mut start = 0;
    while start < texts {
        let left = texts - start;
        let take = if threads > 1 {
            (left / (threads * 2)).clamp(1, size)
        } else {
            size.min(left)
        };
        chunks.push(start..start + take);
        start += take;
    }
    chunks
}

/// Hands out the runs of a batch in order, each once, to whichever thread asks first.
#[derive(Debug)]
pub struct ChunkClaims<'a> {
    chunks: &'a [Range<usize>],
    next: AtomicUsize,
}

impl<'a> ChunkClaims<'a> {
    pub fn new(chunks: &'a [Range<usize>]) -> Self {
        Self {
            chunks,
            next: AtomicUsize::new(0),
        }
    }

    /// The next unclaimed run and its index, or `None` when all are claimed.
    #[inline]
    pub fn claim(&self) -> Option<(usize, Range<usize>)> {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        self.chunks.get(k).map(|range| (k, range.clone()))
    }
}

/// The error of the lowest-numbered run that failed, whatever order the runs finished in.
#[derive(Debug)]
pub struct FirstError<E>(Option<(usize, E)>);

impl<E> Default for FirstError<E> {
    fn default() -> Self {
        Self(None)
    }
}

impl<E> FirstError<E> {
    /// Note that run `k` failed with `error`; kept if no earlier run failed.
    pub fn keep(&mut self, k: usize, error: E) {
        if self.0.as_ref().is_none_or(|(j, _)| k < *j) {
            self.0 = Some((k, error));
        }
    }

    /// `Err` with the first run's error, if any failed.
    pub fn into_result(self) -> Result<(), E> {
        match self.0 {
            Some((_, e)) => Err(e),
            None => Ok(()),
        }
    }
}

/// The items of results given in the order of their runs, or the error of the first run that
/// has one.
pub fn first_error<T, E>(runs: Vec<Result<Vec<T>, E>>) -> Result<Vec<T>, E> {
    let mut items = Vec::new();
    for run in runs {
        items.extend(run?);
    }
    Ok(items)
}

/// `work` on every run of `chunks` on `num_threads` threads, the results in the order of the
/// runs. The calling thread is one of the threads: it and `num_threads - 1` pool workers claim
/// runs in order from one counter ([`ChunkClaims`]). A pool of `num_threads` that the calling
/// thread waited on would take an extra wake-up per call.
pub fn on_threads<T: Send>(
    num_threads: usize,
    chunks: &[Range<usize>],
    work: impl Fn(Range<usize>) -> T + Sync,
) -> Result<Vec<T>, Error> {
    let claims = ChunkClaims::new(chunks);
    let done = Mutex::new(Vec::with_capacity(chunks.len()));
    let run = || {
        let mut mine = Vec::new();
        while let Some((k, range)) = claims.claim() {
            mine.push((k, work(range)));
        }
        done.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
    };
    let workers = num_threads.max(1) - 1;
    if workers == 0 || chunks.len() < 2 {
        run();
    } else {
        // One pool per number of workers (as the bindings' encode uses): a pool per number of
        // chunks would start threads for each new size.
        pool(workers)?.in_place_scope(|scope| {
            for _ in 0..workers.min(chunks.len() - 1) {
                scope.spawn(|_| run());
            }
            run();
        });
    }
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_unstable_by_key(|(k, _)| *k);
    Ok(done.into_iter().map(|(_, result)| result).collect())
}

/// How long a worker polls for the texts before it sleeps until they come.
const POLL_FOR_TEXTS: Duration = Duration::from_millis(1);

/// The texts of a batch, once the calling thread has read them. A worker polls first: the
/// reading takes about as long as it takes to wake a sleeping thread. It yields between polls,
/// so that workers beyond the number of cores do not keep the reading thread from its core.
pub fn wait_for_texts<T>(texts: &OnceLock<T>) -> &T {
    let start = Instant::now();
    while start.elapsed() < POLL_FOR_TEXTS {
        if let Some(t) = texts.get() {
            return t;
        }
        std::thread::yield_now();
    }
    texts.wait()
}

/// Publishes an empty batch when dropped, if nothing was published: the workers waiting in
/// [`wait_for_texts`] then stop, even if the thread that reads the texts unwinds.
pub struct Unblock<'a, T>(pub &'a OnceLock<Vec<T>>);

impl<T> Drop for Unblock<'_, T> {
    fn drop(&mut self) {
        let _ = self.0.set(Vec::new());
    }
}
