//! SentencePiece's `.model` files: a serialized `ModelProto` (sentencepiece_model.proto, proto2).
//!
//! The messages are written out by hand with prost's derive (no protoc at build time), with only
//! the fields a tokenizer needs; prost skips the others, so files with fields added by newer
//! versions parse. Absent fields take the proto's declared defaults.

use prost::Message;

use crate::Error;

/// `ModelProto.SentencePiece`: one vocabulary entry.
#[derive(Clone, PartialEq, Message)]
pub struct PieceProto {
    #[prost(string, optional, tag = "1")]
    pub piece: Option<String>,
    #[prost(float, optional, tag = "2")]
    pub score: Option<f32>,
    /// `Type`: 1 NORMAL, 2 UNKNOWN, 3 CONTROL, 4 USER_DEFINED, 5 UNUSED, 6 BYTE.
    #[prost(int32, optional, tag = "3", default = "1")]
    pub kind: Option<i32>,
}

/// `TrainerSpec`, the fields that change how text is encoded or decoded.
#[derive(Clone, PartialEq, Message)]
pub struct TrainerSpecProto {
    /// 1 UNIGRAM, 2 BPE, 3 WORD, 4 CHAR.
    #[prost(int32, optional, tag = "3", default = "1")]
    pub model_type: Option<i32>,
    #[prost(int32, optional, tag = "4", default = "8000")]
    pub vocab_size: Option<i32>,
    #[prost(bool, optional, tag = "22", default = "true")]
    pub split_by_whitespace: Option<bool>,
    #[prost(bool, optional, tag = "24", default = "false")]
    pub treat_whitespace_as_suffix: Option<bool>,
    #[prost(bool, optional, tag = "25", default = "false")]
    pub split_digits: Option<bool>,
    #[prost(bool, optional, tag = "26", default = "false")]
    pub allow_whitespace_only_pieces: Option<bool>,
    #[prost(bool, optional, tag = "35", default = "false")]
    pub byte_fallback: Option<bool>,
    #[prost(int32, optional, tag = "40", default = "0")]
    pub unk_id: Option<i32>,
    #[prost(int32, optional, tag = "41", default = "1")]
    pub bos_id: Option<i32>,
    #[prost(int32, optional, tag = "42", default = "2")]
    pub eos_id: Option<i32>,
    #[prost(int32, optional, tag = "43", default = "-1")]
    pub pad_id: Option<i32>,
    #[prost(string, optional, tag = "44", default = " \u{2047} ")]
    pub unk_surface: Option<String>,
}

/// `NormalizerSpec`.
#[derive(Clone, PartialEq, Message)]
pub struct NormalizerSpecProto {
    #[prost(string, optional, tag = "1")]
    pub name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    pub precompiled_charsmap: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "3", default = "true")]
    pub add_dummy_prefix: Option<bool>,
    #[prost(bool, optional, tag = "4", default = "true")]
    pub remove_extra_whitespaces: Option<bool>,
    #[prost(bool, optional, tag = "5", default = "true")]
    pub escape_whitespaces: Option<bool>,
}

/// `ModelProto`.
#[derive(Clone, PartialEq, Message)]
pub struct ModelProto {
    #[prost(message, repeated, tag = "1")]
    pub pieces: Vec<PieceProto>,
    #[prost(message, optional, tag = "2")]
    pub trainer_spec: Option<TrainerSpecProto>,
    #[prost(message, optional, tag = "3")]
    pub normalizer_spec: Option<NormalizerSpecProto>,
}

/// The model algorithm a `.model` file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelType {
    Unigram,
    Bpe,
    Word,
    Char,
}

impl ModelType {
    /// The proto enum's name.
    pub fn name(self) -> &'static str {
        match self {
            ModelType::Unigram => "UNIGRAM",
            ModelType::Bpe => "BPE",
            ModelType::Word => "WORD",
            ModelType::Char => "CHAR",
        }
    }

    /// The type of a proto enum name.
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "UNIGRAM" => ModelType::Unigram,
            "BPE" => ModelType::Bpe,
            "WORD" => ModelType::Word,
            "CHAR" => ModelType::Char,
            _ => return None,
        })
    }

    fn number(self) -> i32 {
        match self {
            ModelType::Unigram => 1,
            ModelType::Bpe => 2,
            ModelType::Word => 3,
            ModelType::Char => 4,
        }
    }

    fn from_number(n: i32) -> Option<Self> {
        Some(match n {
            1 => ModelType::Unigram,
            2 => ModelType::Bpe,
            3 => ModelType::Word,
            4 => ModelType::Char,
            _ => return None,
        })
    }
}

/// The trainer settings a tokenizer needs, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainerSettings {
    pub vocab_size: i32,
    pub byte_fallback: bool,
    pub split_digits: bool,
    pub split_by_whitespace: bool,
    pub treat_whitespace_as_suffix: bool,
    pub allow_whitespace_only_pieces: bool,
    pub unk_id: i32,
    pub bos_id: i32,
    pub eos_id: i32,
    pub pad_id: i32,
    pub unk_surface: String,
}

/// The normalizer settings, defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalizerSettings {
    pub name: String,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub precompiled_charsmap: Vec<u8>,
}

