//! `SpecialSet`: special tokens of one encoder compiled for the `allowed` and `disallowed`
//! arguments, and the per-encoder cache of the matchers behind them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, TryLockError};

use bytepair_core::encoder::SpecialMatcher;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::DisallowedSpecial;

/// Tells encoders apart, so that a set is only used by the encoder that made it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct EncoderId(u64);

impl EncoderId {
    /// An id no other encoder of this process has.
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        EncoderId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Special tokens of one encoder compiled for search: what the `allowed` and `disallowed`
/// arguments take. Python builds one per distinct argument and keeps it, so a call converts no
/// list and looks up no matcher.
#[pyclass(frozen, module = "bytepair._core")]
pub struct SpecialSet {
    /// The encoder that made it: token ids mean nothing to another encoder.
    pub encoder: EncoderId,
    pub matcher: Arc<SpecialMatcher>,
    /// Which added tokens are recognised when this set is allowed (models with added tokens).
    pub enabled_added: Vec<bool>,
}

impl SpecialSet {
    /// `DisallowedSpecial` for the first token of this set in `text`.
    pub fn refuse_in(&self, text: &str) -> PyResult<()> {
        match self.matcher.find(text, 0) {
            Some((s, e, _)) => Err(DisallowedSpecial::new_err(
                text.get(s..e).unwrap_or_default().to_owned(),
            )),
            None => Ok(()),
        }
    }
}

/// `DisallowedSpecial` for the first token of `disallowed` (if any) in `text`.
pub fn refuse(text: &str, disallowed: Option<&SpecialSet>) -> PyResult<()> {
    disallowed.map_or(Ok(()), |d| d.refuse_in(text))
}

/// `set` if the encoder `encoder` (of Python class `class`) made it, else a `ValueError`.
pub fn made_by<'a>(
    set: Option<&'a SpecialSet>,
    encoder: EncoderId,
    class: &str,
) -> PyResult<Option<&'a SpecialSet>> {
    match set {
        Some(s) if s.encoder != encoder => Err(PyValueError::new_err(format!(
            "this SpecialSet belongs to another {class}"
        ))),
        other => Ok(other),
    }
}

/// Most distinct sets of names whose matchers one encoder keeps.
const KEPT_MATCHERS: usize = 64;

/// The matchers of one encoder for sets of its special tokens, built on first use.
pub struct Matchers {
    /// All of the encoder's special tokens: the common `allowed_special="all"`.
    all: Arc<SpecialMatcher>,
    /// How many special tokens `all` has.
    count: usize,
    cache: Mutex<HashMap<Vec<String>, Arc<SpecialMatcher>>>,
}

impl Matchers {
    pub fn new(all: SpecialMatcher, count: usize) -> Self {
        Matchers {
            all: Arc::new(all),
            count,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The matcher of `names` (sorted and without repeats); `build` makes one from names all
    /// known to be special tokens, or says which is not. `is_special` tells special tokens.
    pub fn get<E>(
        &self,
        mut names: Vec<String>,
        is_special: impl Fn(&str) -> bool,
        build: impl FnOnce(&[String]) -> Result<SpecialMatcher, E>,
    ) -> Result<Arc<SpecialMatcher>, E> {
        names.sort_unstable();
        names.dedup();
        if names.len() == self.count && names.iter().all(|n| is_special(n)) {
            return Ok(Arc::clone(&self.all));
        }
        // Never wait for the cache: a lock held by another thread when the process forks stays
        // held for ever in the child (a deadlock), and building a matcher is cheap.
        let cached = match self.cache.try_lock() {
            Ok(cache) => cache.get(&names).cloned(),
            Err(TryLockError::Poisoned(p)) => p.into_inner().get(&names).cloned(),
            Err(TryLockError::WouldBlock) => None,
        };
        if let Some(m) = cached {
            return Ok(m);
        }
        let m = Arc::new(build(&names)?);
        if let Ok(mut cache) = self.cache.try_lock() {
            if cache.len() < KEPT_MATCHERS {
                cache.insert(names, Arc::clone(&m));
            }
        }
        Ok(m)
    }
}
