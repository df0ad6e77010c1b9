//! Id lists whose ints are shared: one int per id, laid out by id, made once per process.
//!
//! A list of ids holds a reference to an int per id. Making an int per id (tiktoken does) costs
//! an allocation now and a free later; sharing one int per id costs only a reference count.
//! The shared ints sit in one array, 32 bytes apart, so that an id's int is at an address
//! computed from the id: the one load left is the int itself, which can be asked for before it
//! is needed (a table of pointers by id made each int wait for its pointer's load first).
//!
//! Each int is a byte copy of an int that CPython made (`PyLong_FromLong`): `int.__sizeof__()`
//! bytes, whose only pointer is to the static `int` type. None is ever freed: before Python 3.12
//! a copy's reference count starts at 2^60, which nothing can count down to zero; from 3.12 on
//! it is the count of the small int 1, which CPython makes immortal, so that references to a copy
//! write nothing. Every copy is checked when made (exactly an `int`, of the right value); if one
//! fails, ids get a new int each, as tiktoken's do. (Where objects cannot be copied like this,
//! `cpython/mod.rs` builds the portable path instead.) Ids up to 256 are CPython's own small
//! ints, as `int(...)` gives them: their slots hold a pointer to them (a reference the array
//! keeps), so that a small id's int comes from one load of its slot instead of a call; small ids
//! are common (single bytes: punctuation, digits, hex strings).

use std::sync::OnceLock;

use bytepair_core::Rank;
use pyo3::exceptions::PyMemoryError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// Bytes between two ints of the array: at least an int of one 30-bit digit (28 bytes on 64-bit
/// CPython 3.10-3.14), and a power of two, so that no int straddles two cache lines.
const STRIDE: usize = 32;
/// Arrays are allocated for a multiple of this many ids (2 MiB, a huge page).
const GROWTH: usize = 1 << 16;
/// No array beyond this many ids (32 MiB); larger ids get new ints.
const MAX_IDS: usize = 1 << 20;
/// CPython keeps one int for each value below this; those are returned as they are.
const SMALL_INTS: usize = 257;

/// How many ids ahead [`IdLists::list`] asks for an id's int, the first ones before the list is
/// allocated: far enough ahead that the int is in cache when the list needs it, near enough
/// that it is still there (`docs/performance.md` has the distances tried).
const INT_PREFETCH_DISTANCE: usize = 64;

/// Makes the lists of ids of one encoder, from the process's shared ints once a list needs them.
pub struct IdLists {
    ints: OnceLock<&'static IdInts>,
}

impl IdLists {
    pub const fn new() -> Self {
        IdLists {
            ints: OnceLock::new(),
        }
    }

    /// `ids` as a Python list of ints; `id_bound` is one more than the encoder's highest id.
    pub fn list<'py>(
        &self,
        py: Python<'py>,
        ids: &[Rank],
        id_bound: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let ints = match self.ints.get() {
            Some(ints) => *ints,
            None => match IdInts::for_ids(py, id_bound) {
                Some(ints) => *self.ints.get_or_init(|| ints),
                None => return list_of(py, ids.len(), |i| new_int(py, ids[i])),
            },
        };
        // Fresh text uses ints that are not in cache. Their addresses need no load, so the
        // first ones are asked for before the list is allocated (all of them, for most
        // paragraphs), and each later one as far ahead.
        for &id in ids.iter().take(INT_PREFETCH_DISTANCE) {
            ints.prefetch(id);
        }
        list_of(py, ids.len(), |i| {
            if let Some(&ahead) = ids.get(i + INT_PREFETCH_DISTANCE) {
                ints.prefetch(ahead);
            }
            ints.get(py, ids[i])
        })
    }
}

/// A list of `len` items, item `i` being `item(i)`. `PyList::new` fills a list through a
/// `dyn Iterator`, a call per item that cost a returned id more than the rest of making it.
#[allow(unsafe_code)]
#[inline(always)]
fn list_of<'py>(
    py: Python<'py>,
    len: usize,
    mut item: impl FnMut(usize) -> Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let size = isize::try_from(len).map_err(|_| PyMemoryError::new_err("too many ids"))?;
    // SAFETY: `PyList_New` needs the interpreter (`py`) and returns a new reference, or null
    // with an exception set, which `from_owned_ptr_or_err` turns into the error. Its places are
    // null until set; each `i < len` is set once, handing the reference over to the list. If
    // `item` unwinds, the list is freed with places still null, which freeing allows.
    unsafe {
        let list = Bound::from_owned_ptr_or_err(py, ffi::PyList_New(size))?;
        for i in 0..len {
            ffi::PyList_SET_ITEM(list.as_ptr(), i as isize, item(i).into_ptr());
        }
        Ok(list.cast_into_unchecked())
    }
}

