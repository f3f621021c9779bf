//! GPT-2's reversible byte ↔ printable-unicode alphabet, used by `encoder.json`, `vocab.bpe` and
//! HF `tokenizer.json`. The only place in the crate that knows it.

use std::sync::OnceLock;

/// Bytes that stand for themselves, in the order GPT-2 ranks them.
fn is_self_printing(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// The 256 bytes in GPT-2's rank order: self-printing ones first, then the rest ascending.
pub fn byte_order() -> impl Iterator<Item = u8> {
    (0..=255u8)
        .filter(|&b| is_self_printing(b))
        .chain((0..=255u8).filter(|&b| !is_self_printing(b)))
}

fn table() -> &'static [char; 256] {
    static T: OnceLock<[char; 256]> = OnceLock::new();
    T.get_or_init(|| {
        let mut t = ['\0'; 256];
        let mut next = 256u32;
        for b in 0..=255u8 {
            t[b as usize] = if is_self_printing(b) {
                b as char
            } else {
                let c = char::from_u32(next).expect("below surrogates");
                next += 1;
                c
            };
        }
        t
    })
}

/// The printable char that stands for byte `b`.
pub fn byte_char(b: u8) -> char {
    table()[b as usize]
}

pub fn encode(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| table()[b as usize]).collect()
}

/// Inverse of [`encode`]; `None` if a char is outside the alphabet.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    s.chars()
        .map(|c| {
            let c = c as u32;
            if c < 256 && is_self_printing(c as u8) {
                Some(c as u8)
            } else if (256..512).contains(&c) {
                table().iter().position(|&t| t as u32 == c).map(|b| b as u8)
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn all_bytes_round_trip() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(super::decode(&super::encode(&all)).unwrap(), all);
        assert_eq!(super::encode(b" "), "\u{120}");
    }
}
