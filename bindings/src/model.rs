//! What the bindings need of a tokenizer model ([`Model`]), and the encoder built on any model
//! ([`ModelEncoder`]): special-token sets, lists of ids, batches. Each model's Python class
//! (`rank_encoder.rs`, `pair_encoder.rs`) is a [`ModelEncoder`] of its model; the methods all
//! models share are those of their base class (`encoder.rs`), through [`EncoderCalls`].

use bytepair_core::encoder::SpecialMatcher;
use bytepair_core::{Encoder as CoreEncoder, Error, Rank};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyList, PyString};

use crate::batch::{count_texts, encode_texts};
use crate::cpython::IdLists;
use crate::errors::to_py_err;
use crate::special_set::{EncoderId, Matchers, SpecialSet, refuse};
use bytepair_core::batch::with_id_buffer;

/// A tokenizer model of the core, as the bindings use it.
pub trait Model: Send + Sync + 'static {
    /// The Python class of this model's encoders, for messages.
    const CLASS: &'static str;

    /// The core's encoder of this model.
    type Core: CoreEncoder + Send + Sync;

    /// The core's encoder: tokens, special tokens, pre-tokenizer, decoding.
    fn vocabulary(&self) -> &Self::Core;

    /// Append the ids of `text` with no special token allowed.
    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<(), Error>;

    /// The number of ids [`Model::encode_ordinary_into`] would append.
    fn count_ordinary(&self, text: &str) -> Result<usize, Error>;

    /// Append the ids of `text`, the special tokens of `allowed` as their ids.
    fn encode_into(
        &self,
        text: &str,
        allowed: &SpecialSet,
        out: &mut Vec<Rank>,
    ) -> Result<(), Error>;

    /// The number of ids [`Model::encode_into`] would append.
    fn count(&self, text: &str, allowed: &SpecialSet) -> Result<usize, Error>;

    /// Which added tokens count when the special tokens `allowed` are allowed (empty for a
    /// model without added tokens).
    fn enabled_added(&self, allowed: &[String]) -> Vec<bool>;

    /// Why tiktoken's rank rule would give other ids on some text, if it would.
    fn rank_equivalence(&self) -> Result<(), String>;
}

/// The calls that every model's encoder answers: the methods of the Python base class
/// `Encoder`, and what `EncodingBase` calls for the default arguments.
pub trait EncoderCalls: Send + Sync {
    /// The id that its special sets carry.
    fn id(&self) -> EncoderId;
    /// The Python class of the encoder, for messages.
    fn class(&self) -> &'static str;
    /// The core's encoder: tokens, special tokens, pre-tokenizer, decoding.
    fn vocabulary(&self) -> &dyn CoreEncoder;
    fn rank_equivalence(&self) -> Result<(), String>;

