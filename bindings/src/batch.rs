//! Batches: the texts of one call encoded on several threads, and the Python lists made of
//! their ids by the calling thread, which alone may touch the interpreter.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, TryLockError};

use bytepair_core::Rank;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::special_set::{SpecialSet, refuse};
use crate::texts::BatchText;

/// A thread pool of the process, by size and by the process that started it.
type KeptPool = (u32, usize, Arc<rayon::ThreadPool>);

/// Thread pools by size, kept so that batch calls reuse warm threads (and their piece caches).
/// Tagged with the process id: a forked child never uses its parent's (dead) threads.
static POOLS: Mutex<Vec<KeptPool>> = Mutex::new(Vec::new());

/// At most this many pool sizes are kept.
const KEPT_POOLS: usize = 8;

/// `f` on the kept pools, or None if another thread holds them. Never waits: a lock held by a
/// thread of the parent when the process forks stays held for ever in the child.
fn with_pools<T>(f: impl FnOnce(&mut Vec<KeptPool>) -> T) -> Option<T> {
    match POOLS.try_lock() {
        Ok(mut pools) => Some(f(&mut pools)),
        Err(TryLockError::Poisoned(p)) => Some(f(&mut p.into_inner())),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// A pool of `num_threads` threads, kept for the next call of the same size.
fn pool(num_threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
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
        .map_err(|e| PyValueError::new_err(format!("cannot start {n} threads: {e}")))?;
    let p = Arc::new(p);
    with_pools(|pools| {
        if pools.len() < KEPT_POOLS && !pools.iter().any(|(_, size, _)| *size == n) {
            pools.push((pid, n, Arc::clone(&p)));
        }
    });
    Ok(p)
}

/// `work` on every run of `chunks` on `num_threads` threads, the results in the order of the
/// runs. The calling thread is one of the threads: it and `num_threads - 1` pool workers claim
/// runs in order from one counter, as [`encode_texts`] does (a pool of `num_threads` that the
/// calling thread waited on took an extra wake-up per call).
pub fn on_threads<T: Send>(
    num_threads: usize,
    chunks: &[Range<usize>],
    work: impl Fn(Range<usize>) -> T + Sync,
) -> PyResult<Vec<T>> {
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::with_capacity(chunks.len()));
    let run = || {
        let mut mine = Vec::new();
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(range) = chunks.get(k) else { break };
            mine.push((k, work(range.clone())));
        }
        done.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
    };
    let workers = num_threads.max(1) - 1;
    if workers == 0 || chunks.len() < 2 {
        run();
    } else {
        // The pool of `encode_texts` (one per size): a pool per number of chunks would start
        // threads for each new size.
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

/// The texts of a batch as worker threads read them (see [`crate::texts`]).
pub fn batch_texts<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<BatchText<'a>>> {
    texts.iter().map(BatchText::of).collect()
}

/// The runs of texts that the threads of a batch claim in turn, as ranges of the batch.
///
/// With several threads the runs shrink toward the end, each half of a thread's share of what
/// is left (but never longer than a sixteenth of its share of the batch), so that the threads
/// finish together instead of one waiting for the lists of another's last long run.
pub fn batch_chunks(texts: usize, threads: usize) -> Vec<Range<usize>> {
    let threads = threads.max(1);
    let size = texts.div_ceil(threads * 16).clamp(1, 1024);
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

/// The texts of a batch, once the calling thread has read them. A worker polls first: the
/// reading takes about as long as it takes to wake a sleeping thread. It yields between polls,
/// so that workers beyond the number of cores do not keep the reading thread from its core.
fn wait_for_texts<T>(texts: &OnceLock<T>) -> &T {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_millis(1) {
        if let Some(t) = texts.get() {
            return t;
        }
        std::thread::yield_now();
    }
    texts.wait()
}

/// Publishes an empty batch when dropped, if nothing was published: the workers waiting in
/// [`wait_for_texts`] then stop, even if the thread that reads the texts unwinds.
struct Unblock<'a, T>(&'a OnceLock<Vec<T>>);

impl<T> Drop for Unblock<'_, T> {
    fn drop(&mut self) {
        let _ = self.0.set(Vec::new());
    }
}

