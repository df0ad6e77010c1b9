//! `RankEncoder`: tiktoken's model, where a token's rank is its id and the lowest-ranked pair
//! merges first.

use std::collections::HashMap;
use std::sync::Arc;

use bytepair_core::{Encoder as _, Error, Rank, RankEncoder as CoreRankEncoder};
use pyo3::prelude::*;
use pyo3::pyclass_init::PyClassInitializer;

use crate::encoder::Encoder;
use crate::errors::to_py_err;
use crate::model::{Model, ModelEncoder};
use crate::special_set::SpecialSet;

/// A vocabulary of ranked byte strings, special tokens and a pattern.
pub struct RankModel(CoreRankEncoder);

impl Model for RankModel {
    const CLASS: &'static str = "RankEncoder";
    type Core = CoreRankEncoder;

    fn vocabulary(&self) -> &CoreRankEncoder {
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
        Ok(())
    }
}

/// The compiled tiktoken-style encoder behind `bytepair.Encoding`.
#[pyclass(frozen, extends = Encoder, module = "bytepair._core")]
pub struct RankEncoder;

impl RankEncoder {
    fn initializer(core: CoreRankEncoder) -> PyResult<PyClassInitializer<Self>> {
        let encoder = Arc::new(ModelEncoder::new(RankModel(core))?);
        Ok(PyClassInitializer::from(Encoder { calls: encoder }).add_subclass(RankEncoder))
    }
}

#[pymethods]
impl RankEncoder {
    #[new]
    fn new(
        py: Python<'_>,
        mergeable_ranks: HashMap<Vec<u8>, Rank>,
        special_tokens: HashMap<String, Rank>,
        pattern: &str,
    ) -> PyResult<PyClassInitializer<Self>> {
        let core = py
            .detach(|| CoreRankEncoder::new(mergeable_ranks, special_tokens, pattern))
            .map_err(to_py_err)?;
        Self::initializer(core)
    }

    /// Build straight from the contents of a `.tiktoken` file (no Python dict in between).
    #[staticmethod]
    fn from_tiktoken(
        py: Python<'_>,
        data: &[u8],
        special_tokens: HashMap<String, Rank>,
        pattern: &str,
    ) -> PyResult<Py<Self>> {
        let core = py
            .detach(|| bytepair_core::build::tiktoken_encoder(data, special_tokens, pattern))
            .map_err(to_py_err)?;
        Py::new(py, Self::initializer(core)?)
    }

    /// Build from GPT-2 files read as tiktoken reads them (ids are ranks): `encoder` is
    /// `encoder.json`, `merges_data` the bytes of `vocab.bpe`. Returns the encoder and its special
    /// tokens (the entries no merge makes, plus `special_tokens`).
    #[staticmethod]
    #[pyo3(signature = (encoder, merges_data, pattern, special_tokens=None))]
    fn from_gpt2(
        py: Python<'_>,
        encoder: HashMap<String, Rank>,
        merges_data: &[u8],
        pattern: &str,
        special_tokens: Option<HashMap<String, Rank>>,
    ) -> PyResult<(Py<Self>, HashMap<String, Rank>)> {
        let (core, specials) = py
            .detach(|| {
                let encoder: Vec<(String, Rank)> = encoder.into_iter().collect();
                let extra = special_tokens.unwrap_or_default();
                let (core, specials) =
                    bytepair_core::build::gpt2_encoder(&encoder, merges_data, pattern, extra)?;
                Ok::<_, Error>((core, specials.into_iter().collect::<HashMap<_, _>>()))
            })
            .map_err(to_py_err)?;
        Ok((Py::new(py, Self::initializer(core)?)?, specials))
    }
}
