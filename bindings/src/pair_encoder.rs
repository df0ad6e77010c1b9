//! `PairEncoder`: the Hugging Face model, where merges apply in the priority order of a merge
//! list, after added tokens and a pre-tokenizer pipeline.

use std::collections::HashMap;
use std::sync::Arc;

use bytepair_core::batch::with_id_buffer;
use bytepair_core::vocab::added::Segment;
use bytepair_core::{Encoder as _, Error, PairEncoder as CorePairEncoder, Rank};
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;
use pyo3::types::{PyBytes, PyList};

use crate::added_token::AddedToken;
use crate::encoder::Encoder;
use crate::errors::to_py_err;
use crate::formats;
use crate::model::{EncoderCalls, Model, ModelEncoder};
use crate::model_tables::ModelTables;
use crate::special_set::{SpecialSet, made_by, refuse};

/// Pair merges, a pre-tokenizer pipeline and added tokens.
pub struct PairModel {
    core: CorePairEncoder,
    /// The added tokens recognised with no special token allowed: the non-special ones.
    ordinary_added: Vec<bool>,
}

impl PairModel {
    /// Encode as `tokenizers` does: the added tokens of `enabled` first, then pre-tokenizer and
    /// merges. `first_pass` false: the caller already split off the raw-text added tokens and
    /// normalized the rest.
    fn encode_added_into(
        &self,
        text: &str,
        enabled: &[bool],
        first_pass: bool,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        self.core
            .encode_with_added_into(text, enabled, first_pass, out)
    }

    /// Which added tokens count: every non-special one, and the special ones `allowed` names.
    fn enabled(&self, allowed: impl FnMut(&str) -> bool) -> Vec<bool> {
        self.core
            .added()
            .map_or_else(Vec::new, |added| added.enabled(allowed))
    }
}

impl Model for PairModel {
    const CLASS: &'static str = "PairEncoder";
    type Core = CorePairEncoder;

    fn vocabulary(&self) -> &CorePairEncoder {
        &self.core
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error> {
        self.encode_added_into(text, &self.ordinary_added, true, out)
    }

    fn count_ordinary(&self, text: &str) -> Result<usize, Error> {
        with_id_buffer(|ids| {
            self.encode_ordinary_into(text, ids)?;
            Ok(ids.len())
        })
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &SpecialSet,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        self.encode_added_into(text, &allowed.enabled_added, true, out)
    }

    fn count(&self, text: &str, allowed: &SpecialSet) -> Result<usize, Error> {
        with_id_buffer(|ids| {
            self.encode_into(text, allowed, ids)?;
            Ok(ids.len())
        })
    }

    fn enabled_added(&self, allowed: &[String]) -> Vec<bool> {
        let names: std::collections::HashSet<&str> = allowed.iter().map(String::as_str).collect();
        self.enabled(|c| names.contains(c))
    }

    fn rank_equivalence(&self) -> Result<(), String> {
        bytepair_core::build::rank_equivalence(&self.core)
    }
}

/// The compiled Hugging Face (`tokenizers`) BPE model: `encode` recognises the added tokens (all
/// non-special ones, and the special ones of `allowed`) before the pipeline and the merges.
#[pyclass(frozen, extends = Encoder, module = "bytepair._core")]
pub struct PairEncoder {
    encoder: Arc<ModelEncoder<PairModel>>,
}

impl PairEncoder {
    /// `set` if this encoder made it.
    fn checked<'a>(
        &self,
        set: Option<&'a PyRef<'_, SpecialSet>>,
    ) -> PyResult<Option<&'a SpecialSet>> {
        made_by(set.map(|s| &**s), self.encoder.id(), PairModel::CLASS)
    }

    /// The added tokens recognised with `allowed` (`None`: no special one).
    fn enabled<'a>(&'a self, allowed: Option<&'a SpecialSet>) -> &'a [bool] {
        allowed.map_or(&self.encoder.model.ordinary_added, |a| &a.enabled_added)
    }
}