/// A new int for `id` (CPython's own for ids up to 256), for ids no shared int covers. Kept out
/// of line, so that the loops that make lists stay small.
#[inline(never)]
fn new_int(py: Python<'_>, id: Rank) -> Bound<'_, PyAny> {
    id.into_pyobject(py)
        .map_or_else(|e| match e {}, Bound::into_any)
}

/// Ask the CPU to bring the cache line at `address` in; a hint that never faults.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address; its only
    // requirement is SSE, which every x86_64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// The ints of the ids below `len`, at `base + id * STRIDE` (for ids from [`SMALL_INTS`] on;
/// below, a pointer to the int is there). Never freed: the ints live as long as the process,
/// whatever holds them.
struct IdInts {
    base: usize,
    len: usize,
}

impl IdInts {
    /// Ints for at least the ids below `bound` (capped at [`MAX_IDS`]), made on the first call
    /// that needs ids the process has no ints for yet; `None` where ints cannot be copied (see
    /// the module documentation), or while another thread is making them.
    fn for_ids(py: Python<'_>, bound: usize) -> Option<&'static IdInts> {
        imp::for_ids(py, bound)
    }

    /// Ask the CPU for the int of `id` ahead of its use.
    #[inline(always)]
    fn prefetch(&self, id: Rank) {
        let id = id as usize;
        if id < self.len {
            prefetch((self.base + id * STRIDE) as *const u8);
        }
    }

    /// The int of `id`, a new reference.
    #[inline(always)]
    fn get<'py>(&self, py: Python<'py>, id: Rank) -> Bound<'py, PyAny> {
        let i = id as usize;
        if i < self.len {
            imp::int_at(py, self.base + i * STRIDE, i < SMALL_INTS)
        } else {
            new_int(py, id)
        }
    }
}

#[allow(unsafe_code)]
mod imp {
    use std::sync::{Mutex, TryLockError};

    use bytepair_core::mem::huge_pages::HugePageArray;
    use pyo3::ffi;
    use pyo3::prelude::*;
    use pyo3::types::PyInt;

    use super::{GROWTH, IdInts, MAX_IDS, SMALL_INTS, STRIDE};

    /// One slot of the array: an int's bytes, aligned so that no int straddles two lines.
    #[derive(Clone, Copy)]
    #[repr(C, align(32))]
    struct Slot([u8; STRIDE]);

    /// The array ints are being added to: its memory, how many ids it has room for, and the
    /// ints made so far in it.
    struct Array {
        base: usize,
        room: usize,
        made: &'static IdInts,
    }

    /// `None` until the first array; `Some(None)` once copying failed (for good).
    static ARRAY: Mutex<Option<Option<Array>>> = Mutex::new(None);

