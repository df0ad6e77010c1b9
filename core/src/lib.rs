//! bytepair-core: byte-level BPE with no Python inside.
//!
//! The modules follow the pipeline a text goes through; each uses only those above it:
//! - [`bytes`]: bytes before any vocabulary: the GPT-2 byte alphabet of text formats
//!   ([`bytes::byte_map`]) and short byte strings packed into integer keys;
//! - [`mem`]: large arrays on huge pages ([`mem::huge_pages`]);
//! - [`pretokenize`]: cutting text into pieces with a model's pattern (hand-written scanners for the
//!   well-known patterns, a general regex engine for any other), or with a pipeline of Hugging
//!   Face pre-tokenizer stages ([`pretokenize::pipeline`]);
//! - [`vocab`]: what a model knows: the rank map, the token table laid out for lookups, token
//!   bytes by id and the id-space checks ([`vocab::by_id`]), a Hugging Face model's vocabulary as
//!   plain values ([`vocab::pair_vocab`]) and its added tokens ([`vocab::added`]);
//! - [`merge`]: turning one piece into ids. By rank (tiktoken's rule): the pre-merge
//!   (`premerge`), the flat merge (`flat`), the heap merge (`heap`) and the linear-time
//!   `backtrack` for long pieces, over [`merge::MergeTable`], with a per-thread piece cache
//!   (`cache`). By pair priority (Hugging Face's rule): [`merge::pair`];
//! - [`encoder`]: one type per model, all implementing [`Encoder`]: [`RankEncoder`] (tiktoken),
//!   [`PairEncoder`] (Hugging Face: pair model, pipeline, added tokens) and
//!   [`SentencePieceEncoder`] (SentencePiece's BPE, by score or by merge list), sharing the
//!   special token search ([`encoder::SpecialMatcher`]);
//! - [`formats`]: parsing the vocabulary files worth parsing in Rust (tiktoken, GPT-2/HF merges,
//!   SentencePiece `.model`) into plain values;
//! - [`build`]: encoders made from parsed values, and conversions between the two models;
//! - [`batch`]: running a batch of texts on several threads (pools, chunk planning, claiming);
//! - [`train`]: learning merges from a corpus.
//!
//! Errors are values ([`Error`]); nothing reachable from input panics. `unsafe` code in three
//! places: a prefetch hint, which reads nothing; the SIMD loads and compares of the block
//! scanner ([`pretokenize`]), which read 16 bytes of a 64-byte array; and [`mem::huge_pages`], an
//! array allocated on 2 MiB boundaries (allocation, `madvise`, element access as `Box<[T]>`
//! does it, tested for every value being dropped once).
#![deny(unsafe_code)]

pub mod batch;
pub mod build;
pub mod bytes;
pub mod encoder;
pub mod error;
pub mod formats;
pub mod mem;
pub mod merge;
pub mod pretokenize;
#[cfg(test)]
mod test_data;
pub mod train;
pub mod vocab;

pub use encoder::{Encoder, PairEncoder, RankEncoder, SentencePieceEncoder};
pub use error::Error;
pub use pretokenize::Pretokenizer;

/// A token id. Ranks and ids are the same thing for byte-level BPE vocabularies.
pub type Rank = u32;

/// Ask the CPU to bring the cache line holding `value` in: a hint that reads nothing.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address (here that of a
    // live reference); its only requirement is SSE, which every x86_64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            std::ptr::from_ref(value).cast(),
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
