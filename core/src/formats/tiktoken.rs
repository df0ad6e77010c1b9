//! The tiktoken `.tiktoken` format: one token per line, `base64(token) rank`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::{Error, Rank};

/// Parse a `.tiktoken` file's contents. Blank lines (and a trailing newline or `\r\n`) are
/// allowed; anything else malformed is an error naming the 1-based line.
pub fn parse(data: &[u8]) -> Result<Vec<(Vec<u8>, Rank)>, Error> {
    let mut out = Vec::with_capacity(data.len() / 12);
    for (index, raw) in data.split(|&b| b == b'\n').enumerate() {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let lineno = index + 1;
        let bad = |what: &str| {
            Error::InvalidVocabulary(format!(
                "line {lineno}: {what} (expected `<base64 token> <rank>`, got {:?})",
                String::from_utf8_lossy(&line[..line.len().min(80)])
            ))
        };
        let space = line
            .iter()
            .position(|&b| b == b' ')
            .ok_or_else(|| bad("no space"))?;
        let (token_b64, rank_text) = (&line[..space], &line[space + 1..]);
        // Whisper's files write the empty token as "=", which Python's base64 (tiktoken's
        // reader) decodes to nothing.
        let token = if token_b64 == b"=" {
            Vec::new()
        } else {
            STANDARD
                .decode(token_b64)
                .map_err(|e| bad(&format!("bad base64: {e}")))?
        };
        let rank = std::str::from_utf8(rank_text)
            .ok()
            .and_then(|s| s.trim().parse::<Rank>().ok())
            .ok_or_else(|| bad("the rank is not a non-negative integer"))?;
        out.push((token, rank));
    }
    if out.is_empty() {
        return Err(Error::InvalidVocabulary("the file holds no tokens".into()));
    }
    Ok(out)
}

/// Write ranks in the `.tiktoken` format, in rank order.
pub fn write(ranks: &[(Vec<u8>, Rank)]) -> Vec<u8> {
    let mut sorted: Vec<&(Vec<u8>, Rank)> = ranks.iter().collect();
    sorted.sort_unstable_by_key(|(_, r)| *r);
    let mut out = Vec::with_capacity(ranks.len() * 12);
    for (token, rank) in sorted {
        out.extend_from_slice(STANDARD.encode(token).as_bytes());
        out.push(b' ');
        out.extend_from_slice(rank.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_errors() {
        let ranks = vec![(b"a".to_vec(), 0), (b"\xff ".to_vec(), 1)];
        let text = write(&ranks);
        assert_eq!(parse(&text), Ok(ranks));
        assert_eq!(parse(b"YQ== 0\r\n\r\nYg== 1\r\n").map(|v| v.len()), Ok(2));
        let err = parse(b"YQ== 0\n!!! 1\n")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("line 2") && err.contains("base64"), "{err}");
        assert!(parse(b"YQ== x\n").is_err());
        assert!(parse(b"YQ==\n").is_err());
        assert!(parse(b"").is_err());
    }
}
