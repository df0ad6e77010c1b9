//! Compiled methods re-made for each subclass that inherits them.
//!
//! CPython's specialised call of a method descriptor (`CALL` on a method of a C type) applies
//! only when the instance's type is exactly the descriptor's class; an instance of a subclass
//! takes the generic call, which checks the type again. So that `Encoding`'s own instances get
//! the specialised call, its compiled methods are made again as descriptors of `Encoding`: the
//! same C function, bound to the subclass. The descriptor of a Python class also says that the
//! method is documented there (`__objclass__`, `__qualname__`), so that doctest finds its
//! examples in the module that defines the class.

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Give `subclass` its own descriptors of `base`'s compiled methods `names`, where it inherits
/// them unchanged (a method that it or a class between them overrides stays as it is).
#[allow(unsafe_code)]
pub fn rebind_methods(
    subclass: &Bound<'_, PyType>,
    base: &Bound<'_, PyType>,
    names: &[&str],
) -> PyResult<()> {
    let py = subclass.py();
    for &name in names {
        let compiled = base.getattr(name)?;
        let inherited = subclass.getattr(name)?;
        let (Some(compiled_def), Some(inherited_def)) =
            (method_def(&compiled), method_def(&inherited))
        else {
            continue;
        };
        if compiled_def != inherited_def {
            continue;
        }
        // SAFETY: `compiled_def` is the `PyMethodDef` of a method of `base`, a class of this
        // extension module, which is static (PyO3 keeps it for as long as the module is loaded,
        // that is, for the life of the process). `subclass` is a live type object; the new
        // descriptor (or null with an exception set) is a new reference.
        let descriptor = unsafe {
            Bound::from_owned_ptr_or_err(
                py,
                ffi::PyDescr_NewMethod(subclass.as_type_ptr(), compiled_def),
            )?
        };
        subclass.setattr(name, descriptor)?;
    }
    Ok(())
}

/// The `PyMethodDef` of a method descriptor (`None` for anything else).
#[allow(unsafe_code)]
fn method_def(object: &Bound<'_, PyAny>) -> Option<*mut ffi::PyMethodDef> {
    // SAFETY: comparing the type pointer of a live object reads only its header; an object of
    // exactly `PyMethodDescr_Type` has that type's layout, `PyMethodDescrObject`, whose
    // `d_method` is set when it is made and never changes.
    unsafe {
        let is_method = std::ptr::eq(
            ffi::Py_TYPE(object.as_ptr()),
            &raw const ffi::PyMethodDescr_Type,
        );
        is_method.then(|| (*object.as_ptr().cast::<ffi::PyMethodDescrObject>()).d_method)
    }
}
