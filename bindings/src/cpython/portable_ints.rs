//! Lists of ids with PyO3's public API only: an int made per id.

use bytepair_core::Rank;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Makes the lists of ids of one encoder.
pub struct IdLists;

impl IdLists {
    pub const fn new() -> Self {
        IdLists
    }

    /// `ids` as a Python list of ints.
    pub fn list<'py>(
        &self,
        py: Python<'py>,
        ids: &[Rank],
        _id_bound: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, ids)
    }
}
