//! A batch's texts with PyO3's public API only.

use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::texts::BatchText;

/// `s` as UTF-8, converted by CPython on the calling thread, as for any `&str` argument.
pub fn str_storage<'a>(s: &'a Bound<'_, PyString>) -> PyResult<BatchText<'a>> {
    Ok(BatchText::Utf8(s.to_str()?))
}
