//! Arrays that ask the kernel for 2 MiB pages when they are large.
//!
//! The encoder's lookups land anywhere in tables of megabytes (the token tables of a large
//! vocabulary, and in the bindings the slots for the Python int of each id). On 4 KiB pages each
//! table spans hundreds of pages, more than the first-level TLB holds, so a lookup can wait for
//! its page's translation as well as for its cache line, and a prefetch whose page is not in the
//! TLB may be dropped (gigatoken's notes report this of AMD's Zen). On 2 MiB pages a table is
//! one or two TLB entries. Small tables (cl100k's) are not given such pages. The figures are in
//! `docs/performance.md`.
//!
//! Linux backs memory with 2 MiB pages (transparent huge pages) when the region is 2 MiB-aligned
//! and, in the kernel's default `madvise` mode, marked with `madvise(MADV_HUGEPAGE)` before it
//! is first written. So a large array is allocated 2 MiB-aligned, its size rounded up to whole
//! pages, marked, and only then filled. An array that would leave more than a quarter of its
//! pages unused is allocated as usual, as is every array on other systems; where the kernel has
//! no huge page to give, the memory is an ordinary allocation with the same contents.
//!
//! The price is memory: a large encoder's tables are rounded up to whole 2 MiB pages, and the
//! ints' slots are backed by a whole page at the first call where 4 KiB pages were backed as ids
//! appeared.
//!
//! The module's tests pass under Miri (`cargo +nightly miri test -p bytepair-core --lib
//! huge_pages`, about eight minutes; `madvise` is left out there).

use std::alloc::Layout;
use std::fmt;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// The size (and alignment) of a huge page on x86_64 and most aarch64 Linux systems.
const HUGE_PAGE: usize = 2 << 20;

/// A fixed-length array, in 2 MiB pages when it fills at least three quarters of them.
pub struct HugePageArray<T> {
    ptr: NonNull<T>,
    len: usize,
    /// How it was allocated: `Some` for the aligned allocation that [`Drop`] frees with the
    /// same layout, `None` for a `Box<[T]>` (small arrays, zero-sized types, other systems).
    huge: Option<Layout>,
    /// The values are owned (and dropped) here, as by a `Box<[T]>`.
    _owns: PhantomData<T>,
}

// SAFETY: the array owns its elements as a `Box<[T]>` would; sharing or sending it shares or
// sends them.
#[allow(unsafe_code)]
unsafe impl<T: Send> Send for HugePageArray<T> {}
// SAFETY: as above; `&HugePageArray<T>` only gives `&[T]`.
#[allow(unsafe_code)]
unsafe impl<T: Sync> Sync for HugePageArray<T> {}

/// The layout of an array of `len` values of `T` in whole huge pages, if it should have them.
fn huge_layout<T>(len: usize) -> Option<Layout> {
    if !cfg!(target_os = "linux") || std::mem::size_of::<T>() == 0 {
        return None;
    }
    let bytes = std::mem::size_of::<T>().checked_mul(len)?;
    let rounded = bytes.checked_next_multiple_of(HUGE_PAGE)?;
    // Not empty, and at least three quarters of the pages used.
    if bytes == 0 || bytes < rounded / 4 * 3 {
        return None;
    }
    Layout::from_size_align(rounded, HUGE_PAGE.max(std::mem::align_of::<T>())).ok()
}

/// The length to give an array that must hold at least `len` values of `T`: `len` rounded up to
/// fill the huge pages it will get, so that the rounding is used rather than wasted (`len`
/// itself if it gets none).
///
/// ```
/// use bytepair_core::mem::huge_pages::usable_len;
/// assert_eq!(usable_len::<u64>(1000), 1000);
/// let big = usable_len::<u64>(200_000); // 1.6 MB: one 2 MiB page on Linux
/// assert!(big == 200_000 || big == (2 << 20) / 8);
/// ```
pub fn usable_len<T>(len: usize) -> usize {
    match huge_layout::<T>(len) {
        Some(layout) => layout.size() / std::mem::size_of::<T>(),
        None => len,
    }
}

