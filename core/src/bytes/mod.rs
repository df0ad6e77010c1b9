//! Bytes before any vocabulary: the GPT-2 byte alphabet of text formats ([`byte_map`]) and short
//! byte strings packed into integers for table keys (`packed`).

pub mod byte_map;
pub(crate) mod packed;
