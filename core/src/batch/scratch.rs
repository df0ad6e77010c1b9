//! Buffers each thread keeps between calls.

use std::cell::RefCell;
use std::thread::LocalKey;

use crate::Rank;

/// A kept buffer grown past this many items (by a huge text) is dropped, not kept.
const MAX_KEPT_ITEMS: usize = 1 << 20;

thread_local! {
    static ID_BUFFER: RefCell<Vec<Rank>> = const { RefCell::new(Vec::new()) };
}

/// A buffer kept by each thread between calls (see [`with_scratch`]).
pub trait Scratch: Default {
    fn clear(&mut self);
    fn capacity(&self) -> usize;
}

impl Scratch for Vec<Rank> {
    fn clear(&mut self) {
        Vec::clear(self);
    }
    fn capacity(&self) -> usize {
        Vec::capacity(self)
    }
}

impl Scratch for String {
    fn clear(&mut self) {
        String::clear(self);
    }
    fn capacity(&self) -> usize {
        String::capacity(self)
    }
}

/// Run `f` with this thread's buffer `key`, emptied: allocating (then freeing) a fresh buffer
/// per call, sized for the worst case, costs page faults on long texts.
pub fn with_scratch<B: Scratch, R>(
    key: &'static LocalKey<RefCell<B>>,
    f: impl FnOnce(&mut B) -> R,
) -> R {
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            let result = f(&mut buffer);
            if buffer.capacity() > MAX_KEPT_ITEMS {
                *buffer = B::default();
            }
            result
        }
        // In use further up this thread's stack (not possible today, but never a panic).
        Err(_) => f(&mut B::default()),
    })
}

/// Run `f` with this thread's buffer for ids: a call that returns a list of ids needs them only
/// until the list is made.
pub fn with_id_buffer<R>(f: impl FnOnce(&mut Vec<Rank>) -> R) -> R {
    with_scratch(&ID_BUFFER, f)
}
