//! The GPT-2 byte map, rebuilt from its rule (not pasted).
//!
//! Bytes that are already visible Latin-1 characters (`!`..=`~`, `¡`..=`¬`, `®`..=`ÿ`) keep their
//! own code point; the other 68 bytes are walked in increasing order and the n-th gets U+0100 + n.
//! Text formats (GPT-2 `encoder.json`, Hugging Face `vocab.json`, `merges.txt`) store tokens in
//! this alphabet so that every token is valid, visible, space-free text.

/// Whether byte `b` keeps its Latin-1 character.
const fn keeps_own_char(b: u8) -> bool {
    matches!(b, 0x21..=0x7E | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The character of each byte, indexed by byte value.
pub fn bytes_to_unicode() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut remapped: u32 = 0;
    for b in 0..=255u8 {
        let code = if keeps_own_char(b) {
            u32::from(b)
        } else {
            remapped += 1;
            255 + remapped
        };
        // Every code point here is below U+0144, so it is a valid char.
        table[usize::from(b)] = char::from_u32(code).unwrap_or('\u{FFFD}');
    }
    table
}

/// The byte of a character of the map, or `None` for a character outside its image.
pub fn char_to_byte(c: char) -> Option<u8> {
    let code = c as u32;
    if code < 256 {
        let b = code as u8;
        return keeps_own_char(b).then_some(b);
    }
    let n = code.checked_sub(256)?;
    // The n-th remapped byte: walk the non-kept bytes in order.
    (0..=255u8).filter(|&b| !keeps_own_char(b)).nth(n as usize)
}

/// Encode bytes as the map's characters.
pub fn encode_bytes(data: &[u8]) -> String {
    let table = bytes_to_unicode();
    data.iter().map(|&b| table[usize::from(b)]).collect()
}

/// Decode the map's characters back to bytes; `Err(c)` names the first character outside the image.
pub fn decode_chars(text: &str) -> Result<Vec<u8>, char> {
    let mut inverse = [0u8; 324];
    let mut valid = [false; 324];
    for (b, c) in bytes_to_unicode().iter().enumerate() {
        inverse[*c as usize] = b as u8;
        valid[*c as usize] = true;
    }
    text.chars()
        .map(|c| {
            let i = c as usize;
            if i < 324 && valid[i] {
                Ok(inverse[i])
            } else {
                Err(c)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_examples() {
        assert_eq!(encode_bytes(b"Hi there\n"), "Hi\u{120}there\u{10A}");
        let t = bytes_to_unicode();
        assert_eq!(t[0], '\u{100}');
        assert_eq!(t[0x7F], '\u{121}');
        assert_eq!(t[0xAD], '\u{143}');
        assert_eq!(t[b'!' as usize], '!');
    }

    #[test]
    fn is_a_bijection_and_inverts() {
        let t = bytes_to_unicode();
        let mut seen = std::collections::HashSet::new();
        for c in t {
            assert!(seen.insert(c));
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode_chars(&encode_bytes(&all)), Ok(all.clone()));
        for b in 0..=255u8 {
            assert_eq!(char_to_byte(t[b as usize]), Some(b));
        }
        assert_eq!(decode_chars(" "), Err(' '));
        assert_eq!(decode_chars("\u{144}"), Err('\u{144}'));
        assert_eq!(char_to_byte('\u{144}'), None);
    }
}
