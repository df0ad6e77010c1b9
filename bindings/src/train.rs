//! Training: `PieceCounter` counts pieces (texts, files, other counters) and learns merges.
//!
//! Every long operation runs with the GIL released, in slices: between slices the binding
//! re-attaches, reports progress through an optional callable (called with the amount of work
//! just done: bytes counted, or merges made) and calls `check_signals`, so Ctrl-C stops training
//! with `KeyboardInterrupt` within a fraction of a second. Threads come from a rayon pool owned by
//! the counter and sized by the caller's `num_threads` (no global pool).

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytepair_core::train::blocks::{BLOCK_BYTES, split_blocks};
use bytepair_core::train::{
    Merger, PieceCounter as CoreCounter, TextChunks, TieBreak, TrainOptions,
};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use rayon::ThreadPool;

use crate::errors::to_py_err;
use crate::texts::BatchText;

/// How long the GIL stays released between progress reports and signal checks.
const SLICE: Duration = Duration::from_millis(100);

/// Counts of the unique pieces of a corpus, and the merge loop over them.
#[pyclass(frozen, module = "bytepair._core")]
pub struct PieceCounter {
    inner: Mutex<CoreCounter>,
    /// The last pool, its size and the process that started it.
    pool: Mutex<Option<(usize, u32, Arc<ThreadPool>)>>,
}

impl PieceCounter {
    /// Lock the counts. Call only with the GIL released (inside `py.detach`), so that a thread
    /// waiting for the lock never holds the GIL that the lock's holder needs.
    fn counter(&self) -> MutexGuard<'_, CoreCounter> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A pool of `num_threads` threads, kept for the next call with the same number.
    fn pool(&self, num_threads: usize) -> PyResult<Arc<ThreadPool>> {
        let n = num_threads.max(1);
        let pid = std::process::id();
        let mut cached = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        match cached.take() {
            Some((size, owner, pool)) if owner == pid && size == n => {
                *cached = Some((size, owner, Arc::clone(&pool)));
                return Ok(pool);
            }
            // A counter carried into a forked child: its parent's threads are not there, and
            // dropping the pool would wake them through locks one of them may have held.
            Some((_, owner, pool)) if owner != pid => std::mem::forget(pool),
            _ => {}
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("bytepair-train-{i}"))
            .build()
            .map_err(|e| PyValueError::new_err(format!("cannot start {n} threads: {e}")))?;
        let pool = Arc::new(pool);
        *cached = Some((n, pid, Arc::clone(&pool)));
        Ok(pool)
    }

    /// Count `texts` (each a separate document) on the pool, GIL released.
    fn count<S: AsRef<str> + Sync>(
        &self,
        py: Python<'_>,
        texts: &[S],
        pool: &ThreadPool,
    ) -> PyResult<()> {
        // The counter's lock is never held inside the pool: a worker waiting in a join may run
        // another caller's job, which would then wait for the lock held above it.
        py.detach(|| {
            let counting = self.counter().text_counter();
            let counts = pool.install(|| counting.count(texts))?;
            self.counter().add_text_counts(counts);
            Ok(())
        })
        .map_err(to_py_err)
    }
}

/// The `(piece, count)` pairs of `serialize_counts`'s bytes, or what is wrong with them.
fn parse_serialized_counts(data: &[u8]) -> Result<Vec<(&[u8], u64)>, String> {
    let mut items = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let at = data.len() - rest.len();
        let bad = || format!("serialized counts end inside the piece at byte {at}");
        let (len, tail) = rest.split_first_chunk::<4>().ok_or_else(bad)?;
        let len = usize::try_from(u32::from_le_bytes(*len)).map_err(|_| bad())?;
        if tail.len() < len {
            return Err(bad());
        }
        let (piece, tail) = tail.split_at(len);
        let (n, tail) = tail.split_first_chunk::<8>().ok_or_else(bad)?;
        items.push((piece, u64::from_le_bytes(*n)));
        rest = tail;
    }
    Ok(items)
}

fn report(progress: Option<&Bound<'_, PyAny>>, amount: u64) -> PyResult<()> {
    match progress {
        Some(f) if amount > 0 => f.call1((amount,)).map(drop),
        _ => Ok(()),
    }
}

#[pymethods]
impl PieceCounter {
    #[new]
    fn new(pattern: &str) -> PyResult<Self> {
        let inner = CoreCounter::new(pattern).map_err(to_py_err)?;
        Ok(Self {
            inner: Mutex::new(inner),
            pool: Mutex::new(None),
        })
    }

    /// The pre-tokenizer pattern.
    #[getter]
    fn pattern(&self, py: Python<'_>) -> String {
        py.detach(|| self.counter().pattern().to_owned())
    }

