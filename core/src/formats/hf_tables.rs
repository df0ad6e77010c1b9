//! A `tokenizer.json`'s `model.vocab` and `model.merges` read straight into compact vectors.
//!
//! Parsed by Python, a vocabulary of a million entries costs over 400 bytes each before the
//! encoder exists. Here the two tables are read once, without a JSON tree, and the rest of the
//! document (with `{}` and `[]` in their place, newlines kept so lines still match the file)
//! goes back to Python, which keeps its policy and error messages for it. Anything unusual in
//! the tables (a repeated key or id, an id that is not a small integer, a malformed merge)
//! declines (`None`), and the caller parses the whole file as before to say what is wrong.

use std::fmt;

use rustc_hash::FxHashSet;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::hf::MergeList;
use crate::Rank;
use crate::vocab::by_id::MAX_ID;

/// The tables of a `tokenizer.json` and the document without them.
#[derive(Debug, Default)]
pub struct ModelTables {
    /// `model.vocab` in file order.
    pub vocab: Vec<(String, Rank)>,
    /// `model.merges` (`"a b"` strings or `[a, b]` pairs), empty when absent.
    pub merges: MergeList,
    /// The document with the tables replaced by `{}` and `[]`.
    pub rest: String,
}

#[derive(Deserialize)]
struct Top<'a> {
    #[serde(borrow)]
    model: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Model<'a> {
    #[serde(borrow)]
    vocab: Option<&'a RawValue>,
    #[serde(borrow)]
    merges: Option<&'a RawValue>,
}

/// Split the tables off a `tokenizer.json` (UTF-8, an optional BOM); `None` when the file is
/// not one whose tables read cleanly (see the module's documentation).
pub fn split_model_tables(data: &[u8]) -> Option<ModelTables> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let text = std::str::from_utf8(data).ok()?;
    let top: Top<'_> = serde_json::from_str(text).ok()?;
    let model_raw = top.model?;
    if !model_raw.get().starts_with('{') {
        return None;
    }
    let model: Model<'_> = serde_json::from_str(model_raw.get()).ok()?;
    let vocab_raw = model.vocab?;
    let vocab = read_vocab(vocab_raw.get())?;
    let merges = match model.merges {
        Some(raw) => {
            let mut d = serde_json::Deserializer::from_str(raw.get());
            MergesSeed.deserialize(&mut d).ok()?
        }
        None => Vec::new(),
    };
    let mut spans = vec![(span(text, vocab_raw), "{}")];
    if let Some(raw) = model.merges {
        spans.push((span(text, raw), "[]"));
    }
    spans.sort_unstable();
    let mut rest = String::with_capacity(text.len() / 64);
    let mut at = 0;
    for ((start, end), empty) in spans {
        rest.push_str(&text[at..start]);
        rest.push_str(empty);
        rest.extend(
            text[start..end]
                .bytes()
                .filter(|&b| b == b'\n')
                .map(|_| '\n'),
        );
        at = end;
    }
    rest.push_str(&text[at..]);
    Some(ModelTables {
        vocab,
        merges: MergeList {
            merges,
            lines: None,
        },
        rest,
    })
}

/// Where `raw` (borrowed from `text`) lies in `text`.
fn span(text: &str, raw: &RawValue) -> (usize, usize) {
    let start = raw.get().as_ptr() as usize - text.as_ptr() as usize;
    (start, start + raw.get().len())
}

fn read_vocab(raw: &str) -> Option<Vec<(String, Rank)>> {
    let mut d = serde_json::Deserializer::from_str(raw);
    let vocab = VocabSeed.deserialize(&mut d).ok()?;
    if vocab.is_empty() {
        return None;
    }
    let mut keys: FxHashSet<&str> = FxHashSet::default();
    keys.reserve(vocab.len());
    let mut ids = vec![false; vocab.iter().map(|t| t.1 as usize + 1).max().unwrap_or(0)];
    for (token, id) in &vocab {
        let seen = ids.get_mut(*id as usize)?;
        if *seen || !keys.insert(token) {
            return None;
        }
        *seen = true;
    }
    Some(vocab)
}

struct VocabSeed;

