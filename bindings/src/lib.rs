//! The PyO3 layer, `bytepair._core`: converts arguments, releases the interpreter, maps core
//! errors to exceptions. All policy (special-token rules, messages that tell users what to do,
//! file formats) lives in the Python package; this crate only moves data across.
//!
//! - `encoder.rs`: `Encoder`, the base class of the compiled encoders, one per tokenizer model
//!   (`rank_encoder.rs`: tiktoken's ranks; `pair_encoder.rs`: Hugging Face pair merges, with
//!   `added_token.rs` and `model_tables.rs`; `sentencepiece_encoder.rs`: SentencePiece's BPE), built on `model.rs`;
//! - `special_set.rs`: `SpecialSet`, the special tokens a call allows or disallows;
//! - `encoding_base.rs`: `EncodingBase`, the compiled base class of `bytepair.Encoding`;
//! - `batch.rs`: the interpreter side of batches (the core's `batch` schedules them);
//!   `texts.rs`: their texts;
//! - `cpython/`: the paths that rely on CPython's object layout, and their portable twins;
//! - `formats.rs`, `sentencepiece_formats.rs`, `train.rs`, `functions.rs`: file formats,
//!   training, free functions.
#![deny(unsafe_code)]

use pyo3::prelude::*;

mod added_token;
mod batch;
mod cpython;
mod encoder;
mod encoding_base;
mod errors;
mod formats;
mod functions;
mod model;
mod model_tables;
mod pair_encoder;
mod rank_encoder;
mod sentencepiece_encoder;
mod sentencepiece_formats;
mod special_set;
mod texts;
mod train;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<encoder::Encoder>()?;
    m.add_class::<rank_encoder::RankEncoder>()?;
    m.add_class::<pair_encoder::PairEncoder>()?;
    m.add_class::<sentencepiece_encoder::SentencePieceEncoder>()?;
    m.add_class::<added_token::AddedToken>()?;
    m.add_class::<model_tables::ModelTables>()?;
    m.add_class::<special_set::SpecialSet>()?;
    m.add_class::<encoding_base::EncodingBase>()?;
    m.add(
        "DisallowedSpecial",
        m.py().get_type::<errors::DisallowedSpecial>(),
    )?;
    // Whether this build has the paths that rely on CPython's object layout (`cpython/`).
    m.add("CPYTHON_INTERNALS", cfg!(feature = "cpython-internals"))?;
    // The well-known patterns, written once in the core; `bytepair.patterns` reads them here.
    m.add("NAMED_PATTERNS", functions::named_patterns(m.py())?)?;
    m.add_class::<train::PieceCounter>()?;
    m.add_function(wrap_pyfunction!(functions::byte_map_table, m)?)?;
    m.add_function(wrap_pyfunction!(functions::split, m)?)?;
    m.add_function(wrap_pyfunction!(functions::parse_tiktoken, m)?)?;
    m.add_function(wrap_pyfunction!(functions::scanner_for, m)?)?;
    m.add_function(wrap_pyfunction!(formats::pipeline_split, m)?)?;
    m.add_function(wrap_pyfunction!(model_tables::split_model_tables, m)?)?;
    m.add_function(wrap_pyfunction!(
        sentencepiece_formats::parse_sentencepiece_model,
        m
    )?)?;
    m.add_function(wrap_pyfunction!(
        sentencepiece_formats::write_sentencepiece_model,
        m
    )?)?;
    Ok(())
}
