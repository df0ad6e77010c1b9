//! Normalization before the merge: sentencepiece's `Normalizer::Normalize` with the identity
//! rule (whitespace handling only), or Hugging Face's Metaspace replacement and prepend.

use aho_corasick::AhoCorasick;

/// How text becomes the normalized string the merge sees.
#[derive(Debug, Clone)]
pub(super) struct Normalizer {
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    pub treat_whitespace_as_suffix: bool,
    pub replacement: char,
    /// Hugging Face's rule: the prefix only when the text does not already start with the
    /// replacement (sentencepiece adds its dummy prefix unconditionally).
    pub prefix_if_absent: bool,
    /// The user-defined pieces, which sentencepiece's normalizer copies whole.
    pub user: Option<AhoCorasick>,
}

impl Normalizer {
    /// Append the normalized form of `text` to `out`; `prefix`: whether the dummy prefix applies.
    pub fn normalize(&self, text: &str, prefix: bool, out: &mut String) {
        if text.is_empty() {
            return;
        }
        let ws = if self.escape_whitespaces {
            self.replacement
        } else {
            ' '
        };
        if !self.remove_extra_whitespaces {
            let prefix = prefix
                && !(self.prefix_if_absent
                    && (text.starts_with(self.replacement)
                        || (self.escape_whitespaces && text.starts_with(' '))));
            if prefix && !self.treat_whitespace_as_suffix {
                out.push(ws);
            }
            if self.escape_whitespaces {
                let mut last = 0;
                for at in memchr::memchr_iter(b' ', text.as_bytes()) {
                    out.push_str(&text[last..at]);
                    out.push(ws);
                    last = at + 1;
                }
                out.push_str(&text[last..]);
            } else {
                out.push_str(text);
            }
            if prefix && self.treat_whitespace_as_suffix {
                out.push(ws);
            }
            return;
        }
        self.normalize_collapsing(text, prefix, ws, out);
    }

    /// sentencepiece's loop with `remove_extra_whitespaces`: leading spaces dropped, runs of
    /// spaces collapsed to one, trailing ones (escaped) dropped; a user-defined piece is one unit.
    fn normalize_collapsing(&self, text: &str, prefix: bool, ws: char, out: &mut String) {
        let text = text.trim_start_matches(' ');
        if text.is_empty() {
            return;
        }
        let start = out.len();
        if prefix && !self.treat_whitespace_as_suffix {
            out.push(ws);
        }
        let mut prev_space = true;
        let mut unit = |u: &str, out: &mut String| {
            let mut u = u;
            if prev_space {
                u = u.trim_start_matches(' ');
            }
            if u.is_empty() {
                return;
            }
            for c in u.chars() {
                out.push(if c == ' ' && self.escape_whitespaces {
                    ws
                } else {
                    c
                });
            }
            prev_space = u.ends_with(' ');
        };
        let chars = |from: &str, out: &mut String, unit: &mut dyn FnMut(&str, &mut String)| {
            let mut buf = [0u8; 4];
            for c in from.chars() {
                unit(c.encode_utf8(&mut buf), out);
            }
        };
        match &self.user {
            Some(user) => {
                let mut at = 0;
                for m in user.find_iter(text) {
                    chars(&text[at..m.start()], out, &mut unit);
                    unit(&text[m.start()..m.end()], out);
                    at = m.end();
                }
                chars(&text[at..], out, &mut unit);
            }
            None => chars(text, out, &mut unit),
        }
        while out.len() > start && out.ends_with(ws) {
            out.pop();
        }
        if prefix && self.treat_whitespace_as_suffix {
            out.push(ws);
        }
    }
}
