//! `EncodingBase`: the compiled base class of `bytepair.Encoding`, whose `encode`, `count` and
//! `encode_ordinary` run the default call (one text, default arguments) in one compiled call,
//! with no Python frame, and pass every other call to the Python method that handles it.
//!
//! The default call is the common one, and the Python frame around it would cost a large part
//! of counting a short prompt. As methods of the class (not of each instance) they stay
//! `Encoding`'s own: a subclass that overrides one gets its own, and `super()` reaches these.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple, PyType};

use crate::cpython::rebind_methods;
use crate::encoder::Encoder;
use crate::errors::DisallowedSpecial;
use crate::model::EncoderCalls;
use crate::special_set::{SpecialSet, made_by};

/// The allowed and disallowed sets of a call (`None`: no token).
type SpecialArguments = (Option<Py<SpecialSet>>, Option<Py<SpecialSet>>);

/// What the compiled calls of one encoding run.
struct CompiledCalls {
    encoder: Arc<dyn EncoderCalls>,
    /// Whether `encode_ordinary` is the encoder's (lone surrogates included).
    ordinary: bool,
    /// The allowed and disallowed sets of `encode` and `count` with default arguments, when
    /// the encoder alone answers those calls.
    default_specials: Option<SpecialArguments>,
}

/// The base class of `bytepair.Encoding` (see the module documentation).
#[pyclass(frozen, subclass, module = "bytepair._core")]
pub struct EncodingBase {
    compiled: OnceLock<CompiledCalls>,
    /// Set when an encoding is initialised a second time: from then on every call goes to the
    /// Python methods, which read the encoding's current state.
    reinitialised: AtomicBool,
}

impl EncodingBase {
    fn compiled(&self) -> Option<&CompiledCalls> {
        if self.reinitialised.load(Ordering::Relaxed) {
            return None;
        }
        self.compiled.get()
    }

    /// The default call's answer, or `None` if it must go to the Python method: keyword
    /// arguments, a text that is no str or has lone surrogates, or one that spells a
    /// disallowed special token (so that the error is the one the method words).
    fn default_call<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyAny>,
        kwargs: Option<&Bound<'py, PyDict>>,
        call: DefaultCall,
    ) -> PyResult<Option<Py<PyAny>>> {
        if kwargs.is_some_and(|k| !k.is_empty()) {
            return Ok(None);
        }
        let Some(compiled) = self.compiled() else {
            return Ok(None);
        };
        let Ok(text) = text.cast::<PyString>() else {
            return Ok(None);
        };
        let encoder = &compiled.encoder;
        if let DefaultCall::EncodeOrdinary = call {
            return if compiled.ordinary {
                encoder
                    .encode_ordinary(py, text)
                    .map(|ids| Some(ids.into_any().unbind()))
            } else {
                Ok(None)
            };
        }
        let Some((allowed, disallowed)) = &compiled.default_specials else {
            return Ok(None);
        };
        let Ok(text) = text.to_str() else {
            return Ok(None);
        };
        let allowed = allowed.as_ref().map(Py::get);
        let disallowed = disallowed.as_ref().map(Py::get);
        let done = match call {
            DefaultCall::Count => encoder.count(py, text, allowed, disallowed).map(|n| {
                n.into_pyobject(py)
                    .map_or_else(|e| match e {}, |n| n.into_any().unbind())
            }),
            _ => encoder
                .encode(py, text, allowed, disallowed)
                .map(|ids| ids.into_any().unbind()),
        };
        match done {
            Err(e) if e.is_instance_of::<DisallowedSpecial>(py) => Ok(None),
            done => done.map(Some),
        }
    }

    /// `call` of `text`: the default call in one step, or the Python method `general`.
    fn call<'py>(
        slf: &Bound<'py, Self>,
        text: &Bound<'py, PyAny>,
        kwargs: Option<&Bound<'py, PyDict>>,
        call: DefaultCall,
        general: &Bound<'py, PyString>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if let Some(done) = slf.get().default_call(py, text, kwargs, call)? {
            return Ok(done);
        }
        slf.call_method(general, (text,), kwargs).map(Bound::unbind)
    }
}

/// Which of the compiled calls.
#[derive(Clone, Copy)]
enum DefaultCall {
    Encode,
    Count,
    EncodeOrdinary,
}