#[pymethods]
impl PairEncoder {
    /// Build from a Hugging Face model description: `vocab` (token text -> id), merges as pairs
    /// or as a merges file's bytes, or both tables as `ModelTables`; pipeline stages (shapes:
    /// `formats.rs`) and added tokens.
    #[new]
    #[pyo3(signature = (vocab, stages, added, merges=None, merges_data=None, ignore_merges=false, unknown=None, byte_fallback=false, tables=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        vocab: Option<HashMap<String, Rank>>,
        stages: Vec<formats::StageSpec>,
        added: Vec<PyRef<'_, AddedToken>>,
        merges: Option<Vec<(String, String)>>,
        merges_data: Option<&[u8]>,
        ignore_merges: bool,
        unknown: Option<(Rank, bool)>,
        byte_fallback: bool,
        tables: Option<PyRef<'_, ModelTables>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let pipeline = formats::pipeline(stages)?;
        let added: Vec<_> = added.iter().map(|t| t.0.clone()).collect();
        let tables = tables.map(|t| Arc::clone(&t.tables));
        let options = formats::PairOptions {
            ignore_merges,
            unknown,
            byte_fallback,
        };
        let core = py
            .detach(|| match (&tables, vocab) {
                (Some(tables), _) => formats::pair_encoder(
                    &tables.core.vocab,
                    &tables.core.merges,
                    options,
                    added,
                    pipeline,
                ),
                (None, Some(vocab)) => {
                    let merges = formats::merge_list(merges, merges_data)?;
                    let vocab: Vec<(String, Rank)> = vocab.into_iter().collect();
                    formats::pair_encoder(&vocab, &merges, options, added, pipeline)
                }
                (None, None) => Err(Error::InvalidVocabulary(
                    "a vocabulary or tables are needed".into(),
                )),
            })
            .map_err(to_py_err)?;
        let mut model = PairModel {
            core,
            ordinary_added: Vec::new(),
        };
        model.ordinary_added = model.enabled(|_| false);
        let encoder = Arc::new(ModelEncoder::new(model)?);
        let base = Encoder {
            calls: Arc::clone(&encoder) as Arc<dyn EncoderCalls>,
        };
        Ok(PyClassInitializer::from(base).add_subclass(PairEncoder { encoder }))
    }

    /// `encode` of text whose raw-text added tokens the caller split off (`split_added`) and
    /// which it normalized: only the added tokens searched in normalized text are left to find.
    #[pyo3(signature = (text, allowed=None))]
    fn encode_normalized<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let enabled = self.enabled(self.checked(allowed.as_ref())?);
        let model = &self.encoder.model;
        with_id_buffer(|ids| {
            py.detach(|| model.encode_added_into(text, enabled, false, ids))
                .map_err(to_py_err)?;
            self.encoder.id_list(py, ids)
        })
    }

    /// The first pass alone: the raw-text added tokens as ids, the text between them as str.
    /// `DisallowedSpecial` if `text` spells a token of `disallowed`.
    #[pyo3(signature = (text, allowed=None, disallowed=None))]
    fn split_added<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<PyRef<'_, SpecialSet>>,
        disallowed: Option<PyRef<'_, SpecialSet>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let enabled = self.enabled(self.checked(allowed.as_ref())?);
        refuse(text, self.checked(disallowed.as_ref())?)?;
        let list = PyList::empty(py);
        let Some(added) = self.encoder.model.core.added() else {
            if !text.is_empty() {
                list.append(text)?;
            }
            return Ok(list);
        };
        let mut parts: Vec<Segment<'_>> = Vec::new();
        added
            .split(text, false, enabled, |s| {
                parts.push(s);
                Ok(())
            })
            .map_err(to_py_err)?;
        for part in parts {
            match part {
                Segment::Text(t) => list.append(t)?,
                Segment::Token(id) => list.append(id)?,
            }
        }
        Ok(list)
    }

    /// The merges as `(left, right, result)` ids in priority order.
    fn pair_merges(&self) -> Vec<(Rank, Rank, Rank)> {
        self.encoder.model.core.model().merges()
    }

    /// The model vocabulary: `(id, bytes, written in the GPT-2 byte alphabet)`.
    fn pair_vocab<'py>(&self, py: Python<'py>) -> Vec<(Rank, Bound<'py, PyBytes>, bool)> {
        let core = &self.encoder.model.core;
        core.model_vocab()
            .iter()
            .filter_map(|&(id, alphabet)| {
                core.token_bytes(id)
                    .map(|b| (id, PyBytes::new(py, b), alphabet))
            })
            .collect()
    }
}
