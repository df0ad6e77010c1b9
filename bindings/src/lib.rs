//! The PyO3 layer: converts arguments, releases the GIL, maps core errors to exceptions.
//! All policy (special-token rules, messages that tell users what to do, file formats) lives in
//! the Python package; this file only moves data across.
#![deny(unsafe_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError};

use bytepair_core::batch::{
    ChunkClaims, FirstError, Unblock, batch_chunks, first_error, on_threads, pool, wait_for_texts,
    with_id_buffer, with_scratch,
};
use bytepair_core::encoder::SpecialMatcher;
use bytepair_core::{AnyEncoder as CoreEncoder, Encoder, Error, Pretokenizer, Rank};
use numpy::PyArray1;
use pyo3::PyTraverseError;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyError, PyMemoryError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

mod formats;
mod ints;
mod texts;
mod train;

use ints::IdInts;
use texts::BatchText;

create_exception!(
    bytepair._core,
    DisallowedSpecial,
    PyValueError,
    "Text spells a special token that the call disallowed; the argument is the token. \
     bytepair.Encoding turns it into the message that says how to allow it."
);

fn to_py_err(e: Error) -> PyErr {
    match e {
        Error::UnknownId(_) | Error::UnknownToken(_) => PyKeyError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Ids from Python ints, with a message naming the first one that cannot be a token id.
fn ids_from_py(ids: Vec<i64>) -> PyResult<Vec<Rank>> {
    ids.into_iter()
        .map(|id| {
            Rank::try_from(id)
                .map_err(|_| PyKeyError::new_err(format!("token id {id} is not in the vocabulary")))
        })
        .collect()
}

/// How many ids ahead `id_list` asks for an id's int, the first ones before the list is
/// allocated: 0.95 of the time of 16 ahead and none before (o200k English,
/// `benchmarks/ab_builds.py`, three runs in each order); 32 and 128 took 0.97, and 16 with the
/// first ones asked for before, 1.00.
const INT_PREFETCH_DISTANCE: usize = 64;

/// Ask the CPU to bring the cache line at `address` in; a hint that never faults.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address; its only
    // requirement is SSE, which every x86_64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// A new int for `id` (CPython's own for ids up to 256): for ids no shared int covers (see
/// `ints`). Kept out of line, so that the loops that make lists stay small.
#[inline(never)]
fn new_int(py: Python<'_>, id: Rank) -> Bound<'_, PyAny> {
    id.into_pyobject(py)
        .map_or_else(|e| match e {}, Bound::into_any)
}

/// A list of `len` items, item `i` being `item(i)`. `PyList::new` fills a list through a
/// `dyn Iterator`, a call per item that cost a returned id more than the rest of making the list
/// (a third of the time of making it, measured on lists of a few hundred ids).
#[allow(unsafe_code)]
#[inline(always)]
fn list_of<'py>(
    py: Python<'py>,
    len: usize,
    mut item: impl FnMut(usize) -> Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let size = isize::try_from(len).map_err(|_| PyMemoryError::new_err("too many ids"))?;
    // SAFETY: `PyList_New` needs the interpreter (`py`) and returns a new reference, or null
    // with an exception set, which `from_owned_ptr_or_err` turns into the error. Its places are
    // null until set; each `i < len` is set once, handing the reference over to the list. If
    // `item` unwinds, the list is freed with places still null, which freeing allows.
    unsafe {
        let list = Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyList_New(size))?;
        for i in 0..len {
            pyo3::ffi::PyList_SET_ITEM(list.as_ptr(), i as isize, item(i).into_ptr());
        }
        Ok(list.cast_into_unchecked())
    }
}

/// The ids of several texts in one buffer: text `i` has `ids[ends[i - 1]..ends[i]]`.
struct EncodedChunk {
    ids: Vec<Rank>,
    ends: Vec<usize>,
}

impl EncodedChunk {
    /// A Python list of ids per text.
    fn lists<'py>(
        &self,
        encoding: &CoreEncoding,
        py: Python<'py>,
    ) -> PyResult<Vec<Bound<'py, PyList>>> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let list = encoding.id_list(py, &self.ids[start..end]);
                start = end;
                list
            })
            .collect()
    }
}

/// Special tokens of one `CoreEncoding` compiled for search: what the `allowed` and `disallowed`
/// arguments take. Python builds one per distinct argument and keeps it, so a call converts no
/// list and looks up no matcher.
#[pyclass(frozen, module = "bytepair._core")]
struct SpecialSet {
    /// The `CoreEncoding` that made it: token ids mean nothing to another encoder.
    owner: u64,
    matcher: Arc<SpecialMatcher>,
    /// Which added tokens are recognised when this set is allowed (Hugging Face encoders).
    enabled: Vec<bool>,
}

/// Tells encoders apart for `SpecialSet::owner`.
static NEXT_ENCODER: AtomicU64 = AtomicU64::new(0);