#[pymethods]
impl EncodingBase {
    /// Takes (and leaves) whatever the subclass's `__init__` takes.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        EncodingBase {
            compiled: OnceLock::new(),
            reinitialised: AtomicBool::new(false),
        }
    }

    /// Called for each new subclass: a direct subclass (`bytepair.Encoding`) gets the compiled
    /// methods as its own where it inherits them (see `cpython::rebind_methods`). Its subclasses
    /// inherit those as they are: methods of theirs would be documented in their modules, where
    /// doctest would then run `Encoding`'s examples.
    #[classmethod]
    fn __init_subclass__(cls: &Bound<'_, PyType>) -> PyResult<()> {
        let base = cls.py().get_type::<EncodingBase>();
        if !cls
            .getattr(intern!(cls.py(), "__bases__"))?
            .contains(&base)?
        {
            return Ok(());
        }
        rebind_methods(cls, &base, &["encode", "count", "encode_ordinary"])
    }

    /// Let the compiled calls answer for `encoder`: `encode_ordinary` if `ordinary`, and
    /// `encode` and `count` with default arguments if `default_specials` (their allowed and
    /// disallowed sets) is given. Called once, by `__init__`; a second call (the encoding
    /// initialised again) sends every call to the Python methods from then on.
    #[pyo3(signature = (encoder, *, ordinary, default_specials))]
    fn _set_compiled_calls(
        &self,
        encoder: &Bound<'_, Encoder>,
        ordinary: bool,
        default_specials: Option<SpecialArguments>,
    ) -> PyResult<()> {
        let encoder = Arc::clone(&encoder.get().calls);
        if let Some((allowed, disallowed)) = &default_specials {
            for set in [allowed, disallowed].into_iter().flatten() {
                made_by(Some(set.get()), encoder.id(), encoder.class())?;
            }
        }
        let compiled = CompiledCalls {
            encoder,
            ordinary,
            default_specials,
        };
        if self.compiled.set(compiled).is_err() {
            self.reinitialised.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Encode `text`; special tokens follow tiktoken's rules.
    ///
    /// By default any text that spells a special token raises ``ValueError`` (it may be an
    /// injection attempt); allow it with ``allowed_special={...}`` or ``"all"``, or encode it
    /// as plain text with ``disallowed_special=()``.
    ///
    /// >>> ranks = {bytes([b]): b for b in range(256)}
    /// >>> enc = Encoding("t", pat_str=r".", mergeable_ranks=ranks, special_tokens={"<s>": 256})
    /// >>> enc.encode("a<s>", allowed_special={"<s>"})
    /// [97, 256]
    /// >>> enc.encode("a<s>", disallowed_special=())
    /// [97, 60, 115, 62]
    ///
    /// An encoding read from Hugging Face files follows the same rules for its special added
    /// tokens (``allowed_special="all"`` gives the ids of ``tokenizers.Tokenizer.encode``); its
    /// non-special added tokens are vocabulary, recognised always. Its post-processor adds the
    /// model's tokens (``<s>`` ... ``</s>``) unless ``add_special_tokens=False``; this does
    /// nothing for tiktoken files, which have no post-processor.
    ///
    /// (The call with default arguments runs compiled; any other goes to ``_encode_general``.)
    #[pyo3(
        signature = (text, **kwargs),
        text_signature = "($self, text, *, allowed_special=(), disallowed_special='all', add_special_tokens=True)"
    )]
    fn encode<'py>(
        slf: &Bound<'py, Self>,
        text: &Bound<'py, PyAny>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let general = intern!(slf.py(), "_encode_general");
        Self::call(slf, text, kwargs, DefaultCall::Encode, general)
    }

    /// The number of tokens :meth:`encode` would return, without building the list.
    ///
    /// >>> enc = Encoding("b", pat_str=r".", mergeable_ranks={bytes([b]): b for b in range(256)},
    /// ...                special_tokens={})
    /// >>> enc.count("héllo")
    /// 6
    ///
    /// (The call with default arguments runs compiled; any other goes to ``_count_general``.)
    #[pyo3(
        signature = (text, **kwargs),
        text_signature = "($self, text, *, allowed_special=(), disallowed_special='all', add_special_tokens=True)"
    )]
    fn count<'py>(
        slf: &Bound<'py, Self>,
        text: &Bound<'py, PyAny>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let general = intern!(slf.py(), "_count_general");
        Self::call(slf, text, kwargs, DefaultCall::Count, general)
    }

    /// Encode ``text`` ignoring special tokens (special-looking text is ordinary text).
    ///
    /// >>> ranks = {bytes([b]): b for b in range(256)}
    /// >>> enc = Encoding("bytes", pat_str=r".", mergeable_ranks=ranks, special_tokens={})
    /// >>> enc.encode_ordinary("hi")
    /// [104, 105]
    ///
    /// For an encoding read from Hugging Face files, "ordinary" means what ``tokenizers`` does
    /// with ``encode_special_tokens = True`` and ``add_special_tokens=False``: special added
    /// tokens are text, non-special added tokens (part of the vocabulary) are still recognised.
    ///
    /// (Runs compiled where the encoder does all of it; otherwise ``_encode_ordinary_general``.)
    fn encode_ordinary<'py>(
        slf: &Bound<'py, Self>,
        text: &Bound<'py, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let general = intern!(slf.py(), "_encode_ordinary_general");
        Self::call(slf, text, None, DefaultCall::EncodeOrdinary, general)
    }
}
