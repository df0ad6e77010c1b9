//! Vocabulary file formats that are worth parsing in Rust (they sit on the construction path).
//! Policy (finding files, naming errors after paths) lives in the Python package.

pub mod hf;
pub mod hf_tables;
pub mod sentencepiece;
pub mod tiktoken;
