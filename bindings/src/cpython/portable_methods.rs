//! Compiled methods for subclasses with PyO3's public API only: they inherit them as they are.

use pyo3::prelude::*;
use pyo3::types::PyType;

/// Nothing to do: a subclass's instances call the base class's methods.
pub fn rebind_methods(
    _subclass: &Bound<'_, PyType>,
    _base: &Bound<'_, PyType>,
    _names: &[&str],
) -> PyResult<()> {
    Ok(())
}