/// `DisallowedSpecial` for the first token of `disallowed` in `text`.
fn refuse(text: &str, disallowed: Option<&SpecialSet>) -> PyResult<()> {
    match disallowed.and_then(|d| d.matcher.find(text, 0)) {
        Some((s, e, _)) => Err(DisallowedSpecial::new_err(
            text.get(s..e).unwrap_or_default().to_owned(),
        )),
        None => Ok(()),
    }
}

/// The texts of a batch as worker threads read them (see [`texts`]).
fn batch_texts<'a>(texts: &'a [Bound<'_, PyString>]) -> PyResult<Vec<BatchText<'a>>> {
    texts.iter().map(BatchText::of).collect()
}

/// `Ok` once numpy imports. The `numpy` crate panics when it cannot (it looks numpy's C API up
/// on first use), so every path that makes an array asks here first, and a missing numpy is
/// the `ImportError` of importing it.
fn numpy_importable(py: Python<'_>) -> PyResult<()> {
    static IMPORTED: PyOnceLock<()> = PyOnceLock::new();
    IMPORTED
        .get_or_try_init(py, || py.import("numpy").map(drop))
        .map(drop)
}

/// `refuse` for a batch on `num_threads` threads: the error names the first text, in order,
/// that spells a token.
fn refuse_any(
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

/// The compiled encoder behind `bytepair.Encoding`.
#[pyclass(frozen, module = "bytepair._core")]
struct CoreEncoding {
    core: CoreEncoder,
    id: u64,
    all_specials: Arc<SpecialMatcher>,
    /// Matchers for other sets of special tokens, built on first use.
    matchers: Mutex<HashMap<Vec<String>, Arc<SpecialMatcher>>>,
    /// `enabled` with no special token allowed: only the non-special added tokens.
    ordinary_added: Vec<bool>,
    /// The process's shared ints for this vocabulary's ids (`ints`), once a list needed them.
    ints: std::sync::OnceLock<&'static IdInts>,
}

impl CoreEncoding {
    fn from_core(core: CoreEncoder) -> PyResult<Self> {
        let all = core
            .special_matcher(core.specials().keys().map(String::as_str))
            .map_err(to_py_err)?;
        Ok(Self {
            core,
            id: NEXT_ENCODER.fetch_add(1, Ordering::Relaxed),
            all_specials: Arc::new(all),
            matchers: Mutex::new(HashMap::new()),
            ordinary_added: Vec::new(),
            ints: std::sync::OnceLock::new(),
        })
    }

    /// `ids` as a Python list of ints.
    fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        let ints = match self.ints.get() {
            Some(ints) => *ints,
            None => match IdInts::for_ids(py, self.core.id_bound()) {
                Some(ints) => *self.ints.get_or_init(|| ints),
                None => return list_of(py, ids.len(), |i| new_int(py, ids[i])),
            },
        };
        // Fresh text uses ints that are not in cache. Their addresses need no load, so the
        // first ones are asked for before the list is allocated (all of them, for most
        // paragraphs), and each later one as far ahead.
        for &id in ids.iter().take(INT_PREFETCH_DISTANCE) {
            ints.prefetch(id);
        }
        list_of(py, ids.len(), |i| {
            if let Some(&ahead) = ids.get(i + INT_PREFETCH_DISTANCE) {
                ints.prefetch(ahead);
            }
            ints.get(py, ids[i])
        })
    }

    /// `encode` of every text on `num_threads` threads, as a Python list of id lists, after
    /// checking that no text spells a token of `disallowed` (`DisallowedSpecial`).
    ///
    /// Making the Python lists takes about a third of the time and needs the interpreter, so
    /// this thread makes them, chunk by chunk as the workers finish, while the workers encode
    /// the next chunks, and encodes chunks itself when no list is waiting: that overlap is what
    /// lets two threads approach twice one. The workers never touch the interpreter (a thread
    /// attaching to it from outside creates and frees a thread state under a lock that `fork()`
    /// would inherit held, hanging the child).
    fn encode_texts<'py>(
        &self,
        py: Python<'py>,
        strings: &[Bound<'py, PyString>],
        num_threads: usize,
        disallowed: Option<&SpecialSet>,
        encode: impl Fn(&str, &mut Vec<Rank>) -> PyResult<()> + Sync,
    ) -> PyResult<Bound<'py, PyList>> {
        type Chunk = (usize, PyResult<EncodedChunk>);
        // The ids of a run of texts, back to back in one buffer: a vector per text would be
        // allocated by a worker and freed by this thread, and glibc's allocator serialises
        // such frees on the worker's arena lock.
        let encode_chunk = |part: &[BatchText<'_>]| {
            let bytes: usize = part.iter().map(|t| t.len()).sum();
            let mut chunk = EncodedChunk {
                ids: Vec::with_capacity(bytes / 4 + 1),
                ends: Vec::with_capacity(part.len()),
            };
            for t in part {
                t.with_utf8(|t| encode(t, &mut chunk.ids))??;
                chunk.ends.push(chunk.ids.len());
            }
            Ok(chunk)
        };
        let workers = num_threads.max(1) - 1;
        let chunks = batch_chunks(strings.len(), num_threads);
        let pooled = workers > 0 && chunks.len() > 1;
        // The texts as the threads read them. Without `disallowed` the workers start before
        // this thread has read them (see `wait_for_texts`); with it, every text is checked
        // first, on all threads.
        let texts = std::sync::OnceLock::<Vec<BatchText<'_>>>::new();
        if disallowed.is_some() || !pooled {
            let read = batch_texts(strings)?;
            if disallowed.is_some() {
                py.detach(|| refuse_any(&read, num_threads, disallowed))?;
            }
            let _ = texts.set(read);
        }
        // Chunks are claimed in order from one counter, by `num_threads - 1` workers and by
        // this thread, which also makes every list. So exactly `num_threads` threads are busy:
        // this thread encodes when no finished chunk is waiting for its lists, and waits only
        // when every chunk is claimed. (With one thread, chunk by chunk keeps the ids in cache
        // until their lists are made.)
        let claims = ChunkClaims::new(&chunks);
        let claim = || claims.claim();
        let (sender, receiver) = std::sync::mpsc::channel::<Chunk>();
        // Only this thread receives; the lock is there because waiting happens detached.
        let receiver = Mutex::new(receiver);
        let mut lists: Vec<Option<Vec<Py<PyList>>>> = chunks.iter().map(|_| None).collect();
        let mut failed = FirstError::<PyErr>::default();
        let mut keep = |k: usize, chunk: PyResult<EncodedChunk>| {
            let made = chunk
                .and_then(|c| c.lists(self, py))
                .map(|lists| lists.into_iter().map(Bound::unbind).collect::<Vec<_>>());
            match made {
                Ok(made) => lists[k] = Some(made),
                Err(e) => failed.keep(k, e),
            }
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
                    let ids = py.detach(|| encode_chunk(&texts[range]));
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
            // `num_threads`, a pool thread with no chunk to take woke with the others and
            // searched for work on a core the busy threads needed. Measured with two threads
            // (o200k, English, medians of 40 rounds per run, four runs alternating the builds):
            // two threads took 1.13-1.26 times the processor time of one for the same texts,
            // 1.02-1.09 with this pool in three runs of four; two threads over one went from
            // 1.47-1.62 to 1.62-1.75 in the runs where the machine was quiet enough to tell.
            let unread = pool(workers).map_err(to_py_err)?.in_place_scope(|scope| {
                for _ in 0..workers.min(chunks.len() - 1) {
                    let sender = sender.clone();
                    let (claim, encode_chunk, texts) = (&claim, &encode_chunk, &texts);
                    scope.spawn(move |_| {
                        let texts = wait_for_texts(texts);
                        if texts.is_empty() {
                            return;
                        }
                        while let Some((k, range)) = claim() {
                            // The receiver outlives the scope, so this cannot fail.
                            let _ = sender.send((k, encode_chunk(&texts[range])));
                        }
                    });
                }
                drop(sender);
                // Reading the texts here, while the workers wake up, overlaps the two: each
                // took 40-60 microseconds of a 3 ms call (o200k, 400 KB of English paragraphs,
                // two threads). Whatever happens, the workers must be given texts (none if
                // reading failed, or on a panic: `Unblock`) or they would wait for ever, and
                // this scope with them.
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

    /// Which added tokens count: all non-special ones, and the special ones in `allowed`
    /// (`None`: all of them).
    fn enabled(&self, allowed: Option<&[String]>) -> Vec<bool> {
        let Some(added) = self.core.added() else {
            return Vec::new();
        };
        match allowed {
            None => added.enabled(|_| true),
            Some(names) => {
                let names: std::collections::HashSet<&str> =
                    names.iter().map(String::as_str).collect();
                added.enabled(|c| names.contains(c))
            }
        }
    }

    /// `set` if this encoder made it.
    fn own<'a>(&self, set: Option<&'a SpecialSet>) -> PyResult<Option<&'a SpecialSet>> {
        match set {
            Some(s) if s.owner != self.id => Err(PyValueError::new_err(
                "this SpecialSet belongs to another CoreEncoding",
            )),
            other => Ok(other),
        }
    }

    /// The added tokens to recognise with `allowed` (`None`: no special one).
    fn enabled_for<'a>(&'a self, allowed: Option<&'a SpecialSet>) -> &'a [bool] {
        allowed.map_or(&self.ordinary_added, |a| &a.enabled)
    }

    /// `make` of the ids of `text` (as `encode_one_into`), encoded detached into this thread's id
    /// buffer.
    fn with_encoded<'py, R>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
        make: impl FnOnce(&[Rank]) -> PyResult<R>,
    ) -> PyResult<R> {
        with_id_buffer(|ids| {
            py.detach(|| self.encode_one_into(text, allowed, disallowed, ids))?;
            make(ids)
        })
    }

    /// Append the ids of `text` to `out` after checking that it spells no token of
    /// `disallowed`: specials of `allowed` become their ids, the rest is ordinary text.
    fn encode_one_into(
        &self,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
        out: &mut Vec<Rank>,
    ) -> PyResult<()> {
        refuse(text, disallowed)?;
        match allowed {
            None => self.core.encode_ordinary_into(text, out),
            Some(a) => self.core.encode_into(text, &a.matcher, out),
        }
        .map_err(to_py_err)
    }

    fn count_one(
        &self,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<usize> {
        refuse(text, disallowed)?;
        match allowed {
            None => self.core.count_ordinary(text),
            Some(a) => self.core.count(text, &a.matcher),
        }
        .map_err(to_py_err)
    }

    fn encode_hf_into(
        &self,
        text: &str,
        enabled: &[bool],
        first_pass: bool,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        self.core
            .encode_with_added_into(text, enabled, first_pass, out)
    }

    fn matcher(&self, mut names: Vec<String>) -> PyResult<Arc<SpecialMatcher>> {
        names.sort_unstable();
        names.dedup();
        let specials = self.core.specials();
        if names.len() == specials.len() && names.iter().all(|n| specials.contains_key(n)) {
            return Ok(Arc::clone(&self.all_specials));
        }
        // Never wait for the cache: a lock held by another thread when the process forks stays
        // held for ever in the child (a deadlock), and building a matcher is cheap.
        let cached = match self.matchers.try_lock() {
            Ok(cache) => cache.get(&names).cloned(),
            Err(TryLockError::Poisoned(p)) => p.into_inner().get(&names).cloned(),
            Err(TryLockError::WouldBlock) => None,
        };
        if let Some(m) = cached {
            return Ok(m);
        }
        let m = Arc::new(
            self.core
                .special_matcher(names.iter().map(String::as_str))
                .map_err(to_py_err)?,
        );
        if let Ok(mut cache) = self.matchers.try_lock() {
            if cache.len() < 64 {
                cache.insert(names, Arc::clone(&m));
            }
        }
        Ok(m)
    }
}

#[pymethods]
impl CoreEncoding {
    #[new]
    fn new(
        py: Python<'_>,
        mergeable_ranks: HashMap<Vec<u8>, Rank>,
        special_tokens: HashMap<String, Rank>,
        pattern: &str,
    ) -> PyResult<Self> {
        let core = py
            .detach(|| CoreEncoder::new(mergeable_ranks, special_tokens, pattern))
            .map_err(to_py_err)?;
        Self::from_core(core)
    }

    /// Build straight from the contents of a `.tiktoken` file (no Python dict in between).
    #[staticmethod]
    fn from_tiktoken(
        py: Python<'_>,
        data: &[u8],
        special_tokens: HashMap<String, Rank>,
        pattern: &str,
    ) -> PyResult<Self> {
        let core = py
            .detach(|| {
                let ranks = bytepair_core::formats::tiktoken::parse(data)?;
                CoreEncoder::new(ranks, special_tokens, pattern)
            })
            .map_err(to_py_err)?;
        Self::from_core(core)
    }

    /// Build a pair-merge (Hugging Face) encoder: `vocab` (token text -> id), merges as pairs or
    /// as a merges file's bytes, pipeline stages and added tokens (shapes: `formats.rs`).
    #[staticmethod]
    #[pyo3(signature = (vocab, stages, added, merges=None, merges_data=None, ignore_merges=false, unknown=None))]
    #[allow(clippy::too_many_arguments)]
    fn from_hf(
        py: Python<'_>,
        vocab: HashMap<String, Rank>,
        stages: Vec<formats::StageSpec>,
        added: Vec<formats::AddedSpec>,
        merges: Option<Vec<(String, String)>>,
        merges_data: Option<&[u8]>,
        ignore_merges: bool,
        unknown: Option<(Rank, bool)>,
    ) -> PyResult<Self> {
        let pipeline = formats::pipeline(stages)?;
        let added = formats::added(added);
        let core = py
            .detach(|| {
                let merges = formats::merge_list(merges, merges_data)?;
                let vocab: Vec<(String, Rank)> = vocab.into_iter().collect();
                formats::pair_encoder(vocab, merges, ignore_merges, unknown, added, pipeline)
            })
            .map_err(to_py_err)?;
        let mut this = Self::from_core(core)?;
        this.ordinary_added = this.enabled(Some(&[]));
        Ok(this)
    }

    /// Build from GPT-2 files read as tiktoken reads them (ids are ranks): `encoder` is
    /// `encoder.json`, `merges_data` the bytes of `vocab.bpe`. Returns the encoder and its special
    /// tokens (the entries no merge makes, plus `special_tokens`).
    #[staticmethod]
    #[pyo3(signature = (encoder, merges_data, pattern, special_tokens=None))]
    fn from_gpt2(
        py: Python<'_>,
        encoder: HashMap<String, Rank>,
        merges_data: &[u8],
        pattern: &str,
        special_tokens: Option<HashMap<String, Rank>>,
    ) -> PyResult<(Self, HashMap<String, Rank>)> {
        let (core, specials) = py
            .detach(|| {
                let merges = bytepair_core::formats::hf::parse_merges(merges_data)?;
                let encoder: Vec<(String, Rank)> = encoder.into_iter().collect();
                let (ranks, inferred) = bytepair_core::formats::hf::gpt2_ranks(&encoder, &merges)?;
                let mut specials: HashMap<String, Rank> = inferred.into_iter().collect();
                specials.extend(special_tokens.unwrap_or_default());
                let core = CoreEncoder::new(ranks, specials.clone(), pattern)?;
                Ok::<_, Error>((core, specials))
            })
            .map_err(to_py_err)?;
        Ok((Self::from_core(core)?, specials))
    }

    /// Whether ids come from pair merges (Hugging Face) rather than tiktoken's ranks.
    #[getter]
    fn is_pair_mode(&self) -> bool {
        self.core.is_pair_mode()
    }

    /// `names` (special tokens of this encoder) compiled for the `allowed` and `disallowed`
    /// arguments.
    fn special_set(&self, names: Vec<String>) -> PyResult<SpecialSet> {
        let enabled = self.enabled(Some(&names));
        Ok(SpecialSet {
            owner: self.id,
            matcher: self.matcher(names)?,
            enabled,
        })
    }

    /// Encode as `tokenizers` does: added tokens first (all non-special ones, and the special ones
    /// of `allowed`), then pre-tokenizer and merges. `first_pass=False` when the caller already
    /// split off the raw-text tokens and normalized the rest. `DisallowedSpecial` if `text`
    /// spells a token of `disallowed`.
    #[pyo3(signature = (text, allowed=None, disallowed=None, first_pass=true))]
    fn encode_hf<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
        first_pass: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = self.own(allowed.as_deref())?;
        let disallowed = self.own(disallowed.as_deref())?;
        let enabled = self.enabled_for(allowed);
        let ids = py.detach(|| {
            refuse(text, disallowed)?;
            let mut out = Vec::with_capacity(text.len() / 3 + 1);
            self.encode_hf_into(text, enabled, first_pass, &mut out)
                .map_err(to_py_err)?;
            PyResult::Ok(out)
        })?;
        self.id_list(py, &ids)
    }

    /// `encode_hf` of many texts on `num_threads` threads.
    #[pyo3(signature = (texts, num_threads, allowed=None, disallowed=None))]
    fn encode_hf_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        num_threads: usize,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = self.own(allowed.as_deref())?;
        let disallowed = self.own(disallowed.as_deref())?;
        let enabled = self.enabled_for(allowed);
        self.encode_texts(py, &texts, num_threads, disallowed, |t, out| {
            self.encode_hf_into(t, enabled, true, out)
                .map_err(to_py_err)
        })
    }

    /// The first pass alone: the raw-text added tokens as ids, the text between them as str.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn split_added<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyList>> {
        use bytepair_core::vocab::added::Segment;
        let allowed = self.own(allowed.as_deref())?;
        refuse(text, self.own(disallowed.as_deref())?)?;
        let list = PyList::empty(py);
        let Some(added) = self.core.added() else {
            if !text.is_empty() {
                list.append(text)?;
            }
            return Ok(list);
        };
        let mut parts: Vec<Segment<'_>> = Vec::new();
        added
            .split(text, false, self.enabled_for(allowed), |s| {
                parts.push(s);
                Ok(())
            })
            .map_err(to_py_err)?;
        for part in parts {
            match part {
                Segment::Text(t) => list.append(t)?,
                Segment::Token(id) => list.append(id)?,
            }
        }
        Ok(list)
    }

    /// The vocabulary in the `.tiktoken` format (ids are ranks). For a pair-merge encoder this is
    /// allowed only when tiktoken's rule gives the same ids on every text (`ValueError` says why
    /// not otherwise).
    fn to_tiktoken<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let data = py
            .detach(|| {
                self.core
                    .as_pair()
                    .map_or(Ok(()), bytepair_core::build::rank_equivalence)?;
                let ranks: Vec<(Vec<u8>, Rank)> = self
                    .core
                    .ranks()
                    .iter()
                    .map(|(t, r)| (t.clone(), *r))
                    .collect();
                Ok::<_, String>(bytepair_core::formats::tiktoken::write(&ranks))
            })
            .map_err(|why| {
                PyValueError::new_err(format!("cannot be written as tiktoken ranks: {why}"))
            })?;
        Ok(PyBytes::new(py, &data))
    }

    /// Why tiktoken's rank rule (ids as ranks) would give different ids, or None if it would not.
    fn rank_equivalence(&self, py: Python<'_>) -> Option<String> {
        py.detach(|| {
            self.core
                .as_pair()
                .and_then(|p| bytepair_core::build::rank_equivalence(p).err())
        })
    }

    /// For each ordinary token of two bytes or more, in id order: the merge that makes it under
    /// tiktoken's rule, or None.
    fn derive_merges<'py>(&self, py: Python<'py>) -> Vec<formats::DerivedMerge<'py>> {
        let derived = py.detach(|| bytepair_core::build::derive_merges(self.core.ranks()));
        derived
            .into_iter()
            .map(|(id, split)| {
                (
                    id,
                    split.map(|(l, r)| (PyBytes::new(py, &l), PyBytes::new(py, &r))),
                )
            })
            .collect()
    }

    /// In pair mode, the merges as `(left, right, result)` ids in priority order.
    fn pair_merges(&self) -> Option<Vec<(Rank, Rank, Rank)>> {
        self.core.pair_model().map(|m| m.merges())
    }

    /// In pair mode, the model vocabulary: `(id, bytes, written in the GPT-2 byte alphabet)`.
    fn pair_vocab<'py>(&self, py: Python<'py>) -> Option<Vec<(Rank, Bound<'py, PyBytes>, bool)>> {
        let vocab = self.core.pair_vocab()?;
        Some(
            vocab
                .iter()
                .filter_map(|&(id, alphabet)| {
                    self.core
                        .token_bytes(id)
                        .map(|b| (id, PyBytes::new(py, b), alphabet))
                })
                .collect(),
        )
    }

    /// The ordinary tokens as a dict of bytes to rank.
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (token, rank) in self.core.ranks() {
            dict.set_item(PyBytes::new(py, token), rank)?;
        }
        Ok(dict)
    }

    /// The pattern's scanner name, or None when the general regex engine is used.
    #[getter]
    fn scanner(&self) -> Option<String> {
        self.core.scanner().map(|s| format!("{s:?}").to_lowercase())
    }

    #[getter]
    fn id_bound(&self) -> usize {
        self.core.id_bound()
    }

    /// `Encoding.encode_ordinary`, lone surrogates included: the Python method is this one,
    /// with nothing around it (a Python frame cost 1-7% of the call on English paragraphs).
    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        let repaired;
        let text = match text.to_str() {
            Ok(text) => text,
            // Lone surrogates have no UTF-8 form. As tiktoken does: pair up what can be
            // paired, replace the rest with U+FFFD.
            Err(_) => {
                repaired = text
                    .call_method1("encode", ("utf-16", "surrogatepass"))?
                    .call_method1("decode", ("utf-16", "replace"))?
                    .cast_into::<PyString>()?;
                repaired.to_str()?
            }
        };
        with_id_buffer(|ids| {
            py.detach(|| self.core.encode_ordinary_into(text, ids))
                .map_err(to_py_err)?;
            self.id_list(py, ids)
        })
    }

    /// Encode, turning the special tokens of `allowed` (`None`: none) into their ids.
    /// `DisallowedSpecial` if `text` spells a token of `disallowed`.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = self.own(allowed.as_deref())?;
        let disallowed = self.own(disallowed.as_deref())?;
        self.with_encoded(py, text, allowed, disallowed, |ids| self.id_list(py, ids))
    }

    /// `encode`, the ids as a new numpy `uint32` array. Made here, with numpy's C API: the ids
    /// as bytes for `numpy.frombuffer` cost about 0.6 us more per call than a list (0.3 us of it
    /// `frombuffer`), more than encoding a sentence.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn encode_to_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        numpy_importable(py)?;
        let allowed = self.own(allowed.as_deref())?;
        let disallowed = self.own(disallowed.as_deref())?;
        self.with_encoded(py, text, allowed, disallowed, |ids| {
            Ok(PyArray1::from_slice(py, ids))
        })
    }

    fn count_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<usize> {
        py.detach(|| self.core.count_ordinary(text))
            .map_err(to_py_err)
    }

    /// The number of ids `encode` would return, without building them.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn count(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<usize> {
        let allowed = self.own(allowed.as_deref())?;
        let disallowed = self.own(disallowed.as_deref())?;
        py.detach(|| self.count_one(text, allowed, disallowed))
    }

    fn encode_ordinary_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.encode_texts(py, &texts, num_threads, None, |t, out| {
            self.core.encode_ordinary_into(t, out).map_err(to_py_err)
        })
    }

    /// `encode` of many texts on `num_threads` threads.
    #[pyo3(signature = (texts, num_threads, allowed=None, disallowed=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        num_threads: usize,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let allowed = self.own(allowed.as_deref())?;
        let disallowed = self.own(disallowed.as_deref())?;
        self.encode_texts(py, &texts, num_threads, disallowed, |t, out| {
            self.encode_one_into(t, allowed, None, out)
        })
    }

    /// `count` of many texts on `num_threads` threads.
    #[pyo3(signature = (texts, num_threads, allowed=None, disallowed=None))]
    fn count_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        num_threads: usize,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Vec<usize>> {
        let allowed = self.own(allowed.as_deref())?;
        let disallowed = self.own(disallowed.as_deref())?;
        let texts = batch_texts(&texts)?;
        let chunks = batch_chunks(texts.len(), num_threads);
        // Each text is checked, then counted; the error is that of the first text, in order,
        // that has one.
        let counted = py
            .detach(|| {
                on_threads(num_threads, &chunks, |range| {
                    texts[range]
                        .iter()
                        .map(|t| t.with_utf8(|t| self.count_one(t, allowed, disallowed))?)
                        .collect::<PyResult<Vec<usize>>>()
                })
            })
            .map_err(to_py_err)?;
        first_error(counted)
    }

    /// The first special token of `names` in `text`: (byte start, byte end, token) or None.
    fn find_special(
        &self,
        text: &str,
        names: Vec<String>,
    ) -> PyResult<Option<(usize, usize, String)>> {
        let m = self.matcher(names)?;
        Ok(m.find(text, 0)
            .and_then(|(s, e, _)| text.get(s..e).map(|t| (s, e, t.to_owned()))))
    }

    fn encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .detach(|| self.core.encode_bytes(data))
            .map_err(to_py_err)?;
        self.id_list(py, &ids)
    }

    fn encode_single_token(&self, token: &[u8]) -> PyResult<Rank> {
        self.core.encode_single_token(token).ok_or_else(|| {
            PyKeyError::new_err(format!(
                "{:?} is not a single token of this encoding",
                String::from_utf8_lossy(token)
            ))
        })
    }

    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<i64>) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_from_py(ids)?;
        let bytes = py
            .detach(|| self.core.decode_bytes(&ids))
            .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    fn decode_single_token_bytes<'py>(
        &self,
        py: Python<'py>,
        id: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let id = ids_from_py(vec![id])?[0];
        let bytes = self
            .core
            .token_bytes(id)
            .ok_or_else(|| to_py_err(Error::UnknownId(u64::from(id))))?;
        Ok(PyBytes::new(py, bytes))
    }

    /// The bytes of each id in order (decode_tokens_bytes).
    fn decode_tokens_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<i64>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        ids_from_py(ids)?
            .into_iter()
            .map(|id| {
                self.core
                    .token_bytes(id)
                    .map(|b| PyBytes::new(py, b))
                    .ok_or_else(|| to_py_err(Error::UnknownId(u64::from(id))))
            })
            .collect()
    }

    /// Every ordinary token's bytes, sorted bytewise (as tiktoken returns them).
    fn token_byte_values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let mut tokens: Vec<&Vec<u8>> = self.core.ranks().keys().collect();
        tokens.sort_unstable();
        tokens.into_iter().map(|t| PyBytes::new(py, t)).collect()
    }
}

