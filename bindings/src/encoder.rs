//! `Encoder`: the base class of every model's compiled encoder, with the methods all models
//! share (encoding with special-token sets, batches, decoding, the vocabulary).

use std::sync::Arc;

use bytepair_core::Rank;
use numpy::PyArray1;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use crate::errors::{id_from_py, ids_from_py, to_py_err, unknown_id};
use crate::formats::DerivedMerge;
use crate::model::EncoderCalls;
use crate::special_set::{SpecialSet, made_by};

/// A compiled encoder. Made by a model's class (`RankEncoder`, `PairEncoder`), never directly.
#[pyclass(frozen, subclass, module = "bytepair._core")]
pub struct Encoder {
    pub calls: Arc<dyn EncoderCalls>,
}

impl Encoder {
    /// `set` if this encoder made it.
    fn checked<'a>(
        &self,
        set: Option<&'a PyRef<'_, SpecialSet>>,
    ) -> PyResult<Option<&'a SpecialSet>> {
        made_by(set.map(|s| &**s), self.calls.id(), self.calls.class())
    }
}

#[pymethods]
impl Encoder {
    /// `names` (special tokens of this encoder) compiled for the `allowed` and `disallowed`
    /// arguments.
    fn special_set(&self, names: Vec<String>) -> PyResult<SpecialSet> {
        self.calls.special_set(names)
    }

    /// The first special token of `names` in `text`: (byte start, byte end, token) or None.
    fn find_special(
        &self,
        text: &str,
        names: Vec<String>,
    ) -> PyResult<Option<(usize, usize, String)>> {
        self.calls.find_special(text, names)
    }

    /// Encode with no special token allowed, lone surrogates repaired as tiktoken does.
    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.calls.encode_ordinary(py, text)
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
        let (allowed, disallowed) = (
            self.checked(allowed.as_ref())?,
            self.checked(disallowed.as_ref())?,
        );
        self.calls.encode(py, text, allowed, disallowed)
    }

    /// `encode`, the ids as a new numpy `uint32` array, made with numpy's C API.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn encode_to_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        let (allowed, disallowed) = (
            self.checked(allowed.as_ref())?,
            self.checked(disallowed.as_ref())?,
        );
        self.calls.encode_to_numpy(py, text, allowed, disallowed)
    }

    /// The number of ids `encode_ordinary` would return, without building them.
    fn count_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<usize> {
        self.calls.count_ordinary(py, text)
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
        let (allowed, disallowed) = (
            self.checked(allowed.as_ref())?,
            self.checked(disallowed.as_ref())?,
        );
        self.calls.count(py, text, allowed, disallowed)
    }

    /// `encode_ordinary` of many texts on `num_threads` threads.
    fn encode_ordinary_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Bound<'py, PyString>>,
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.calls.encode_ordinary_batch(py, &texts, num_threads)
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
        let (allowed, disallowed) = (
            self.checked(allowed.as_ref())?,
            self.checked(disallowed.as_ref())?,
        );
        self.calls
            .encode_batch(py, &texts, num_threads, allowed, disallowed)
    }

    /// `count` of many texts on `num_threads` threads.
    #[pyo3(signature = (texts, num_threads, allowed=None, disallowed=None))]
    fn count_batch(
        &self,
        py: Python<'_>,
        texts: Vec<Bound<'_, PyString>>,
        num_threads: usize,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Vec<usize>> {
        let (allowed, disallowed) = (
            self.checked(allowed.as_ref())?,
            self.checked(disallowed.as_ref())?,
        );
        self.calls
            .count_batch(py, &texts, num_threads, allowed, disallowed)
    }

    /// The ids of `data` as bytes (no pre-tokenizer: one piece).
    fn encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        self.calls.encode_bytes(py, data)
    }

    /// The id of the token whose bytes are `token`.
    fn encode_single_token(&self, token: &[u8]) -> PyResult<Rank> {
        self.calls
            .vocabulary()
            .encode_single_token(token)
            .ok_or_else(|| {
                PyKeyError::new_err(format!(
                    "{:?} is not a single token of this encoding",
                    String::from_utf8_lossy(token)
                ))
            })
    }

    /// The bytes of `ids`.
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<i64>) -> PyResult<Bound<'py, PyBytes>> {
        let ids = ids_from_py(ids)?;
        let bytes = py
            .detach(|| self.calls.vocabulary().decode_bytes(&ids))
            .map_err(to_py_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// The bytes of one id.
    fn decode_single_token_bytes<'py>(
        &self,
        py: Python<'py>,
        id: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let id = id_from_py(id)?;
        let bytes = self
            .calls
            .vocabulary()
            .token_bytes(id)
            .ok_or_else(|| unknown_id(id))?;
        Ok(PyBytes::new(py, bytes))
    }

    /// The bytes of each id in order (decode_tokens_bytes).
    fn decode_tokens_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<i64>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let vocabulary = self.calls.vocabulary();
        ids_from_py(ids)?
            .into_iter()
            .map(|id| {
                vocabulary
                    .token_bytes(id)
                    .map(|b| PyBytes::new(py, b))
                    .ok_or_else(|| unknown_id(id))
            })
            .collect()
    }

    /// Every ordinary token's bytes, sorted bytewise (as tiktoken returns them).
    fn token_byte_values<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        let mut tokens: Vec<&Vec<u8>> = self.calls.vocabulary().ranks().keys().collect();
        tokens.sort_unstable();
        tokens.into_iter().map(|t| PyBytes::new(py, t)).collect()
    }

    /// The ordinary tokens as a dict of bytes to rank.
    fn mergeable_ranks<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (token, rank) in self.calls.vocabulary().ranks() {
            dict.set_item(PyBytes::new(py, token), rank)?;
        }
        Ok(dict)
    }

    /// The pattern's scanner name, or None when the general regex engine is used.
    #[getter]
    fn scanner(&self) -> Option<String> {
        self.calls
            .vocabulary()
            .scanner()
            .map(|s| format!("{s:?}").to_lowercase())
    }

    /// One more than the highest id.
    #[getter]
    fn id_bound(&self) -> usize {
        self.calls.vocabulary().id_bound()
    }

    /// Why tiktoken's rank rule (ids as ranks) would give different ids, or None if it would not.
    fn rank_equivalence(&self, py: Python<'_>) -> Option<String> {
        py.detach(|| self.calls.rank_equivalence().err())
    }

    /// The vocabulary in the `.tiktoken` format (ids are ranks): allowed only when tiktoken's
    /// rule gives the same ids on every text (`ValueError` says why not otherwise).
    fn to_tiktoken<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let data = py
            .detach(|| {
                self.calls.rank_equivalence()?;
                let ranks: Vec<(Vec<u8>, Rank)> = self
                    .calls
                    .vocabulary()
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

    /// For each ordinary token of two bytes or more, in id order: the merge that makes it under
    /// tiktoken's rule, or None.
    fn derive_merges<'py>(&self, py: Python<'py>) -> Vec<DerivedMerge<'py>> {
        let ranks = self.calls.vocabulary().ranks();
        let derived = py.detach(|| bytepair_core::build::derive_merges(ranks));
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
}
