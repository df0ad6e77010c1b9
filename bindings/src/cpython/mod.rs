//! The places where the bindings rely on how CPython lays out its objects, each with a portable
//! path beside it that uses only PyO3's public API.
//!
//! - [`IdLists`] makes the lists of ids that calls return. The CPython path (`ints.rs`) hands out
//!   one shared int per id from an array laid out by id; the portable path (`portable_ints.rs`)
//!   makes an int per id, as tiktoken does.
//! - [`str_storage`] reads a `str`'s characters for a batch. The CPython path (`strings.rs`)
//!   borrows the string's own storage, so that the worker threads convert it to UTF-8; the
//!   portable path (`portable_strings.rs`) asks CPython for the UTF-8 on the calling thread.
//! - [`rebind_methods`] makes `EncodingBase`'s compiled methods again for each subclass, so that
//!   CPython's specialised call of a C method applies to its instances (`methods.rs`); the
//!   portable path (`portable_methods.rs`) leaves the subclasses to inherit them.
//!
//! The Cargo feature `cpython-internals` (on by default) selects each CPython path where the
//! interpreter allows it (the `cfg`s below); `--no-default-features` builds the portable paths.

#[cfg(all(
    feature = "cpython-internals",
    not(any(
        PyPy,
        GraalPy,
        RustPython,
        Py_GIL_DISABLED,
        Py_LIMITED_API,
        py_sys_config = "Py_TRACE_REFS"
    ))
))]
#[path = "ints.rs"]
mod id_lists;
#[cfg(not(all(
    feature = "cpython-internals",
    not(any(
        PyPy,
        GraalPy,
        RustPython,
        Py_GIL_DISABLED,
        Py_LIMITED_API,
        py_sys_config = "Py_TRACE_REFS"
    ))
)))]
#[path = "portable_ints.rs"]
mod id_lists;

#[cfg(all(
    feature = "cpython-internals",
    not(any(PyPy, GraalPy, RustPython, Py_LIMITED_API)),
    target_endian = "little"
))]
#[path = "strings.rs"]
mod str_storage;
#[cfg(not(all(
    feature = "cpython-internals",
    not(any(PyPy, GraalPy, RustPython, Py_LIMITED_API)),
    target_endian = "little"
)))]
#[path = "portable_strings.rs"]
mod str_storage;

#[cfg(all(
    feature = "cpython-internals",
    not(any(PyPy, GraalPy, RustPython, Py_LIMITED_API))
))]
#[path = "methods.rs"]
mod subclass_methods;
#[cfg(not(all(
    feature = "cpython-internals",
    not(any(PyPy, GraalPy, RustPython, Py_LIMITED_API))
)))]
#[path = "portable_methods.rs"]
mod subclass_methods;

pub use id_lists::IdLists;
pub use str_storage::str_storage;
pub use subclass_methods::rebind_methods;