    fn special_set(&self, names: Vec<String>) -> PyResult<SpecialSet>;
    fn find_special(
        &self,
        text: &str,
        names: Vec<String>,
    ) -> PyResult<Option<(usize, usize, String)>>;

    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>>;
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Bound<'py, PyList>>;
    fn encode_to_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>>;
    fn count_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<usize>;
    fn count(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<usize>;

    fn encode_ordinary_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &[Bound<'py, PyString>],
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>>;
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &[Bound<'py, PyString>],
        num_threads: usize,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Bound<'py, PyList>>;
    fn count_batch(
        &self,
        py: Python<'_>,
        texts: &[Bound<'_, PyString>],
        num_threads: usize,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Vec<usize>>;

    fn encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>>;
}

/// The encoder of one model: the model and what the bindings keep beside it.
pub struct ModelEncoder<M> {
    pub model: M,
    id: EncoderId,
    matchers: Matchers,
    lists: IdLists,
}

impl<M: Model> ModelEncoder<M> {
    pub fn new(model: M) -> PyResult<Self> {
        let vocabulary = model.vocabulary();
        let specials = vocabulary.specials();
        let all = vocabulary
            .special_matcher(specials.keys().map(String::as_str))
            .map_err(to_py_err)?;
        let count = specials.len();
        Ok(ModelEncoder {
            model,
            id: EncoderId::new(),
            matchers: Matchers::new(all, count),
            lists: IdLists::new(),
        })
    }

    /// `ids` as a Python list of ints.
    pub fn id_list<'py>(&self, py: Python<'py>, ids: &[Rank]) -> PyResult<Bound<'py, PyList>> {
        self.lists.list(py, ids, self.model.vocabulary().id_bound())
    }

    fn matcher(&self, names: Vec<String>) -> PyResult<std::sync::Arc<SpecialMatcher>> {
        let vocabulary = self.model.vocabulary();
        let specials = vocabulary.specials();
        self.matchers
            .get(
                names,
                |n| specials.contains_key(n),
                |names| vocabulary.special_matcher(names.iter().map(String::as_str)),
            )
            .map_err(to_py_err)
    }

    /// `make` of the ids of `text` (as `encode_one_into`), encoded detached into this thread's
    /// id buffer.
    fn with_encoded<'py, R>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
        make: impl FnOnce(&[Rank]) -> PyResult<R>,
    ) -> PyResult<R> {
        with_id_buffer(|ids| {
            py.detach(|| self.encode_one_into(text, allowed, disallowed, ids))?;
            make(ids)
        })
    }

    /// Append the ids of `text` to `out` after checking that it spells no token of
    /// `disallowed`: specials of `allowed` become their ids, the rest is ordinary text.
    fn encode_one_into(
        &self,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
        out: &mut Vec<Rank>,
    ) -> PyResult<()> {
        refuse(text, disallowed)?;
        match allowed {
            None => self.model.encode_ordinary_into(text, out),
            Some(a) => self.model.encode_into(text, a, out),
        }
        .map_err(to_py_err)
    }

    fn count_one(
        &self,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<usize> {
        refuse(text, disallowed)?;
        match allowed {
            None => self.model.count_ordinary(text),
            Some(a) => self.model.count(text, a),
        }
        .map_err(to_py_err)
    }
}

/// `Ok` once numpy imports. The `numpy` crate panics when it cannot (it looks numpy's C API up
/// on first use), so every path that makes an array asks here first, and a missing numpy is
/// the `ImportError` of importing it.
fn numpy_importable(py: Python<'_>) -> PyResult<()> {
    static IMPORTED: PyOnceLock<()> = PyOnceLock::new();
    IMPORTED
        .get_or_try_init(py, || py.import("numpy").map(drop))
        .map(drop)
}

impl<M: Model> EncoderCalls for ModelEncoder<M> {
    fn id(&self) -> EncoderId {
        self.id
    }

    fn class(&self) -> &'static str {
        M::CLASS
    }

    fn vocabulary(&self) -> &dyn CoreEncoder {
        self.model.vocabulary()
    }

    fn rank_equivalence(&self) -> Result<(), String> {
        self.model.rank_equivalence()
    }

    fn special_set(&self, names: Vec<String>) -> PyResult<SpecialSet> {
        let enabled_added = self.model.enabled_added(&names);
        Ok(SpecialSet {
            encoder: self.id,
            matcher: self.matcher(names)?,
            enabled_added,
        })
    }

    fn find_special(
        &self,
        text: &str,
        names: Vec<String>,
    ) -> PyResult<Option<(usize, usize, String)>> {
        let m = self.matcher(names)?;
        Ok(m.find(text, 0)
            .and_then(|(s, e, _)| text.get(s..e).map(|t| (s, e, t.to_owned()))))
    }

    fn encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyList>> {
        let repaired;
        let text = match text.to_str() {
            Ok(text) => text,
            // Lone surrogates have no UTF-8 form. As tiktoken does: pair up what can be
            // paired, replace the rest with U+FFFD.
            Err(_) => {
                repaired = text
                    .call_method1("encode", ("utf-16", "surrogatepass"))?
                    .call_method1("decode", ("utf-16", "replace"))?
                    .cast_into::<PyString>()?;
                repaired.to_str()?
            }
        };
        with_id_buffer(|ids| {
            py.detach(|| self.model.encode_ordinary_into(text, ids))
                .map_err(to_py_err)?;
            self.id_list(py, ids)
        })
    }

    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.with_encoded(py, text, allowed, disallowed, |ids| self.id_list(py, ids))
    }

    fn encode_to_numpy<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        numpy_importable(py)?;
        self.with_encoded(py, text, allowed, disallowed, |ids| {
            Ok(PyArray1::from_slice(py, ids))
        })
    }

    fn count_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<usize> {
        py.detach(|| self.model.count_ordinary(text))
            .map_err(to_py_err)
    }

    fn count(
        &self,
        py: Python<'_>,
        text: &str,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<usize> {
        py.detach(|| self.count_one(text, allowed, disallowed))
    }

    fn encode_ordinary_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &[Bound<'py, PyString>],
        num_threads: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        encode_texts(
            py,
            texts,
            num_threads,
            None,
            |t, out| self.model.encode_ordinary_into(t, out).map_err(to_py_err),
            |ids| self.id_list(py, ids),
        )
    }

    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &[Bound<'py, PyString>],
        num_threads: usize,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Bound<'py, PyList>> {
        encode_texts(
            py,
            texts,
            num_threads,
            disallowed,
            |t, out| self.encode_one_into(t, allowed, None, out),
            |ids| self.id_list(py, ids),
        )
    }

    fn count_batch(
        &self,
        py: Python<'_>,
        texts: &[Bound<'_, PyString>],
        num_threads: usize,
        allowed: Option<&SpecialSet>,
        disallowed: Option<&SpecialSet>,
    ) -> PyResult<Vec<usize>> {
        count_texts(py, texts, num_threads, |t| {
            self.count_one(t, allowed, disallowed)
        })
    }

    fn encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .detach(|| self.model.vocabulary().encode_bytes(data))
            .map_err(to_py_err)?;
        self.id_list(py, &ids)
    }
}