impl<T> HugePageArray<T> {
    /// An array of `len` values, the `i`th made by `value(i)` (a panic in `value` leaks the
    /// values made before it and the memory, nothing worse).
    ///
    /// ```
    /// use bytepair_core::mem::huge_pages::HugePageArray;
    /// let squares = HugePageArray::from_fn(5, |i| i * i);
    /// assert_eq!(&squares[..], &[0, 1, 4, 9, 16]);
    /// ```
    #[allow(unsafe_code)]
    pub fn from_fn(len: usize, mut value: impl FnMut(usize) -> T) -> Self {
        let Some(layout) = huge_layout::<T>(len) else {
            let boxed: Box<[T]> = (0..len).map(value).collect();
            let len = boxed.len();
            let ptr = NonNull::from(Box::leak(boxed)).cast::<T>();
            return Self {
                ptr,
                len,
                huge: None,
                _owns: PhantomData,
            };
        };
        // SAFETY: the layout's size is not zero (`huge_layout` refuses empty arrays and
        // zero-sized types), as `alloc` requires; null is handled.
        let raw = unsafe { std::alloc::alloc(layout) };
        let Some(ptr) = NonNull::new(raw.cast::<T>()) else {
            std::alloc::handle_alloc_error(layout)
        };
        // (Miri, which checks the rest of this module, cannot run `madvise`.)
        #[cfg(all(target_os = "linux", not(miri)))]
        // SAFETY: `madvise` only changes how the kernel backs this range, which is ours (the
        // whole allocation). Its result is ignored: without huge pages the memory is ordinary.
        unsafe {
            libc::madvise(raw.cast(), layout.size(), libc::MADV_HUGEPAGE);
        }
        for i in 0..len {
            // SAFETY: `i < len`, and the allocation holds at least `len` values of `T` at an
            // alignment of at least `T`'s; each place is written once, before any is read.
            unsafe { ptr.as_ptr().add(i).write(value(i)) };
        }
        Self {
            ptr,
            len,
            huge: Some(layout),
            _owns: PhantomData,
        }
    }

    /// Whether the array was given huge pages (asked for them: the kernel may still not have
    /// any to give).
    pub fn is_huge(&self) -> bool {
        self.huge.is_some()
    }
}

impl<T: Clone> HugePageArray<T> {
    /// An array of `len` copies of `value`.
    ///
    /// ```
    /// use bytepair_core::mem::huge_pages::HugePageArray;
    /// assert_eq!(&HugePageArray::filled(3, 7u8)[..], &[7, 7, 7]);
    /// ```
    pub fn filled(len: usize, value: T) -> Self {
        Self::from_fn(len, |_| value.clone())
    }
}

impl<T> Default for HugePageArray<T> {
    fn default() -> Self {
        Self::from_fn(0, |_| unreachable!("no value of an empty array is made"))
    }
}

impl<T> Deref for HugePageArray<T> {
    type Target = [T];

    #[inline(always)]
    #[allow(unsafe_code)]
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialised values for as long as `self` lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> DerefMut for HugePageArray<T> {
    #[inline(always)]
    #[allow(unsafe_code)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> Drop for HugePageArray<T> {
    #[allow(unsafe_code)]
    fn drop(&mut self) {
        let values = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
        match self.huge {
            // SAFETY: the values are initialised and dropped once; the memory was allocated
            // with `layout`, which `dealloc` needs.
            Some(layout) => unsafe {
                std::ptr::drop_in_place(values);
                std::alloc::dealloc(self.ptr.as_ptr().cast(), layout);
            },
            // SAFETY: `ptr` and `len` came from `Box::leak` of a `Box<[T]>`.
            None => drop(unsafe { Box::from_raw(values) }),
        }
    }
}

impl<T: Clone> Clone for HugePageArray<T> {
    fn clone(&self) -> Self {
        Self::from_fn(self.len, |i| self[i].clone())
    }
}

impl<T: fmt::Debug> fmt::Debug for HugePageArray<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use std::rc::Rc;

    #[test]
    fn small_arrays_are_boxes() {
        let a = HugePageArray::from_fn(1000, |i| i as u64 * 3);
        assert!(!a.is_huge());
        assert_eq!(a.len(), 1000);
        assert_eq!(a[999], 2997);
        assert_eq!(usable_len::<u64>(1000), 1000);
        let empty: HugePageArray<String> = HugePageArray::default();
        assert!(empty.is_empty() && !empty.is_huge());
    }

    #[test]
    fn large_arrays_fill_aligned_huge_pages_on_linux() {
        // 1.6 MB of u64: three quarters of a 2 MiB page and more.
        let len = 200_000;
        let mut a = HugePageArray::filled(len, 5u64);
        assert_eq!(a.is_huge(), cfg!(target_os = "linux"));
        if a.is_huge() {
            assert_eq!(a.as_ptr() as usize % HUGE_PAGE, 0);
            assert_eq!(usable_len::<u64>(len), HUGE_PAGE / 8);
        }
        assert!(a.iter().all(|&v| v == 5));
        a[len - 1] = 9;
        let b = a.clone();
        assert_eq!(b.len(), len);
        assert_eq!(b[len - 1], 9);
        assert_eq!(b.is_huge(), a.is_huge());
        // Half a page is not worth one: allocated as usual.
        assert!(!HugePageArray::filled(HUGE_PAGE / 16, 0u64).is_huge());
        assert_eq!(usable_len::<u64>(HUGE_PAGE / 16), HUGE_PAGE / 16);
    }

    #[test]
    fn every_value_is_dropped_once() {
        let counter = Rc::new(());
        for len in [0, 10, 250_000] {
            let a = HugePageArray::from_fn(len, |_| Rc::clone(&counter));
            assert_eq!(Rc::strong_count(&counter), len + 1);
            let b = a.clone();
            assert_eq!(Rc::strong_count(&counter), 2 * len + 1);
            drop(a);
            drop(b);
            assert_eq!(Rc::strong_count(&counter), 1);
        }
    }
}