/// Parse a `.tiktoken` file's contents into a dict of token bytes to rank.
#[pyfunction]
fn parse_tiktoken<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let ranks = py
        .detach(|| bytepair_core::formats::tiktoken::parse(data))
        .map_err(to_py_err)?;
    let dict = PyDict::new(py);
    for (token, rank) in ranks {
        dict.set_item(PyBytes::new(py, &token), rank)?;
    }
    Ok(dict)
}

/// The GPT-2 byte map as rebuilt by the Rust core: the character of each byte 0..=255.
#[pyfunction]
fn byte_map_table() -> Vec<String> {
    bytepair_core::bytes::byte_map::bytes_to_unicode()
        .iter()
        .map(|c| c.to_string())
        .collect()
}

/// Split `text` with `pattern` (scanner when recognised, unless `use_regex`).
#[pyfunction]
#[pyo3(signature = (pattern, text, use_regex=false))]
fn split(py: Python<'_>, pattern: &str, text: &str, use_regex: bool) -> PyResult<Vec<String>> {
    let p = if use_regex {
        Pretokenizer::with_regex(pattern)
    } else {
        Pretokenizer::new(pattern)
    }
    .map_err(to_py_err)?;
    let pieces = py.detach(|| {
        p.pieces(text)
            .map(|v| v.into_iter().map(str::to_owned).collect::<Vec<_>>())
    });
    pieces.map_err(to_py_err)
}