/// A `.model` file as plain values: pieces as `(piece, score, type)`, id = index.
#[derive(Debug, Clone, PartialEq)]
pub struct SentencePieceModel {
    pub model_type: ModelType,
    pub pieces: Vec<(String, f32, i32)>,
    pub trainer: TrainerSettings,
    pub normalizer: NormalizerSettings,
}

/// Parse a `.model` file's bytes.
pub fn parse(data: &[u8]) -> Result<SentencePieceModel, Error> {
    let proto = ModelProto::decode(data).map_err(|e| {
        Error::InvalidArgument(format!(
            "sentencepiece model: {e} (in a file of {} bytes)",
            data.len()
        ))
    })?;
    let trainer = proto.trainer_spec.unwrap_or_default();
    let normalizer = proto.normalizer_spec.unwrap_or_default();
    let model_type = ModelType::from_number(trainer.model_type()).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "sentencepiece model: unknown model type {}",
            trainer.model_type()
        ))
    })?;
    let pieces = proto
        .pieces
        .iter()
        .map(|p| (p.piece().to_owned(), p.score(), p.kind()))
        .collect();
    Ok(SentencePieceModel {
        model_type,
        pieces,
        trainer: TrainerSettings {
            vocab_size: trainer.vocab_size(),
            byte_fallback: trainer.byte_fallback(),
            split_digits: trainer.split_digits(),
            split_by_whitespace: trainer.split_by_whitespace(),
            treat_whitespace_as_suffix: trainer.treat_whitespace_as_suffix(),
            allow_whitespace_only_pieces: trainer.allow_whitespace_only_pieces(),
            unk_id: trainer.unk_id(),
            bos_id: trainer.bos_id(),
            eos_id: trainer.eos_id(),
            pad_id: trainer.pad_id(),
            unk_surface: trainer.unk_surface().to_owned(),
        },
        normalizer: NormalizerSettings {
            name: normalizer.name().to_owned(),
            add_dummy_prefix: normalizer.add_dummy_prefix(),
            remove_extra_whitespaces: normalizer.remove_extra_whitespaces(),
            escape_whitespaces: normalizer.escape_whitespaces(),
            precompiled_charsmap: normalizer.precompiled_charsmap().to_vec(),
        },
    })
}

/// Serialize `model` as a `.model` file (every field written, defaults included).
pub fn write(model: &SentencePieceModel) -> Vec<u8> {
    let t = &model.trainer;
    let n = &model.normalizer;
    let proto = ModelProto {
        pieces: model
            .pieces
            .iter()
            .map(|(piece, score, kind)| PieceProto {
                piece: Some(piece.clone()),
                score: Some(*score),
                kind: Some(*kind),
            })
            .collect(),
        trainer_spec: Some(TrainerSpecProto {
            model_type: Some(model.model_type.number()),
            vocab_size: Some(t.vocab_size),
            split_by_whitespace: Some(t.split_by_whitespace),
            treat_whitespace_as_suffix: Some(t.treat_whitespace_as_suffix),
            split_digits: Some(t.split_digits),
            allow_whitespace_only_pieces: Some(t.allow_whitespace_only_pieces),
            byte_fallback: Some(t.byte_fallback),
            unk_id: Some(t.unk_id),
            bos_id: Some(t.bos_id),
            eos_id: Some(t.eos_id),
            pad_id: Some(t.pad_id),
            unk_surface: Some(t.unk_surface.clone()),
        }),
        normalizer_spec: Some(NormalizerSpecProto {
            name: Some(n.name.clone()),
            precompiled_charsmap: Some(n.precompiled_charsmap.clone()),
            add_dummy_prefix: Some(n.add_dummy_prefix),
            remove_extra_whitespaces: Some(n.remove_extra_whitespaces),
            escape_whitespaces: Some(n.escape_whitespaces),
        }),
    };
    proto.encode_to_vec()
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn empty_file_has_proto_defaults() {
        let m = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.model_type, ModelType::Unigram);
        assert!(m.normalizer.add_dummy_prefix);
        assert!(m.normalizer.remove_extra_whitespaces);
        assert!(m.normalizer.escape_whitespaces);
        assert!(!m.trainer.byte_fallback);
        assert!(m.trainer.split_by_whitespace);
        assert_eq!(
            (m.trainer.unk_id, m.trainer.bos_id, m.trainer.eos_id),
            (0, 1, 2)
        );
        assert_eq!(m.trainer.pad_id, -1);
        assert_eq!(m.trainer.unk_surface, " \u{2047} ");
    }

    #[test]
    fn write_then_parse_is_identity_and_unknown_fields_are_skipped() {
        let mut m = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        m.model_type = ModelType::Bpe;
        m.pieces = vec![("<unk>".into(), 0.0, 2), ("\u{2581}a".into(), -1.5, 1)];
        m.trainer.byte_fallback = true;
        m.normalizer.name = "identity".into();
        let mut data = write(&m);
        assert_eq!(parse(&data), Ok(m.clone()));
        // Field 99 (varint 7) and field 98 (bytes "xy") are no field of ModelProto.
        data.extend_from_slice(&[0x98, 0x06, 7, 0x92, 0x06, 2, b'x', b'y']);
        assert_eq!(parse(&data), Ok(m));
    }

    #[test]
    fn malformed_data_is_an_error() {
        let Err(e) = parse(&[0x0a, 0x05, 0x0a]) else {
            panic!("truncated data parsed")
        };
        assert!(e.to_string().starts_with("sentencepiece model: "), "{e}");
    }
}
