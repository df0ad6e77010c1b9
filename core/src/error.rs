//! The one error type of the core. The Python layer maps each variant to an exception.

use std::fmt;

/// What went wrong, with enough detail for a message that tells the user what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A vocabulary that cannot be used (missing byte, duplicate rank, ...).
    InvalidVocabulary(String),
    /// A pattern that the regex engine rejects, or that failed while matching.
    Pattern(String),
    /// A token id that is not in the vocabulary.
    UnknownId(u64),
    /// Bytes that are no token of the vocabulary.
    UnknownToken(Vec<u8>),
    /// Bad arguments (for example to the trainer).
    InvalidArgument(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidVocabulary(msg) => write!(f, "invalid vocabulary: {msg}"),
            Error::Pattern(msg) => write!(f, "pattern error: {msg}"),
            Error::UnknownId(id) => write!(f, "token id {id} is not in the vocabulary"),
            Error::UnknownToken(bytes) => {
                write!(
                    f,
                    "{:?} is not a token of the vocabulary",
                    String::from_utf8_lossy(bytes)
                )
            }
            Error::InvalidArgument(msg) => write!(f, "{msg}"),
        }
    }
}

impl std::error::Error for Error {}
