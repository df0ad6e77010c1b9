//! The PyO3 layer: converts arguments, releases the GIL, maps core errors to exceptions.
//! All policy (special-token rules, messages that tell users what to do, file formats) lives in
//! the Python package; this file only moves data across.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, TryLockError};

use bytepair_core::added::AddedVocabulary;
use bytepair_core::encoder::SpecialMatcher;
use bytepair_core::{CoreEncoder, Error, Pretokenizer, Rank};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

mod formats;
mod train;

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

/// Thread pools by size, kept so that batch calls reuse warm threads (and their piece caches).
/// Tagged with the process id: a forked child never uses its parent's (dead) threads.
static POOLS: Mutex<Vec<(u32, usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());

fn pool(num_threads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    let n = num_threads.clamp(1, 1024);
    let pid = std::process::id();
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    pools.retain(|(owner, _, _)| *owner == pid);
    if let Some((_, _, p)) = pools.iter().find(|(_, size, _)| *size == n) {
        return Ok(Arc::clone(p));
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| PyValueError::new_err(format!("cannot start {n} threads: {e}")))?;
    let p = Arc::new(p);
    if pools.len() < 8 {
        pools.push((pid, n, Arc::clone(&p)));
    }
    Ok(p)
}

fn run_in_pool<T: Send>(num_threads: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    Ok(pool(num_threads)?.install(f))
}

/// The compiled encoder behind `bytepair.Encoding`.
#[pyclass(frozen, module = "bytepair._core")]
struct CoreEncoding {
    core: CoreEncoder,
    all_specials: Arc<SpecialMatcher>,
    /// Matchers for other `allowed_special` sets, built on first use.
    matchers: Mutex<HashMap<Vec<String>, Arc<SpecialMatcher>>>,
    /// Hugging Face added tokens (encoders built from `tokenizer.json` and the like).
    added: Option<AddedVocabulary>,
}

impl CoreEncoding {
    fn from_core(core: CoreEncoder) -> PyResult<Self> {
        let all = core
            .special_matcher(core.specials().keys().map(String::as_str))
            .map_err(to_py_err)?;
        Ok(Self {
            core,
            all_specials: Arc::new(all),
            matchers: Mutex::new(HashMap::new()),
            added: None,
        })
    }

    /// Which added tokens count: all non-special ones, and the special ones in `allowed`
    /// (`None`: all of them).
    fn enabled(&self, allowed: Option<Vec<String>>) -> Vec<bool> {
        let Some(added) = &self.added else {
            return Vec::new();
        };
        match allowed {
            None => added.enabled(|_| true),
            Some(names) => {
                let names: std::collections::HashSet<String> = names.into_iter().collect();
                added.enabled(|c| names.contains(c))
            }
        }
    }