impl<'de> DeserializeSeed<'de> for VocabSeed {
    type Value = Vec<(String, Rank)>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for VocabSeed {
    type Value = Vec<(String, Rank)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object of token -> id")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((token, id)) = map.next_entry::<String, u64>()? {
            let id = Rank::try_from(id)
                .ok()
                .filter(|&id| id < MAX_ID)
                .ok_or_else(|| de::Error::custom("id out of range"))?;
            out.push((token, id));
        }
        Ok(out)
    }
}

struct MergesSeed;

impl<'de> DeserializeSeed<'de> for MergesSeed {
    type Value = Vec<(String, String)>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for MergesSeed {
    type Value = Vec<(String, String)>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of merges")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Merge(left, right)) = seq.next_element::<Merge>()? {
            out.push((left, right));
        }
        Ok(out)
    }
}

/// `"left right"` (exactly one space, as Python's `split(" ")` into two parts) or `[left, right]`.
struct Merge(String, String);

impl<'de> Deserialize<'de> for Merge {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MergeVisitor)
    }
}

struct MergeVisitor;

impl<'de> Visitor<'de> for MergeVisitor {
    type Value = Merge;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"left right\" or [left, right]")
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Merge, E> {
        let mut parts = s.split(' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(left), Some(right), None) => Ok(Merge(left.to_owned(), right.to_owned())),
            _ => Err(E::custom("not two parts")),
        }
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Merge, A::Error> {
        let left = seq.next_element::<String>()?;
        let right = seq.next_element::<String>()?;
        match (left, right, seq.next_element::<de::IgnoredAny>()?) {
            (Some(left), Some(right), None) => Ok(Merge(left, right)),
            _ => Err(de::Error::custom("not a pair")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_split_off_and_lines_kept() {
        let doc = "{\"a\": 1,\n \"model\": {\"type\": \"BPE\", \"vocab\": {\"x\": 0,\n\"y\": 1, \"xy\": 2},\n \"merges\": [\"x y\", [\"x\", \"y\"]]},\n \"z\": [1]}";
        let t = split_model_tables(doc.as_bytes()).unwrap_or_default();
        assert_eq!(
            t.vocab,
            vec![("x".into(), 0), ("y".into(), 1), ("xy".into(), 2)]
        );
        assert_eq!(t.merges.merges, vec![("x".into(), "y".into()); 2]);
        let rest: serde_json::Value = serde_json::from_str(&t.rest).unwrap_or_default();
        assert_eq!(rest["model"]["vocab"], serde_json::json!({}));
        assert_eq!(rest["model"]["merges"], serde_json::json!([]));
        assert_eq!(rest["z"], serde_json::json!([1]));
        assert_eq!(t.rest.lines().count(), doc.lines().count());
    }

    #[test]
    fn anything_unusual_declines() {
        for doc in [
            r#"{"model": {"vocab": {"x": 0, "x": 1}}}"#,
            r#"{"model": {"vocab": {"x": 0, "y": 0}}}"#,
            r#"{"model": {"vocab": {"x": -1}}}"#,
            r#"{"model": {"vocab": {"x": 1.0}}}"#,
            r#"{"model": {"vocab": {"x": true}}}"#,
            r#"{"model": {"vocab": {"x": 268435456}}}"#,
            r#"{"model": {"vocab": {}}}"#,
            r#"{"model": {"vocab": {"x": 0}, "merges": ["x  y"]}}"#,
            r#"{"model": {"vocab": {"x": 0}, "merges": [["x", "y", "z"]]}}"#,
            r#"{"model": {"vocab": {"x": 0}, "merges": [3]}}"#,
            r#"{"model": {"vocab": {"x": 0}}, "model": {}}"#,
            r#"{"model": [1]}"#,
            r#"{"model": {"vocab": {"x": 0}}"#,
            "{\"model\": {\"vocab\": {\"\\ud800\": 0}}}",
        ] {
            assert!(split_model_tables(doc.as_bytes()).is_none(), "{doc}");
        }
        assert!(split_model_tables(b"\xef\xbb\xbf{\"model\": {\"vocab\": {\"x\": 0}}}").is_some());
    }
}