    /// The number of pieces counted, with repetitions.
    #[getter]
    fn total(&self, py: Python<'_>) -> u64 {
        py.detach(|| self.counter().total())
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        py.detach(|| self.counter().len())
    }

    /// Count one text; a long text is cut into blocks (only where the pieces cannot change)
    /// that are counted in parallel. `progress(n)` is called with the bytes counted.
    #[pyo3(signature = (text, num_threads, progress=None))]
    fn add_text(
        &self,
        py: Python<'_>,
        text: &Bound<'_, PyString>,
        num_threads: usize,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let pool = self.pool(num_threads)?;
        let rule = py.detach(|| self.counter().text_rule());
        // Converted here, so that no UTF-8 copy stays inside the string (see `BatchText`).
        let utf8 = BatchText::of(text)?.to_utf8()?;
        let blocks = split_blocks(&utf8, BLOCK_BYTES, rule);
        // A few blocks per thread per slice: enough to balance, small enough to stay responsive.
        for group in blocks.chunks(4 * pool.current_num_threads()) {
            self.count(py, group, &pool)?;
            report(progress, group.iter().map(|b| b.len() as u64).sum())?;
            py.check_signals()?;
        }
        Ok(())
    }

    /// Count a batch of texts, each a separate document, in parallel.
    #[pyo3(signature = (texts, num_threads, progress=None))]
    fn add_texts(
        &self,
        py: Python<'_>,
        texts: Vec<Bound<'_, PyString>>,
        num_threads: usize,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let pool = self.pool(num_threads)?;
        // A slice of the batch at a time: the UTF-8 copies of non-ASCII texts stay small, and
        // Ctrl-C is seen between slices.
        let slice_bytes = 4 * BLOCK_BYTES * pool.current_num_threads();
        let mut rest = texts.as_slice();
        while !rest.is_empty() {
            let mut utf8 = Vec::new();
            let mut size = 0;
            while let Some((first, tail)) = rest.split_first() {
                if size >= slice_bytes {
                    break;
                }
                let u = BatchText::of(first)?.to_utf8()?;
                size += u.len();
                utf8.push(u);
                rest = tail;
            }
            let slice: Vec<&str> = utf8.iter().map(AsRef::as_ref).collect();
            self.count(py, &slice, &pool)?;
            report(progress, size as u64)?;
            py.check_signals()?;
        }
        Ok(())
    }