    fn encode_hf_into(
        &self,
        text: &str,
        enabled: &[bool],
        first_pass: bool,
    ) -> Result<Vec<Rank>, Error> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        match &self.added {
            Some(added) => added.encode_into(&self.core, text, enabled, first_pass, &mut out)?,
            None => self.core.encode_ordinary_into(text, &mut out)?,
        }
        Ok(out)
    }

    fn matcher(&self, allowed: Option<Vec<String>>) -> PyResult<Arc<SpecialMatcher>> {
        let Some(mut names) = allowed else {
            return Ok(Arc::clone(&self.all_specials));
        };
        names.sort_unstable();
        names.dedup();
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
        let (added, entries) = formats::added(added)?;
        let core = py
            .detach(|| {
                let merges = formats::merge_list(merges, merges_data)?;
                let vocab: Vec<(String, Rank)> = vocab.into_iter().collect();
                formats::pair_encoder(vocab, merges, ignore_merges, unknown, entries, pipeline)
            })
            .map_err(to_py_err)?;
        let mut this = Self::from_core(core)?;
        this.added = (!added.tokens().is_empty()).then_some(added);
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

    /// Encode as `tokenizers` does: added tokens first (all non-special ones, and the special ones
    /// in `allowed`; `None` allows all), then pre-tokenizer and merges. `first_pass=False` when the
    /// caller already split off the raw-text tokens and normalized the rest.
    #[pyo3(signature = (text, allowed=None, first_pass=true))]
    fn encode_hf(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<Vec<String>>,
        first_pass: bool,
    ) -> PyResult<Vec<Rank>> {
        let enabled = self.enabled(allowed);
        py.detach(|| self.encode_hf_into(text, &enabled, first_pass))
            .map_err(to_py_err)
    }

    /// `encode_hf` of many texts on `num_threads` threads.
    #[pyo3(signature = (texts, num_threads, allowed=None))]
    fn encode_hf_batch(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        num_threads: usize,
        allowed: Option<Vec<String>>,
    ) -> PyResult<Vec<Vec<Rank>>> {
        use rayon::prelude::*;
        let enabled = self.enabled(allowed);
        py.detach(|| {
            run_in_pool(num_threads, || {
                texts
                    .par_iter()
                    .map(|t| self.encode_hf_into(t, &enabled, true))
                    .collect::<Result<Vec<_>, _>>()
            })
        })?
        .map_err(to_py_err)
    }

    /// The first pass alone: the raw-text added tokens as ids, the text between them as str.
    #[pyo3(signature = (text, allowed=None))]
    fn split_added<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyList>> {
        use bytepair_core::added::Segment;
        let list = PyList::empty(py);
        let Some(added) = &self.added else {
            if !text.is_empty() {
                list.append(text)?;
            }
            return Ok(list);
        };
        let enabled = self.enabled(allowed);
        let mut parts: Vec<Segment<'_>> = Vec::new();
        added
            .split(text, false, &enabled, |s| {
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
                bytepair_core::formats::hf::rank_equivalence(&self.core)?;
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
        py.detach(|| bytepair_core::formats::hf::rank_equivalence(&self.core).err())
    }

    /// For each ordinary token of two bytes or more, in id order: the merge that makes it under
    /// tiktoken's rule, or None.
    fn derive_merges<'py>(&self, py: Python<'py>) -> Vec<formats::DerivedMerge<'py>> {
        let derived = py.detach(|| bytepair_core::formats::hf::derive_merges(self.core.ranks()));
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

    fn encode_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<Vec<Rank>> {
        py.detach(|| self.core.encode_ordinary(text))
            .map_err(to_py_err)
    }

    /// Encode; `allowed` None means every special token is allowed.
    #[pyo3(signature = (text, allowed=None))]
    fn encode(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<Vec<String>>,
    ) -> PyResult<Vec<Rank>> {
        let m = self.matcher(allowed)?;
        py.detach(|| self.core.encode(text, &m)).map_err(to_py_err)
    }

    /// The ids as native-endian u32 bytes, for numpy.frombuffer.
    #[pyo3(signature = (text, allowed=None))]
    fn encode_to_u32_bytes<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let m = self.matcher(allowed)?;
        let ids = py
            .detach(|| self.core.encode(text, &m))
            .map_err(to_py_err)?;
        let raw: Vec<u8> = ids.iter().flat_map(|id| id.to_ne_bytes()).collect();
        Ok(PyBytes::new(py, &raw))
    }

    fn count_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<usize> {
        py.detach(|| self.core.count_ordinary(text))
            .map_err(to_py_err)
    }

    #[pyo3(signature = (text, allowed=None))]
    fn count(&self, py: Python<'_>, text: &str, allowed: Option<Vec<String>>) -> PyResult<usize> {
        let m = self.matcher(allowed)?;
        py.detach(|| self.core.count(text, &m)).map_err(to_py_err)
    }

    fn encode_ordinary_batch(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        num_threads: usize,
    ) -> PyResult<Vec<Vec<Rank>>> {
        use rayon::prelude::*;
        py.detach(|| {
            run_in_pool(num_threads, || {
                texts
                    .par_iter()
                    .map(|t| self.core.encode_ordinary(t))
                    .collect::<Result<Vec<_>, _>>()
            })
        })?
        .map_err(to_py_err)
    }

    #[pyo3(signature = (texts, num_threads, allowed=None))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        num_threads: usize,
        allowed: Option<Vec<String>>,
    ) -> PyResult<Vec<Vec<Rank>>> {
        use rayon::prelude::*;
        let m = self.matcher(allowed)?;
        py.detach(|| {
            run_in_pool(num_threads, || {
                texts
                    .par_iter()
                    .map(|t| self.core.encode(t, &m))
                    .collect::<Result<Vec<_>, _>>()
            })
        })?
        .map_err(to_py_err)
    }

    #[pyo3(signature = (texts, num_threads, allowed=None))]
    fn count_batch(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        num_threads: usize,
        allowed: Option<Vec<String>>,
    ) -> PyResult<Vec<usize>> {
        use rayon::prelude::*;
        let m = self.matcher(allowed)?;
        py.detach(|| {
            run_in_pool(num_threads, || {
                texts
                    .par_iter()
                    .map(|t| self.core.count(t, &m))
                    .collect::<Result<Vec<_>, _>>()
            })
        })?
        .map_err(to_py_err)
    }

    /// The first special token of `names` in `text`: (byte start, byte end, token) or None.
    fn find_special(
        &self,
        text: &str,
        names: Vec<String>,
    ) -> PyResult<Option<(usize, usize, String)>> {
        let m = self.matcher(Some(names))?;
        Ok(m.find(text, 0)
            .map(|(s, e, _)| (s, e, text[s..e].to_owned())))
    }

    fn encode_bytes(&self, py: Python<'_>, data: &[u8]) -> PyResult<Vec<Rank>> {
        py.detach(|| self.core.encode_bytes(data))
            .map_err(to_py_err)
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
    bytepair_core::byte_map::bytes_to_unicode()
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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<CoreEncoding>()?;
    m.add_class::<train::PieceCounter>()?;
    m.add_function(wrap_pyfunction!(byte_map_table, m)?)?;
    m.add_function(wrap_pyfunction!(split, m)?)?;
    m.add_function(wrap_pyfunction!(parse_tiktoken, m)?)?;
    m.add_function(wrap_pyfunction!(scanner_for, m)?)?;
    m.add_function(wrap_pyfunction!(formats::pipeline_split, m)?)?;
    Ok(())
}
