//! Normalizers that rewrite chars without looking at their neighbours: HF's ByteLevel (each
//! UTF-8 byte as GPT-2's printable char) and Nmt (control chars dropped, odd spaces made ' ').

use super::Normalized;
use crate::formats::byte_unicode::byte_char;

/// Each char becomes the printable chars of its UTF-8 bytes: the first replaces it, the rest are
/// inserted after it, so all of them keep the char's original range (HF's offsets).
pub fn byte_level(n: &mut Normalized) {
    n.flat_map(|c| {
        let mut buf = [0u8; 4];
        let bytes = c.encode_utf8(&mut buf).as_bytes();
        let mut out = [' '; 4];
        for (o, &b) in out.iter_mut().zip(bytes) {
            *o = byte_char(b);
        }
        out.into_iter().take(bytes.len())
    });
}

/// HF's Nmt (from SentencePiece's NMT rule): C0 controls other than tab, line and page breaks,
/// DEL and two C1 controls are dropped; tab, breaks and a few invisible or replacement chars
/// become a plain space.
pub fn nmt(n: &mut Normalized) {
    n.filter(|c| {
        !matches!(
            c as u32,
            0x0001..=0x0008 | 0x000B | 0x000E..=0x001F | 0x007F | 0x008F | 0x009F
        )
    });
    n.flat_map(|c| {
        std::iter::once(match c as u32 {
            0x0009
            | 0x000A
            | 0x000C
            | 0x000D
            | 0x1680
            | 0x200B..=0x200F
            | 0x2028
            | 0x2029
            | 0x2581
            | 0xFEFF
            | 0xFFFD => ' ',
            _ => c,
        })
    });
}
