//! Running a batch of texts on several threads, with no interpreter in sight: the bindings
//! build the lists and release the interpreter, this plans and schedules the work.
//!
//! - [`pool`]: thread pools kept by size, so that batches reuse warm threads (and their piece
//!   caches);
//! - [`batch_chunks`]: the runs of texts the threads claim in turn; [`ChunkClaims`] hands them
//!   out in order from one counter;
//! - [`on_threads`]: `work` on every run, the calling thread being one of the threads, the
//!   results in order ([`first_error`] then picks the error of the first run that has one);
//! - [`wait_for_texts`] and [`Unblock`]: workers that start before the texts are read;
//! - [`with_scratch`]: buffers each thread keeps between calls.

mod chunks;
mod pools;
mod scratch;
#[cfg(test)]
mod tests;

pub use chunks::{
    ChunkClaims, FirstError, Unblock, batch_chunks, first_error, on_threads, wait_for_texts,
};
pub use pools::pool;
pub use scratch::{Scratch, with_id_buffer, with_scratch};
