//! Short byte strings as integers: the bytes in order from the low end, zeros, then the length
//! in the top byte. Hash tables keyed by these avoid a pointer per key and a second cache miss.
//!
//! Copying a variable-length slice into a stack buffer and reading it back as an integer stalls
//! the load on the store (the store cannot be forwarded), a visible share of lookup time. These
//! read the bytes with two overlapping fixed-size loads instead,
//! which stay in registers.

/// `bytes` (at most 7) as a `u64`: byte `i` at bits `8i..8i+8`, the length in the top byte.
#[inline]
pub fn pack8(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    debug_assert!(n <= 7);
    low_bytes(bytes) | (n as u64) << 56
}

/// `bytes` (at most 15) as a `u128`: byte `i` at bits `8i..8i+8`, the length in the top byte.
#[inline]
pub fn pack16(bytes: &[u8]) -> u128 {
    let n = bytes.len();
    debug_assert!(n <= 15);
    let body = if n >= 8 {
        let lo = bytes.first_chunk().map_or(0, |c| u64::from_le_bytes(*c));
        let hi = bytes.last_chunk().map_or(0, |c| u64::from_le_bytes(*c));
        // `hi` holds bytes n-8..n; shifted so that byte n-8 lands at position n-8, its
        // overlap with `lo` is the same bytes, so OR keeps them.
        u128::from(lo) | u128::from(hi) << (8 * (n - 8))
    } else {
        u128::from(low_bytes(bytes))
    };
    body | (n as u128) << 120
}

/// The first `bytes.len()` (at most 8) bytes as the low bytes of a `u64`, the rest zero.
#[inline]
fn low_bytes(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    match n {
        0 => 0,
        1 => u64::from(bytes[0]),
        2..=3 => {
            let lo = u16::from_le_bytes([bytes[0], bytes[1]]);
            let hi = u16::from_le_bytes([bytes[n - 2], bytes[n - 1]]);
            u64::from(lo) | u64::from(hi) << (8 * (n - 2))
        }
        4..=7 => {
            let lo = bytes.first_chunk().map_or(0, |c| u32::from_le_bytes(*c));
            let hi = bytes.last_chunk().map_or(0, |c| u32::from_le_bytes(*c));
            u64::from(lo) | u64::from(hi) << (8 * (n - 4))
        }
        _ => bytes.first_chunk().map_or(0, |c| u64::from_le_bytes(*c)),
    }
}

/// The bytes of a key made by [`pack16`]: they are the first `n` of the array.
pub fn unpack16(key: u128) -> ([u8; 16], usize) {
    let bytes = key.to_le_bytes();
    (bytes, usize::from(bytes[15]))
}

/// The bytes of a key made by [`pack8`]: they are the first `n` of the array.
pub fn unpack8(key: u64) -> ([u8; 8], usize) {
    let bytes = key.to_le_bytes();
    (bytes, usize::from(bytes[7]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The obvious way, copying through a buffer.
    fn by_copy16(bytes: &[u8]) -> u128 {
        let mut buf = [0u8; 16];
        buf[..bytes.len()].copy_from_slice(bytes);
        buf[15] = bytes.len() as u8;
        u128::from_le_bytes(buf)
    }

    #[test]
    fn packing_matches_a_buffer_copy_at_every_length() {
        let source: Vec<u8> = (0..40u8)
            .map(|i| i.wrapping_mul(37).wrapping_add(201))
            .collect();
        for start in 0..20 {
            for n in 0..=15 {
                let bytes = &source[start..start + n];
                assert_eq!(pack16(bytes), by_copy16(bytes), "{bytes:?}");
                let (unpacked, len) = unpack16(pack16(bytes));
                assert_eq!(&unpacked[..len], bytes);
                if n <= 7 {
                    let mut buf = [0u8; 8];
                    buf[..n].copy_from_slice(bytes);
                    buf[7] = n as u8;
                    assert_eq!(pack8(bytes), u64::from_le_bytes(buf), "{bytes:?}");
                    let (unpacked, len) = unpack8(pack8(bytes));
                    assert_eq!(&unpacked[..len], bytes);
                }
            }
        }
    }
}
