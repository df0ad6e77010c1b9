//! The module's free functions: tiktoken files, the GPT-2 byte map, pre-tokenizer patterns.

use bytepair_core::Pretokenizer;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::to_py_err;

/// Parse a `.tiktoken` file's contents into a dict of token bytes to rank.
#[pyfunction]
pub fn parse_tiktoken<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
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
pub fn byte_map_table() -> Vec<String> {
    bytepair_core::bytes::byte_map::bytes_to_unicode()
        .iter()
        .map(|c| c.to_string())
        .collect()
}

/// Split `text` with `pattern` (scanner when recognised, unless `use_regex`).
#[pyfunction]
#[pyo3(signature = (pattern, text, use_regex=false))]
pub fn split(py: Python<'_>, pattern: &str, text: &str, use_regex: bool) -> PyResult<Vec<String>> {
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
pub fn scanner_for(pattern: &str) -> PyResult<Option<String>> {
    let p = Pretokenizer::new(pattern).map_err(to_py_err)?;
    Ok(p.scanner().map(|s| format!("{s:?}").to_lowercase()))
}

/// The well-known patterns by name (`_core.NAMED_PATTERNS`).
pub fn named_patterns(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let named = PyDict::new(py);
    for (name, pattern) in bytepair_core::pretokenize::patterns::NAMED {
        named.set_item(name, pattern)?;
    }
    Ok(named)
}