/// `refuse` for a batch on `num_threads` threads: the error names the first text, in order,
/// that spells a token.
pub fn refuse_any(
    texts: &[BatchText<'_>],
    num_threads: usize,
    disallowed: Option<&SpecialSet>,
) -> PyResult<()> {
    if disallowed.is_none() {
        return Ok(());
    }
    let chunks = batch_chunks(texts.len(), num_threads);
    on_threads(num_threads, &chunks, |range| {
        texts[range]
            .iter()
            .try_for_each(|t| t.with_utf8(|t| refuse(t, disallowed))?)
    })?
    .into_iter()
    .collect()
}

/// The ids of several texts in one buffer: text `i` has `ids[ends[i - 1]..ends[i]]`.
///
/// One buffer per run of texts: a vector per text would be allocated by a worker and freed by
/// the calling thread, and glibc's allocator serialises such frees on the worker's arena lock.
struct EncodedChunk {
    ids: Vec<Rank>,
    ends: Vec<usize>,
}

impl EncodedChunk {
    /// The ids of `texts`, each encoded by `encode`.
    fn of(
        texts: &[BatchText<'_>],
        encode: &(impl Fn(&str, &mut Vec<Rank>) -> PyResult<()> + Sync),
    ) -> PyResult<Self> {
        let bytes: usize = texts.iter().map(|t| t.len()).sum();
        let mut chunk = EncodedChunk {
            ids: Vec::with_capacity(bytes / 4 + 1),
            ends: Vec::with_capacity(texts.len()),
        };
        for t in texts {
            t.with_utf8(|t| encode(t, &mut chunk.ids))??;
            chunk.ends.push(chunk.ids.len());
        }
        Ok(chunk)
    }

    /// A Python list of ids per text, made by `list`.
    fn lists<'py>(
        &self,
        list: &impl Fn(&[Rank]) -> PyResult<Bound<'py, PyList>>,
    ) -> PyResult<Vec<Py<PyList>>> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let made = list(&self.ids[start..end]).map(Bound::unbind);
                start = end;
                made
            })
            .collect()
    }
}

