//! `ModelTables`: a `tokenizer.json`'s vocabulary and merges held in Rust, read by
//! `split_model_tables` (see `bytepair_core::formats::hf_tables`). Python looks tokens up in
//! it as in a read-only mapping and hands it to `PairEncoder` instead of a dict.

use std::sync::Arc;

use bytepair_core::Rank;
use bytepair_core::formats::hf_tables::{self, ModelTables as CoreTables};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// The tables and, for lookups, the vocabulary's indices in token order.
pub struct Tables {
    pub core: CoreTables,
    sorted: Vec<u32>,
}

impl Tables {
    fn id_of(&self, token: &str) -> Option<Rank> {
        let vocab = &self.core.vocab;
        self.sorted
            .binary_search_by(|&i| vocab[i as usize].0.as_str().cmp(token))
            .ok()
            .map(|at| vocab[self.sorted[at] as usize].1)
    }
}

/// `model.vocab` (as a read-only mapping of token -> id) and `model.merges` of a
/// `tokenizer.json`.
#[pyclass(frozen, module = "bytepair._core")]
pub struct ModelTables {
    pub tables: Arc<Tables>,
}

#[pymethods]
impl ModelTables {
    fn __len__(&self) -> usize {
        self.tables.core.vocab.len()
    }

    fn __contains__(&self, token: &Bound<'_, PyAny>) -> bool {
        token
            .extract::<&str>()
            .is_ok_and(|t| self.tables.id_of(t).is_some())
    }

    fn __getitem__(&self, token: &str) -> PyResult<Rank> {
        self.tables
            .id_of(token)
            .ok_or_else(|| PyKeyError::new_err(token.to_owned()))
    }

    #[pyo3(signature = (token, default=None))]
    fn get(&self, token: &Bound<'_, PyAny>, default: Option<Py<PyAny>>) -> Option<Py<PyAny>> {
        let py = token.py();
        let found = token
            .extract::<&str>()
            .ok()
            .and_then(|t| self.tables.id_of(t));
        match found {
            Some(id) => id.into_pyobject(py).ok().map(|v| v.into_any().unbind()),
            None => default,
        }
    }

    /// The tokens in file order (a list: iterating a mapping walks its keys).
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let keys: Vec<&str> = self
            .tables
            .core
            .vocab
            .iter()
            .map(|t| t.0.as_str())
            .collect();
        Ok(keys.into_pyobject(py)?.try_iter()?.into_any().unbind())
    }

    /// How many merges the file lists.
    #[getter]
    fn merge_count(&self) -> usize {
        self.tables.core.merges.merges.len()
    }
}

/// Split `model.vocab` and `model.merges` off a `tokenizer.json`'s bytes: `(rest, tables)`,
/// the document with `{}` and `[]` in their place (lines kept) and the tables; `None` when the
/// tables do not read cleanly (the caller parses the whole file to say why).
#[pyfunction]
pub fn split_model_tables<'py>(
    py: Python<'py>,
    data: &[u8],
) -> Option<(Bound<'py, PyBytes>, ModelTables)> {
    let core = py.detach(|| {
        let core = hf_tables::split_model_tables(data)?;
        let mut sorted: Vec<u32> = (0..core.vocab.len() as u32).collect();
        sorted.sort_unstable_by(|&a, &b| core.vocab[a as usize].0.cmp(&core.vocab[b as usize].0));
        Some(Tables { core, sorted })
    })?;
    let rest = PyBytes::new(py, core.core.rest.as_bytes());
    Some((
        rest,
        ModelTables {
            tables: Arc::new(core),
        },
    ))
}
