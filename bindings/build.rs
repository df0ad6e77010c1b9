//! Tells the compiler which Python the extension is built for (`PyPy`, `Py_LIMITED_API`, ...),
//! so that code reading CPython's string storage (`src/texts.rs`) is left out where that storage
//! cannot be read.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
