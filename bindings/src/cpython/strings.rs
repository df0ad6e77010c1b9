//! A `str`'s characters as CPython stores them, borrowed for the threads of a batch.
//!
//! Asking CPython for a `str`'s UTF-8 (what `&str` arguments do) converts a non-ASCII string on
//! the calling thread, which holds the interpreter, and keeps the copy inside the string for as
//! long as it lives; in a batch that conversion was done by one thread while the others waited.
//! Here a batch borrows each string's own storage (one, two or four bytes per character; ASCII
//! is already UTF-8), and the thread that encodes a text converts it ([`BatchText`]).

use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::types::string::PyStringData;

use crate::texts::BatchText;

/// The characters of `s` as CPython stores them.
#[allow(unsafe_code)]
pub fn str_storage<'a>(s: &'a Bound<'_, PyString>) -> PyResult<BatchText<'a>> {
    // SAFETY: `data` reads the string's kind from a C bit field, which PyO3 decodes for
    // little-endian targets (tested by PyO3 on x86_64; the test suite here checks every kind).
    // The slices borrow `s`, which the caller keeps alive for the whole call; a `str`'s
    // characters never change once it exists, so other threads may read them while this one
    // has released the interpreter.
    Ok(match unsafe { s.data() }? {
        PyStringData::Ucs1(b) => BatchText::Bytes(b),
        PyStringData::Ucs2(u) => BatchText::Ucs2(u),
        PyStringData::Ucs4(u) => BatchText::Ucs4(u),
    })
}
