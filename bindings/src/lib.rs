//! The PyO3 layer: converts arguments, releases the GIL, maps core errors to exceptions.
//! All policy (special-token rules, messages that tell users what to do, file formats) lives in
//! the Python package; this file only moves data across.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytepair_core::encoder::SpecialMatcher;
use bytepair_core::{CoreEncoder, Error, Pretokenizer, Rank};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

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

fn run_in_pool<T: Send>(num_threads: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(num_threads.max(1))
        .build()
        .map_err(|e| PyValueError::new_err(format!("cannot start {num_threads} threads: {e}")))?;
    Ok(pool.install(f))
}

/// The compiled encoder behind `bytepair.Encoding`.
#[pyclass(frozen, module = "bytepair._core")]
struct CoreEncoding {
    core: CoreEncoder,
    all_specials: Arc<SpecialMatcher>,
    /// Matchers for other `allowed_special` sets, built on first use.
    matchers: Mutex<HashMap<Vec<String>, Arc<SpecialMatcher>>>,
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
        })
    }

    fn matcher(&self, allowed: Option<Vec<String>>) -> PyResult<Arc<SpecialMatcher>> {
        let Some(mut names) = allowed else {
            return Ok(Arc::clone(&self.all_specials));
        };
        names.sort_unstable();
        names.dedup();
        let mut cache = self.matchers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = cache.get(&names) {
            return Ok(Arc::clone(m));
        }
        let m = Arc::new(
            self.core
                .special_matcher(names.iter().map(String::as_str))
                .map_err(to_py_err)?,
        );
        if cache.len() < 64 {
            cache.insert(names, Arc::clone(&m));
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
        self.core
            .pretokenizer()
            .scanner()
            .map(|s| format!("{s:?}").to_lowercase())
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
    Ok(())
}
