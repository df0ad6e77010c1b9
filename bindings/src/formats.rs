//! Building encoders from GPT-2 and Hugging Face files, and what saving them needs.
//!
//! The Python package (`bytepair.formats`) parses JSON and decides what each component means;
//! these helpers turn its plain description into core objects. A pipeline stage arrives as a
//! `bytepair.formats.hf_pipeline.Stage`, read by its attribute names ([`StageSpec`]); added
//! tokens arrive typed (`added_token.rs`).

use bytepair_core::formats::hf::{self, MergeList};
use bytepair_core::merge::pair::MissingByte;
use bytepair_core::pretokenize::pipeline::{Behavior, Matcher, Pipeline, Stage};
use bytepair_core::vocab::added::AddedToken;
use bytepair_core::{Error, PairEncoder, Pretokenizer, Rank};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::to_py_err;

/// One pipeline stage as Python describes it (`bytepair.formats.hf_pipeline.Stage`).
#[derive(FromPyObject)]
pub struct StageSpec {
    #[pyo3(attribute)]
    kind: String,
    #[pyo3(attribute)]
    pattern: Option<String>,
    #[pyo3(attribute)]
    behavior: String,
    #[pyo3(attribute)]
    invert: bool,
    #[pyo3(attribute)]
    add_prefix_space: bool,
}

/// A token id and the two token byte strings it is merged from, if any.
pub type DerivedMerge<'py> = (Rank, Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>);

fn behavior(name: &str) -> PyResult<Behavior> {
    Ok(match name {
        "removed" => Behavior::Removed,
        "isolated" => Behavior::Isolated,
        "merged_with_previous" => Behavior::MergedWithPrevious,
        "merged_with_next" => Behavior::MergedWithNext,
        "contiguous" => Behavior::Contiguous,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown split behaviour {other:?}"
            )));
        }
    })
}

/// The pipeline that `stages` describe.
pub fn pipeline(stages: Vec<StageSpec>) -> PyResult<Pipeline> {
    let mut out = Vec::with_capacity(stages.len());
    for spec in stages {
        let stage = match spec.kind.as_str() {
            "byte_level" => Stage::ByteLevel {
                add_prefix_space: spec.add_prefix_space,
                regex: spec
                    .pattern
                    .as_deref()
                    .map(Pretokenizer::new)
                    .transpose()
                    .map_err(to_py_err)?,
            },
            kind => {
                let matcher = match (kind, spec.pattern) {
                    ("regex", Some(p)) => Matcher::Regex(Pretokenizer::new(&p).map_err(to_py_err)?),
                    ("literal", Some(s)) => Matcher::Literal(s),
                    ("numeric", _) => Matcher::Numeric,
                    ("punctuation", _) => Matcher::Punctuation,
                    (k, _) => {
                        return Err(PyValueError::new_err(format!(
                            "unknown pipeline stage {k:?}"
                        )));
                    }
                };
                Stage::Split {
                    matcher,
                    behavior: behavior(&spec.behavior)?,
                    invert: spec.invert,
                }
            }
        };
        out.push(stage);
    }
    Pipeline::new(out).map_err(to_py_err)
}

/// Merges from a JSON list (`pairs`) or a merges file's bytes (`data`).
pub fn merge_list(
    pairs: Option<Vec<(String, String)>>,
    data: Option<&[u8]>,
) -> Result<MergeList, Error> {
    match (pairs, data) {
        (Some(merges), _) => Ok(MergeList {
            merges,
            lines: None,
        }),
        (None, Some(data)) => hf::parse_merges(data),
        (None, None) => Ok(MergeList::default()),
    }
}

/// The options of a Hugging Face BPE model.
#[derive(Clone, Copy)]
pub struct PairOptions {
    pub ignore_merges: bool,
    /// The unknown token's id and whether runs of it fuse.
    pub unknown: Option<(Rank, bool)>,
    pub byte_fallback: bool,
}

/// A pair-merge encoder from a Hugging Face model description.
pub fn pair_encoder(
    vocab: &[(String, Rank)],
    merges: &MergeList,
    options: PairOptions,
    added: Vec<AddedToken>,
    pipeline: Pipeline,
) -> Result<PairEncoder, Error> {
    let missing = match options.unknown {
        Some((id, fuse)) => MissingByte::Unknown { id, fuse },
        None => MissingByte::Drop,
    };
    bytepair_core::build::pair_encoder(
        vocab,
        merges,
        options.ignore_merges,
        missing,
        options.byte_fallback,
        added,
        pipeline,
    )
}

/// Split `text` with a pipeline (for tests against `tokenizers`' `pre_tokenize_str`).
#[pyfunction]
pub fn pipeline_split<'py>(
    py: Python<'py>,
    stages: Vec<StageSpec>,
    text: &str,
) -> PyResult<Vec<Bound<'py, PyBytes>>> {
    let p = pipeline(stages)?;
    let pieces = py.detach(|| p.pieces(text)).map_err(to_py_err)?;
    Ok(pieces.iter().map(|b| PyBytes::new(py, b)).collect())
}
