//! The texts of a batch call, readable by worker threads without the interpreter.
//!
//! Where the bindings read CPython's string storage (`cpython::str_storage`), a text is its
//! characters as stored (one, two or four bytes each) and the thread that encodes it converts it
//! to UTF-8, into a buffer of its own, instead of the calling thread converting every text while
//! the others wait. Training reads its texts the same way (converted on the calling thread, but
//! with no UTF-8 copy left inside the strings).

use std::borrow::Cow;
use std::cell::RefCell;

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::types::PyString;

use bytepair_core::batch::with_scratch;

/// One text of a batch: its characters as the string stores them.
#[derive(Clone, Copy)]
#[allow(
    dead_code,
    reason = "a build makes only the variants of its `cpython::str_storage`"
)]
pub enum BatchText<'a> {
    /// One byte per character: ASCII (then the bytes are UTF-8 already) or Latin-1.
    Bytes(&'a [u8]),
    /// Two bytes per character (no character above U+FFFF; lone surrogates possible).
    Ucs2(&'a [u16]),
    /// Four bytes per character.
    Ucs4(&'a [u32]),
    /// UTF-8 from CPython, where the storage is not read (`cpython/portable_strings.rs`).
    Utf8(&'a str),
}

impl<'a> BatchText<'a> {
    /// Borrow `s`'s characters for as long as `s` is borrowed.
    pub fn of(s: &'a Bound<'_, PyString>) -> PyResult<Self> {
        crate::cpython::str_storage(s)
    }

    /// The number of characters (of bytes, for UTF-8).
    pub fn len(self) -> usize {
        match self {
            BatchText::Bytes(b) => b.len(),
            BatchText::Ucs2(u) => u.len(),
            BatchText::Ucs4(u) => u.len(),
            BatchText::Utf8(s) => s.len(),
        }
    }

    /// `f` of the text as UTF-8, converted into this thread's buffer if it is not UTF-8 already.
    /// A lone surrogate (no UTF-8 form) is a `UnicodeEncodeError`, as CPython's conversion gives.
    pub fn with_utf8<R>(self, f: impl FnOnce(&str) -> R) -> PyResult<R> {
        match self.as_str() {
            Some(s) => Ok(f(s)),
            None => with_scratch(&BUFFER, |buffer| {
                self.convert(buffer)?;
                Ok(f(buffer))
            }),
        }
    }

    /// The text as UTF-8: borrowed if it is UTF-8 already, else converted into a new string.
    pub fn to_utf8(self) -> PyResult<Cow<'a, str>> {
        match self.as_str() {
            Some(s) => Ok(Cow::Borrowed(s)),
            None => {
                let mut converted = String::new();
                self.convert(&mut converted)?;
                Ok(Cow::Owned(converted))
            }
        }
    }

    /// The text if its storage is UTF-8 already.
    fn as_str(self) -> Option<&'a str> {
        match self {
            BatchText::Utf8(s) => Some(s),
            // Only ASCII bytes are UTF-8 as they are: Latin-1 `Ã©` is the UTF-8 of `é`.
            BatchText::Bytes(b) if b.is_ascii() => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    /// Append the text to `out` as UTF-8.
    fn convert(self, out: &mut String) -> PyResult<()> {
        let converted = match self {
            BatchText::Utf8(s) => {
                out.push_str(s);
                Ok(())
            }
            // Latin-1: every byte is the character of that number.
            BatchText::Bytes(b) => {
                out.reserve(b.len() * 2);
                out.extend(b.iter().map(|&c| char::from(c)));
                Ok(())
            }
            BatchText::Ucs2(u) => push_chars(u.iter().map(|&c| u32::from(c)), u.len() * 3, out),
            BatchText::Ucs4(u) => push_chars(u.iter().copied(), u.len() * 4, out),
        };
        converted.map_err(|(position, unit)| surrogate(self, position, unit))
    }
}

/// Append the characters numbered `units`; the position and number of the first one that is
/// not a character (a surrogate) if there is one.
fn push_chars(
    units: impl Iterator<Item = u32>,
    room: usize,
    out: &mut String,
) -> Result<(), (usize, u32)> {
    out.reserve(room);
    for (position, unit) in units.enumerate() {
        out.push(char::from_u32(unit).ok_or((position, unit))?);
    }
    Ok(())
}

thread_local! {
    static BUFFER: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The error CPython raises for a string it cannot encode as UTF-8: the encoding, the text (its
/// surrogates shown as U+FFFD), where, and why.
fn surrogate(text: BatchText<'_>, position: usize, unit: u32) -> PyErr {
    let shown: String = match text {
        BatchText::Ucs2(u) => char::decode_utf16(u.iter().copied())
            .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
        BatchText::Ucs4(u) => u
            .iter()
            .map(|&c| char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER))
            .collect(),
        _ => String::new(),
    };
    PyUnicodeEncodeError::new_err((
        "utf-8",
        shown,
        position,
        position + 1,
        format!("surrogates not allowed (U+{unit:04X})"),
    ))
}