/// `encode` of every text on `num_threads` threads, as a Python list of id lists (each made by
/// `list`), after checking that no text spells a token of `disallowed` (`DisallowedSpecial`).
///
/// Making the Python lists takes a good part of the time and needs the interpreter, so this
/// thread makes them, chunk by chunk as the workers finish, while the workers encode the next
/// chunks, and encodes chunks itself when no list is waiting: that overlap is what lets two
/// threads approach twice one. The workers never touch the interpreter (a thread attaching to
/// it from outside creates and frees a thread state under a lock that `fork()` would inherit
/// held, hanging the child).
pub fn encode_texts<'py>(
    py: Python<'py>,
    strings: &[Bound<'py, PyString>],
    num_threads: usize,
    disallowed: Option<&SpecialSet>,
    encode: impl Fn(&str, &mut Vec<Rank>) -> PyResult<()> + Sync,
    list: impl Fn(&[Rank]) -> PyResult<Bound<'py, PyList>>,
) -> PyResult<Bound<'py, PyList>> {
    type Chunk = (usize, PyResult<EncodedChunk>);
    let workers = num_threads.max(1) - 1;
    let chunks = batch_chunks(strings.len(), num_threads);
    let pooled = workers > 0 && chunks.len() > 1;
    // The texts as the threads read them. Without `disallowed` the workers start before this
    // thread has read them (see `wait_for_texts`); with it, every text is checked first, on all
    // threads.
    let texts = OnceLock::<Vec<BatchText<'_>>>::new();
    if disallowed.is_some() || !pooled {
        let read = batch_texts(strings)?;
        if disallowed.is_some() {
            py.detach(|| refuse_any(&read, num_threads, disallowed))?;
        }
        let _ = texts.set(read);
    }
    // Chunks are claimed in order from one counter, by `num_threads - 1` workers and by this
    // thread, which also makes every list. So exactly `num_threads` threads are busy: this
    // thread encodes when no finished chunk is waiting for its lists, and waits only when every
    // chunk is claimed. (With one thread, chunk by chunk keeps the ids in cache until their
    // lists are made.)
    let next = AtomicUsize::new(0);
    let claim = || {
        let k = next.fetch_add(1, Ordering::Relaxed);
        chunks.get(k).map(|range| (k, range.clone()))
    };
    let (sender, receiver) = std::sync::mpsc::channel::<Chunk>();
    // Only this thread receives; the lock is there because waiting happens detached.
    let receiver = Mutex::new(receiver);
    let mut lists: Vec<Option<Vec<Py<PyList>>>> = chunks.iter().map(|_| None).collect();
    let mut first_error: Option<(usize, PyErr)> = None;
    let mut keep =
        |k: usize, chunk: PyResult<EncodedChunk>| match chunk.and_then(|c| c.lists(&list)) {
            Ok(made) => lists[k] = Some(made),
            Err(e) if first_error.as_ref().is_none_or(|(j, _)| k < *j) => {
                first_error = Some((k, e));
            }
            Err(_) => {}
        };
    let mut drive = |texts: &[BatchText<'_>]| {
        for _ in 0..chunks.len() {
            let finished = receiver
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .try_recv()
                .ok();
            if let Some((k, ids)) = finished {
                keep(k, ids);
            } else if let Some((k, range)) = claim() {
                let ids = py.detach(|| EncodedChunk::of(&texts[range], &encode));
                keep(k, ids);
            } else {
                let received = py.detach(|| {
                    let receiver = receiver.lock().unwrap_or_else(|p| p.into_inner());
                    receiver.recv()
                });
                let Ok((k, ids)) = received else {
                    break;
                };
                keep(k, ids);
            }
        }
    };
    if let Some(read) = texts.get().filter(|_| !pooled) {
        drop(sender);
        drive(read);
    } else {
        // A pool of the workers only: this thread is the other one. With a pool of
        // `num_threads`, a pool thread with no chunk to take woke with the others and searched
        // for work on a core the busy threads needed.
        let unread = pool(workers)?.in_place_scope(|scope| {
            for _ in 0..workers.min(chunks.len() - 1) {
                let sender = sender.clone();
                let (claim, encode, texts) = (&claim, &encode, &texts);
                scope.spawn(move |_| {
                    let texts = wait_for_texts(texts);
                    if texts.is_empty() {
                        return;
                    }
                    while let Some((k, range)) = claim() {
                        // The receiver outlives the scope, so this cannot fail.
                        let _ = sender.send((k, EncodedChunk::of(&texts[range], encode)));
                    }
                });
            }
            drop(sender);
            // Reading the texts here, while the workers wake up, overlaps the two. Whatever
            // happens, the workers must be given texts (none if reading failed, or on a panic:
            // `Unblock`) or they would wait for ever, and this scope with them.
            let _unblock = Unblock(&texts);
            let (published, unread) = match texts.get() {
                Some(read) => (read, None),
                None => match batch_texts(strings) {
                    Ok(read) => (texts.get_or_init(|| read), None),
                    Err(e) => (texts.get_or_init(Vec::new), Some(e)),
                },
            };
            if !published.is_empty() {
                drive(published);
            }
            unread
        });
        if let Some(e) = unread {
            return Err(e);
        }
    }
    if let Some((_, e)) = first_error {
        return Err(e);
    }
    PyList::new(py, lists.into_iter().flatten().flatten())
}

/// `count` of every text on `num_threads` threads: each text is checked, then counted, and the
/// error is that of the first text, in order, that has one.
pub fn count_texts(
    py: Python<'_>,
    strings: &[Bound<'_, PyString>],
    num_threads: usize,
    count: impl Fn(&str) -> PyResult<usize> + Sync,
) -> PyResult<Vec<usize>> {
    let texts = batch_texts(strings)?;
    let chunks = batch_chunks(texts.len(), num_threads);
    let counted = py.detach(|| {
        on_threads(num_threads, &chunks, |range| {
            texts[range]
                .iter()
                .map(|t| t.with_utf8(&count)?)
                .collect::<PyResult<Vec<usize>>>()
        })
    })?;
    let mut counts = Vec::with_capacity(texts.len());
    for chunk in counted {
        counts.extend(chunk?);
    }
    Ok(counts)
}
