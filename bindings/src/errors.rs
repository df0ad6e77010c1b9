//! The exception the bindings define, and core errors as Python exceptions.

use bytepair_core::{Error, Rank};
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    bytepair._core,
    DisallowedSpecial,
    PyValueError,
    "Text spells a special token that the call disallowed; the argument is the token. \
     bytepair.Encoding turns it into the message that says how to allow it."
);

/// A core error as the Python exception that fits it.
pub fn to_py_err(e: Error) -> PyErr {
    match e {
        Error::UnknownId(_) | Error::UnknownToken(_) => PyKeyError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Ids from Python ints, with a message naming the first one that cannot be a token id.
pub fn ids_from_py(ids: Vec<i64>) -> PyResult<Vec<Rank>> {
    ids.into_iter().map(id_from_py).collect()
}

/// One id from a Python int (see [`ids_from_py`]).
pub fn id_from_py(id: i64) -> PyResult<Rank> {
    Rank::try_from(id)
        .map_err(|_| PyKeyError::new_err(format!("token id {id} is not in the vocabulary")))
}

/// The error for an id that is no token.
pub fn unknown_id(id: Rank) -> PyErr {
    to_py_err(Error::UnknownId(u64::from(id)))
}