    /// Count a UTF-8 file, read in blocks (bounded memory) and counted in parallel. Line endings
    /// are kept as they are. `progress(n)` is called with the bytes counted.
    #[pyo3(signature = (path, num_threads, progress=None))]
    fn add_file(
        &self,
        py: Python<'_>,
        path: PathBuf,
        num_threads: usize,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let name = path.display().to_string();
        let file = std::fs::File::open(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                PyFileNotFoundError::new_err(format!("no such file: {name}"))
            }
            _ => PyOSError::new_err(format!("cannot open {name}: {e}")),
        })?;
        let pool = self.pool(num_threads)?;
        let rule = py.detach(|| self.counter().file_rule());
        let mut chunks =
            TextChunks::new(std::io::BufReader::with_capacity(1 << 16, file), name, rule);
        let slice_bytes = 4 * BLOCK_BYTES * pool.current_num_threads();
        loop {
            let before = chunks.bytes_read();
            let done = py.detach(|| -> Result<bool, bytepair_core::Error> {
                let Some(text) = chunks.next_text(slice_bytes)? else {
                    return Ok(true);
                };
                let blocks = split_blocks(&text, BLOCK_BYTES, rule);
                let counting = self.counter().text_counter();
                let counts = pool.install(|| counting.count(&blocks))?;
                self.counter().add_text_counts(counts);
                Ok(false)
            });
            if done.map_err(to_py_err)? {
                return Ok(());
            }
            report(progress, chunks.bytes_read() - before)?;
            py.check_signals()?;
        }
    }

    /// Add counts computed elsewhere: `(piece bytes, count)` pairs, e.g. another counter's items.
    fn add_counts(&self, py: Python<'_>, items: Vec<(Vec<u8>, u64)>) {
        py.detach(|| {
            let mut c = self.counter();
            for (piece, n) in &items {
                c.add_count(piece, *n);
            }
        });
    }

    /// The counts as one bytes object, for `add_serialized_counts` in another process: far
    /// cheaper to send than `items()`. Each piece, in no particular order: its length (u32),
    /// its bytes, its count (u64), little-endian.
    fn serialize_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let data = py.detach(|| {
            let c = self.counter();
            let counts = c.counts();
            let mut out = Vec::with_capacity(counts.total_bytes() + 12 * c.len());
            for (piece, n) in counts.iter() {
                let piece = piece.as_ref();
                let len = u32::try_from(piece.len()).map_err(|_| {
                    PyValueError::new_err(format!(
                        "cannot serialize a piece of {} bytes (the limit is 4 GiB)",
                        piece.len()
                    ))
                })?;
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(piece);
                out.extend_from_slice(&n.to_le_bytes());
            }
            Ok::<_, PyErr>(out)
        })?;
        Ok(PyBytes::new(py, &data))
    }

    /// Add counts that `serialize_counts` wrote; ValueError, and nothing added, for bytes
    /// that are not such counts.
    fn add_serialized_counts(&self, py: Python<'_>, data: &[u8]) -> PyResult<()> {
        py.detach(|| {
            let items = parse_serialized_counts(data).map_err(PyValueError::new_err)?;
            let mut c = self.counter();
            for (piece, n) in items {
                c.add_count(piece, n);
            }
            Ok(())
        })
    }

    /// Add another counter's counts (both must use the same pattern).
    fn merge_counts(&self, py: Python<'_>, other: &Bound<'_, PieceCounter>) -> PyResult<()> {
        let other = other.get();
        // Copy first and lock one counter at a time: a.merge_counts(b) and b.merge_counts(a)
        // running together cannot deadlock, and c.merge_counts(c) doubles c.
        let theirs = py.detach(|| other.counter().clone());
        py.detach(|| {
            let mut mine = self.counter();
            if mine.pattern() != theirs.pattern() {
                return Err(PyValueError::new_err(format!(
                    "cannot merge counts of different patterns: {:?} and {:?}",
                    mine.pattern(),
                    theirs.pattern()
                )));
            }
            mine.merge(&theirs);
            Ok(())
        })
    }

    /// Every unique piece and its count, most frequent first (ties by bytes).
    fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        let items = py.detach(|| {
            let c = self.counter();
            let mut items: Vec<(Vec<u8>, u64)> = c
                .counts()
                .iter()
                .map(|(k, n)| (k.as_ref().to_vec(), n))
                .collect();
            items.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            items
        });
        items
            .into_iter()
            .map(|(k, n)| (PyBytes::new(py, &k), n))
            .collect()
    }

    /// Learn merges: `[(left id, right id), ...]` in order, merge `i` making id `256 + i`, ids
    /// 0..=255 being the byte values. Stops at `vocab_size` tokens (256 + merges), when no pair is
    /// left, or before the first merge whose count is below `min_frequency`. `tie_break` is
    /// "bytepair" (smallest pair of ids, bytes by value) or "hf" (Hugging Face's byte order).
    /// `progress(n)` is called with the merges made since the last call. With `consume=True`
    /// the counts move into the trainer and the counter is left empty (saves memory).
    #[pyo3(signature = (vocab_size, min_frequency=0, tie_break="bytepair", num_threads=None, progress=None, consume=false))]
    #[allow(clippy::too_many_arguments)]
    fn train(
        &self,
        py: Python<'_>,
        vocab_size: usize,
        min_frequency: u64,
        tie_break: &str,
        num_threads: Option<usize>,
        progress: Option<&Bound<'_, PyAny>>,
        consume: bool,
    ) -> PyResult<Vec<(u32, u32)>> {
        let tie_break = match tie_break {
            "bytepair" => TieBreak::Bytepair,
            "hf" => TieBreak::HuggingFace,
            other => {
                return Err(PyValueError::new_err(format!(
                    "tie_break must be \"bytepair\" or \"hf\", got {other:?}"
                )));
            }
        };
        let options = TrainOptions {
            vocab_size,
            min_frequency,
            tie_break,
        };
        let pool = self.pool(num_threads.unwrap_or(1))?;
        let mut merger = py
            .detach(|| {
                pool.install(|| {
                    if consume {
                        let counts = self.counter().take_counts();
                        let bytes = counts.total_bytes();
                        Merger::with_capacity(counts, bytes, &options)
                    } else {
                        let c = self.counter();
                        Merger::new(c.counts().iter(), &options)
                    }
                })
            })
            .map_err(to_py_err)?;
        while !merger.is_finished() {
            let made = py.detach(|| {
                pool.install(|| {
                    let deadline = Instant::now() + SLICE;
                    let mut made = 0;
                    while !merger.is_finished() && Instant::now() < deadline {
                        made += merger.step(32);
                    }
                    made
                })
            });
            report(progress, made as u64)?;
            py.check_signals()?;
        }
        Ok(merger.merges())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        py.detach(|| {
            let c = self.counter();
            format!(
                "PieceCounter(pattern={:?}, unique={}, total={})",
                c.pattern(),
                c.len(),
                c.total()
            )
        })
    }
}
