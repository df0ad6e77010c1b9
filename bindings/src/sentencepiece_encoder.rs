//! `SentencePieceEncoder`: SentencePiece's BPE model, merging by piece score (sentencepiece) or
//! by a merge list (Hugging Face), after its own whitespace normalization.

use std::collections::HashMap;
use std::sync::Arc;

use bytepair_core::encoder::sentencepiece::{DecoderKind, PieceKind, Prepend, SentencePieceSpec};
use bytepair_core::{Encoder as _, Error, Rank, SentencePieceEncoder as CoreEncoder};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;

use crate::encoder::Encoder;
use crate::errors::{id_from_py, ids_from_py, to_py_err, unknown_id};
use crate::model::{Model, ModelEncoder};
use crate::special_set::SpecialSet;

/// The pieces, normalizer settings and merge rule of one SentencePiece model.
pub struct SentencePieceModel(CoreEncoder);

impl Model for SentencePieceModel {
    const CLASS: &'static str = "SentencePieceEncoder";
    type Core = CoreEncoder;

    fn vocabulary(&self) -> &CoreEncoder {
        &self.0
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error> {
        self.0.encode_ordinary_into(text, out)
    }

    fn count_ordinary(&self, text: &str) -> Result<usize, Error> {
        self.0.count_ordinary(text)
    }

    fn encode_into(
        &self,
        text: &str,
        allowed: &SpecialSet,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error> {
        self.0.encode_into(text, &allowed.matcher, out)
    }

    fn count(&self, text: &str, allowed: &SpecialSet) -> Result<usize, Error> {
        self.0.count(text, &allowed.matcher)
    }

    fn enabled_added(&self, _allowed: &[String]) -> Vec<bool> {
        Vec::new()
    }

    fn rank_equivalence(&self) -> Result<(), String> {
        Err(
            "a SentencePiece model merges by piece score or merge list, after its own \
             normalization, not by the rank of byte strings"
                .into(),
        )
    }
}

fn choice<T: Copy>(what: &str, value: &str, options: &[(&str, T)]) -> PyResult<T> {
    options
        .iter()
        .find(|(name, _)| *name == value)
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let names: Vec<String> = options.iter().map(|(n, _)| format!("{n:?}")).collect();
            PyValueError::new_err(format!(
                "{what} must be one of {}, not {value:?}",
                names.join(", ")
            ))
        })
}

/// A SentencePiece BPE model (sentencepiece's `.model`, or Hugging Face's BPE with Metaspace).
#[pyclass(frozen, extends = Encoder, module = "bytepair._core")]
pub struct SentencePieceEncoder {
    encoder: Arc<ModelEncoder<SentencePieceModel>>,
}

impl SentencePieceEncoder {
    fn core(&self) -> &CoreEncoder {
        &self.encoder.model.0
    }
}

#[pymethods]
impl SentencePieceEncoder {
    /// Build from pieces `(piece, score, type)` (id = index); `merges`: None to merge by score,
    /// or Hugging Face's merge list as id pairs in priority order.
    #[new]
    #[pyo3(signature = (
        pieces,
        *,
        merges=None,
        byte_fallback,
        unk_id,
        prepend,
        remove_extra_whitespaces,
        escape_whitespaces,
        treat_whitespace_as_suffix,
        replacement="\u{2581}",
        split_on_replacement=false,
        precompiled_charsmap=None,
        fuse_unk=false,
        ignore_merges=false,
        decoder="sentencepiece",
        unk_surface=" \u{2047} ",
        special_tokens,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        pieces: Vec<(String, f32, i32)>,
        merges: Option<Vec<(Rank, Rank)>>,
        byte_fallback: bool,
        unk_id: Option<Rank>,
        prepend: &str,
        remove_extra_whitespaces: bool,
        escape_whitespaces: bool,
        treat_whitespace_as_suffix: bool,
        replacement: &str,
        split_on_replacement: bool,
        precompiled_charsmap: Option<Vec<u8>>,
        fuse_unk: bool,
        ignore_merges: bool,
        decoder: &str,
        unk_surface: &str,
        special_tokens: HashMap<String, Rank>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let pieces = pieces
            .into_iter()
            .enumerate()
            .map(|(id, (piece, score, kind))| {
                let kind = PieceKind::from_number(kind).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "piece {id} ({piece:?}) has type {kind}; types are 1 to 6"
                    ))
                })?;
                Ok((piece, score, kind))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let mut chars = replacement.chars();
        let (Some(replacement), None) = (chars.next(), chars.next()) else {
            return Err(PyValueError::new_err(format!(
                "replacement must be one character, not {replacement:?}"
            )));
        };
        let spec = SentencePieceSpec {
            pieces,
            merges,
            byte_fallback,
            unk_id,
            prepend: choice(
                "prepend",
                prepend,
                &[
                    ("always", Prepend::Always),
                    ("always_unless_present", Prepend::AlwaysUnlessPresent),
                    ("first", Prepend::First),
                    ("never", Prepend::Never),
                ],
            )?,
            remove_extra_whitespaces,
            escape_whitespaces,
            treat_whitespace_as_suffix,
            replacement,
            split_on_replacement,
            precompiled_charsmap,
            fuse_unk,
            ignore_merges,
            decoder: choice(
                "decoder",
                decoder,
                &[
                    ("sentencepiece", DecoderKind::SentencePiece),
                    ("hf", DecoderKind::Hf),
                ],
            )?,
            unk_surface: unk_surface.to_owned(),
            special_tokens: special_tokens.into_iter().collect(),
        };
        let core = py.detach(|| CoreEncoder::new(spec)).map_err(to_py_err)?;
        let encoder = Arc::new(ModelEncoder::new(SentencePieceModel(core))?);
        let base = Encoder {
            calls: Arc::clone(&encoder) as Arc<dyn crate::model::EncoderCalls>,
        };
        Ok(PyClassInitializer::from(base).add_subclass(SentencePieceEncoder { encoder }))
    }

    /// The text of `ids` by this encoder's decoder rule (`keep_special`: see the core's).
    #[pyo3(signature = (ids, keep_special = false))]
    fn decode(&self, py: Python<'_>, ids: Vec<i64>, keep_special: bool) -> PyResult<String> {
        let ids = ids_from_py(ids)?;
        py.detach(|| self.core().decode(&ids, keep_special))
            .map_err(to_py_err)
    }

    /// The piece of `id`; `KeyError` if there is none.
    fn id_to_piece(&self, id: i64) -> PyResult<String> {
        let id = id_from_py(id)?;
        self.core()
            .id_to_piece(id)
            .map(str::to_owned)
            .ok_or_else(|| unknown_id(id))
    }

    /// The id of `piece`, or None.
    fn piece_to_id(&self, piece: &str) -> Option<Rank> {
        self.core().piece_to_id(piece)
    }

    /// Every piece as `(piece, score, type)`, by id.
    fn pieces(&self) -> Vec<(String, f32, i32)> {
        self.core()
            .pieces()
            .iter()
            .map(|(p, s, k)| (p.clone(), *s, k.number()))
            .collect()
    }
}