    pub fn for_ids(py: Python<'_>, bound: usize) -> Option<&'static IdInts> {
        let want = bound.clamp(SMALL_INTS, MAX_IDS);
        // Only tried: a thread that finds it held makes new ints this once rather than wait,
        // holding the interpreter, on a thread that might need the interpreter to finish.
        let mut array = match ARRAY.try_lock() {
            Ok(array) => array,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        // More ints in the same memory if there is room: ints already handed out stay where
        // they are. Otherwise new memory; the old array's ints stay too (lists may hold them).
        let (base, room, from) = match &*array {
            Some(None) => return None,
            Some(Some(a)) if a.made.len >= want => return Some(a.made),
            Some(Some(a)) if want <= a.room => (a.base, a.room, a.made.len),
            _ => {
                let room = want.next_multiple_of(GROWTH);
                let memory = HugePageArray::filled(room, Slot([0; STRIDE]));
                let base = memory.as_ptr() as usize;
                std::mem::forget(memory);
                (base, room, 0)
            }
        };
        let made = point_to_small_ints(py, base, from)
            .and_then(|()| copy_ints(py, base, from.max(SMALL_INTS), want))
            .map(|()| &*Box::leak(Box::new(IdInts { base, len: want })));
        *array = Some(made.map(|made| Array { base, room, made }));
        made
    }

    /// A new reference to the int of the slot at `slot`: the copy there, or for a small id
    /// (`small`) the int its first word points to. Told apart by a branch: selecting between
    /// the two without one made every id's int wait for a load of its slot.
    #[inline(always)]
    pub fn int_at(py: Python<'_>, slot: usize, small: bool) -> Bound<'_, PyAny> {
        // SAFETY: `slot` is a slot that `point_to_small_ints` or `copy_ints` filled and checked:
        // its first word is a pointer to a small int (kept alive by the reference the array
        // holds) or the reference count of a copy, which is never freed (the count never
        // reaches zero); either is read as a word. The interpreter is held (`py`), as reading
        // and counting references needs.
        unsafe {
            let int = if small {
                (slot as *const *mut ffi::PyObject).read()
            } else {
                slot as *mut ffi::PyObject
            };
            ffi::Py_INCREF(int);
            Bound::from_owned_ptr(py, int)
        }
    }

    /// Point the slots of the small ids from `from` on, in the array at `base`, at CPython's
    /// small ints, each with a reference the array keeps; `None` if CPython does not return one
    /// int per small value.
    fn point_to_small_ints(py: Python<'_>, base: usize, from: usize) -> Option<()> {
        for id in from..SMALL_INTS {
            let int = id.into_pyobject(py).ok()?;
            let slot = base + id * STRIDE;
            // SAFETY: `slot` is the `STRIDE` bytes of id `id` in the array (below its room),
            // which nothing reads yet; the reference written there is never released.
            unsafe { (slot as *mut usize).write(int.clone().into_ptr() as usize) };
            if !int_at(py, slot, true).is(&int) || !id.into_pyobject(py).ok()?.is(&int) {
                return None;
            }
        }
        Some(())
    }

    /// Copy CPython's ints for the ids `from..to` into their slots of the array at `base`;
    /// `None` if one of them would not be a faithful copy.
    fn copy_ints(py: Python<'_>, base: usize, from: usize, to: usize) -> Option<()> {
        // The size to copy: that of the largest int, since sizes grow with the number of
        // digits; the smallest must have the same (all of one digit), and it must fit a slot.
        let size_of = |id: usize| -> Option<usize> {
            let int = id.into_pyobject(py).ok()?;
            int.call_method0("__sizeof__").ok()?.extract().ok()
        };
        let size = size_of(to - 1)?;
        if size > STRIDE || size < std::mem::size_of::<ffi::PyObject>() || size_of(from)? != size {
            return None;
        }
        let count = count_word(py)?;
        for id in from..to {
            let original = id.into_pyobject(py).ok()?;
            let slot = base + id * STRIDE;
            // SAFETY: `slot` is the `STRIDE` bytes of id `id` in the array (`id` is below its
            // room), which nothing reads yet; `size <= STRIDE`, and the original is an int of
            // `size` bytes (as many digits as the largest), alive while it is read. Its first
            // word is the reference count (every object begins with it in the builds this
            // module is compiled for), replaced so that the copy is never freed.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    original.as_ptr().cast::<u8>(),
                    slot as *mut u8,
                    size,
                );
                (slot as *mut isize).write(count);
            }
            let copy = int_at(py, slot, false);
            if !copy.is_exact_instance_of::<PyInt>() || copy.extract::<usize>().ok() != Some(id) {
                return None;
            }
        }
        Some(())
    }

    /// The first word of every copy: before 3.12, a count that never reaches zero; from 3.12
    /// on, the count of the small int 1, which CPython makes immortal.
    fn count_word(py: Python<'_>) -> Option<isize> {
        if cfg!(Py_3_12) {
            let one = 1u32.into_pyobject(py).ok()?;
            // SAFETY: reads the first word of a live object: its reference count.
            let word = unsafe { one.as_ptr().cast::<isize>().read() };
            // Immortal counts are negative as 32-bit numbers (64-bit CPython 3.12-3.14).
            ((word as i32) < 0).then_some(word)
        } else {
            Some(1 << 60)
        }
    }
}