/// The name of the scanner that handles `pattern`, or None for the general regex engine.
#[pyfunction]
fn scanner_for(pattern: &str) -> PyResult<Option<String>> {
    let p = Pretokenizer::new(pattern).map_err(to_py_err)?;
    Ok(p.scanner().map(|s| format!("{s:?}").to_lowercase()))
}

/// The default-argument calls of one `Encoding`: its `encode` and `count` are these methods
/// (bound, so called without building an argument tuple). With one text and no keyword
/// arguments they check the text against the default disallowed set and encode or count it
/// in one call, with no Python frame; anything else goes to the Python method (bound to the
/// encoding): keyword arguments, a text with lone surrogates or of another type, or one that
/// spells a disallowed special token (so that the error is the one the method words).
#[pyclass(module = "bytepair._core")]
struct DefaultCalls {
    core: Py<CoreEncoding>,
    allowed: Option<Py<SpecialSet>>,
    disallowed: Option<Py<SpecialSet>>,
    /// `Encoding.encode` and `Encoding.count` bound to the encoding (a cycle through its
    /// `__dict__`, which the collector breaks: both become `None`).
    encode_method: Option<Py<PyAny>>,
    count_method: Option<Py<PyAny>>,
}

impl DefaultCalls {
    /// The default call's answer, or `None` if it must go to the Python method.
    fn fast<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
        count: bool,
    ) -> PyResult<Option<Py<PyAny>>> {
        if !args.is_empty() || kwargs.is_some_and(|k| !k.is_empty()) {
            return Ok(None);
        }
        let Some(plain) = text.cast::<PyString>().ok().and_then(|t| t.to_str().ok()) else {
            return Ok(None);
        };
        let core = self.core.get();
        let allowed = self.allowed.as_ref().map(Py::get);
        let disallowed = self.disallowed.as_ref().map(Py::get);
        let done = if count {
            py.detach(|| core.count_one(plain, allowed, disallowed))
                .map(|n| {
                    n.into_pyobject(py)
                        .map_or_else(|e| match e {}, |n| n.into_any().unbind())
                })
        } else {
            core.with_encoded(py, plain, allowed, disallowed, |ids| {
                core.id_list(py, ids).map(|list| list.into_any().unbind())
            })
        };
        match done {
            Err(e) if e.is_instance_of::<DisallowedSpecial>(py) => Ok(None),
            done => done.map(Some),
        }
    }

    /// `encode` or `count` of `text`: the default call in one step, or the Python method.
    fn call<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
        count: bool,
    ) -> PyResult<Py<PyAny>> {
        if let Some(done) = self.fast(py, text, args, kwargs, count)? {
            return Ok(done);
        }
        let method = if count {
            &self.count_method
        } else {
            &self.encode_method
        };
        let method = method
            .as_ref()
            .ok_or_else(|| PyValueError::new_err("this method's encoding is being collected"))?;
        let all: Vec<Bound<'py, PyAny>> =
            std::iter::once(text.clone()).chain(args.iter()).collect();
        method.call(py, PyTuple::new(py, all)?, kwargs)
    }
}

