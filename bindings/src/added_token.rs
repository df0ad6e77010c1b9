//! `AddedToken`: one added token of a Hugging Face tokenizer, as `PairEncoder` takes it.

use bytepair_core::Rank;
use bytepair_core::vocab::added;
use pyo3::prelude::*;

/// An added token: what `tokenizers` finds in text before normalizing and pre-tokenizing it.
/// `pattern` is what is searched for: `content`, or for a `normalized` token the content as the
/// normalizer rewrites it (the default is `content`).
#[pyclass(frozen, module = "bytepair._core")]
pub struct AddedToken(pub added::AddedToken);

#[pymethods]
impl AddedToken {
    #[new]
    #[pyo3(signature = (content, id, *, special, pattern=None, single_word=false, lstrip=false, rstrip=false, normalized=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        content: String,
        id: Rank,
        special: bool,
        pattern: Option<String>,
        single_word: bool,
        lstrip: bool,
        rstrip: bool,
        normalized: bool,
    ) -> Self {
        AddedToken(added::AddedToken {
            pattern: pattern.unwrap_or_else(|| content.clone()),
            content,
            id,
            special,
            single_word,
            lstrip,
            rstrip,
            normalized,
        })
    }

    fn __repr__(&self) -> String {
        let t = &self.0;
        format!(
            "AddedToken({:?}, {}, special={}, pattern={:?}, single_word={}, lstrip={}, \
             rstrip={}, normalized={})",
            t.content,
            t.id,
            py_bool(t.special),
            t.pattern,
            py_bool(t.single_word),
            py_bool(t.lstrip),
            py_bool(t.rstrip),
            py_bool(t.normalized)
        )
    }
}

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}
