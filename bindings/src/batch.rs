//! The interpreter side of batches: the texts of one call encoded on several threads (planned
//! and scheduled by the core's `batch` module), and the Python lists made of their ids by the
//! calling thread, which alone may touch the interpreter.

use std::sync::{Mutex, OnceLock};

use bytepair_core::Rank;
use bytepair_core::batch::{
    ChunkClaims, FirstError, Unblock, batch_chunks, first_error, on_threads, pool, wait_for_texts,
};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::errors::to_py_err;
use crate::special_set::{SpecialSet, refuse};
use crate::texts::BatchText;

/// The texts of a batch as worker threads read them (see [`crate::texts`]).
pub fn batch_texts<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<BatchText<'a>>> {
    texts.iter().map(BatchText::of).collect()
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
    })
    .map_err(to_py_err)?
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
    let claims = ChunkClaims::new(&chunks);
    let claim = || claims.claim();
    let (sender, receiver) = std::sync::mpsc::channel::<Chunk>();
    // Only this thread receives; the lock is there because waiting happens detached.
    let receiver = Mutex::new(receiver);
    let mut lists: Vec<Option<Vec<Py<PyList>>>> = chunks.iter().map(|_| None).collect();
    let mut failed = FirstError::default();
    let mut keep =
        |k: usize, chunk: PyResult<EncodedChunk>| match chunk.and_then(|c| c.lists(&list)) {
            Ok(made) => lists[k] = Some(made),
            Err(e) => failed.keep(k, e),
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
        let unread = pool(workers).map_err(to_py_err)?.in_place_scope(|scope| {
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
    failed.into_result()?;
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
    });
    first_error(counted.map_err(to_py_err)?)
}