#[pymethods]
impl DefaultCalls {
    #[new]
    #[pyo3(signature = (core, allowed, disallowed, encode_method, count_method))]
    fn new(
        core: Py<CoreEncoding>,
        allowed: Option<Py<SpecialSet>>,
        disallowed: Option<Py<SpecialSet>>,
        encode_method: Py<PyAny>,
        count_method: Py<PyAny>,
    ) -> PyResult<Self> {
        let encoder = core.get();
        for set in [&allowed, &disallowed].into_iter().flatten() {
            encoder.own(Some(set.get()))?;
        }
        Ok(Self {
            core,
            allowed,
            disallowed,
            encode_method: Some(encode_method),
            count_method: Some(count_method),
        })
    }

    /// `Encoding.encode` (see its documentation), compiled for the default arguments.
    #[pyo3(signature = (text, *args, **kwargs))]
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        self.call(py, text, args, kwargs, false)
    }

    /// `Encoding.count` (see its documentation), compiled for the default arguments.
    #[pyo3(signature = (text, *args, **kwargs))]
    fn count<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        self.call(py, text, args, kwargs, true)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.core)?;
        for set in [&self.allowed, &self.disallowed].into_iter().flatten() {
            visit.call(set)?;
        }
        for method in [&self.encode_method, &self.count_method]
            .into_iter()
            .flatten()
        {
            visit.call(method)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.encode_method = None;
        self.count_method = None;
    }
}

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreEncoding>()?;
    m.add_class::<SpecialSet>()?;
    m.add_class::<DefaultCalls>()?;
    m.add("DisallowedSpecial", m.py().get_type::<DisallowedSpecial>())?;
    m.add_class::<train::PieceCounter>()?;
    m.add_function(wrap_pyfunction!(byte_map_table, m)?)?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(parse_tiktoken, m)?)?;
    m.add_function(wrap_pyfunction!(scanner_for, m)?)?;
    m.add_function(wrap_pyfunction!(formats::pipeline_split, m)?)?;
    Ok(())
}
