//! SentencePiece `.model` files as Python dicts (keys as `parse_sentencepiece_model` documents them): parsing
//! and writing; what the values mean is the Python package's business.

use bytepair_core::formats::sentencepiece::{
    self, ModelType, NormalizerSettings, SentencePieceModel, TrainerSettings,
};
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::errors::to_py_err;

/// A `.model` file's bytes as a dict: model_type, pieces, trainer, normalizer.
#[pyfunction]
pub fn parse_sentencepiece_model<'py>(
    py: Python<'py>,
    data: &[u8],
) -> PyResult<Bound<'py, PyDict>> {
    let model = py
        .detach(|| sentencepiece::parse(data))
        .map_err(to_py_err)?;
    let out = PyDict::new(py);
    out.set_item("model_type", model.model_type.name())?;
    out.set_item("pieces", model.pieces)?;
    let t = model.trainer;
    let trainer = PyDict::new(py);
    trainer.set_item("vocab_size", t.vocab_size)?;
    trainer.set_item("byte_fallback", t.byte_fallback)?;
    trainer.set_item("split_digits", t.split_digits)?;
    trainer.set_item("split_by_whitespace", t.split_by_whitespace)?;
    trainer.set_item("treat_whitespace_as_suffix", t.treat_whitespace_as_suffix)?;
    trainer.set_item(
        "allow_whitespace_only_pieces",
        t.allow_whitespace_only_pieces,
    )?;
    trainer.set_item("unk_id", t.unk_id)?;
    trainer.set_item("bos_id", t.bos_id)?;
    trainer.set_item("eos_id", t.eos_id)?;
    trainer.set_item("pad_id", t.pad_id)?;
    trainer.set_item("unk_surface", t.unk_surface)?;
    out.set_item("trainer", trainer)?;
    let n = model.normalizer;
    let normalizer = PyDict::new(py);
    normalizer.set_item("name", n.name)?;
    normalizer.set_item("add_dummy_prefix", n.add_dummy_prefix)?;
    normalizer.set_item("remove_extra_whitespaces", n.remove_extra_whitespaces)?;
    normalizer.set_item("escape_whitespaces", n.escape_whitespaces)?;
    normalizer.set_item(
        "precompiled_charsmap",
        PyBytes::new(py, &n.precompiled_charsmap),
    )?;
    out.set_item("normalizer", normalizer)?;
    Ok(out)
}

fn item<'py, T: FromPyObjectOwned<'py>>(
    dict: &Bound<'py, PyDict>,
    key: &str,
    within: &str,
) -> PyResult<T> {
    let value = dict.get_item(key)?.ok_or_else(|| {
        PyKeyError::new_err(format!("sentencepiece model: {within} has no {key:?}"))
    })?;
    value.extract::<T>().map_err(|e| {
        let e: PyErr = e.into();
        PyValueError::new_err(format!("sentencepiece model: {within}[{key:?}]: {e}"))
    })
}

/// The dict `parse_sentencepiece_model` returns (same keys) as a `.model` file's bytes.
#[pyfunction]
pub fn write_sentencepiece_model<'py>(
    py: Python<'py>,
    model: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyBytes>> {
    let name: String = item(model, "model_type", "the model")?;
    let model_type = ModelType::from_name(&name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "sentencepiece model: unknown model_type {name:?} (BPE, UNIGRAM, WORD or CHAR)"
        ))
    })?;
    let pieces: Vec<(String, f32, i32)> = item(model, "pieces", "the model")?;
    let t: Bound<'py, PyDict> = item(model, "trainer", "the model")?;
    let n: Bound<'py, PyDict> = item(model, "normalizer", "the model")?;
    let charsmap: Vec<u8> = item::<Bound<'py, PyBytes>>(&n, "precompiled_charsmap", "normalizer")?
        .as_bytes()
        .to_vec();
    let model = SentencePieceModel {
        model_type,
        pieces,
        trainer: TrainerSettings {
            vocab_size: item(&t, "vocab_size", "trainer")?,
            byte_fallback: item(&t, "byte_fallback", "trainer")?,
            split_digits: item(&t, "split_digits", "trainer")?,
            split_by_whitespace: item(&t, "split_by_whitespace", "trainer")?,
            treat_whitespace_as_suffix: item(&t, "treat_whitespace_as_suffix", "trainer")?,
            allow_whitespace_only_pieces: item(&t, "allow_whitespace_only_pieces", "trainer")?,
            unk_id: item(&t, "unk_id", "trainer")?,
            bos_id: item(&t, "bos_id", "trainer")?,
            eos_id: item(&t, "eos_id", "trainer")?,
            pad_id: item(&t, "pad_id", "trainer")?,
            unk_surface: item(&t, "unk_surface", "trainer")?,
        },
        normalizer: NormalizerSettings {
            name: item(&n, "name", "normalizer")?,
            add_dummy_prefix: item(&n, "add_dummy_prefix", "normalizer")?,
            remove_extra_whitespaces: item(&n, "remove_extra_whitespaces", "normalizer")?,
            escape_whitespaces: item(&n, "escape_whitespaces", "normalizer")?,
            precompiled_charsmap: charsmap,
        },
    };
    let data = py.detach(|| sentencepiece::write(&model));
    Ok(PyBytes::new(py, &data))
}
