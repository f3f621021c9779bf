//! HF's BertPreTokenizer on normalized text: whitespace separates words and is dropped, every
//! punctuation character (ASCII punctuation or Unicode P*) is a word of its own.

use super::classes::{flags, PUNCT, SPACE};
use unicode_categories::UnicodeCategories;

pub fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || c.is_punctuation()
}

/// Class of each ASCII byte: 0 word, 1 whitespace, 2 punctuation.
const ASCII_CLASS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = if matches!(c, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r') {
            1
        } else if c.is_ascii_punctuation() {
            2
        } else {
            0
        };
        b += 1;
    }
    t
};

/// Call `f(start, end)` with the byte range of every word of `text`, in order.
pub fn for_each_word(text: &str, mut f: impl FnMut(usize, usize)) {
    let bytes = text.as_bytes();
    let mut start = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (class, len) = if b < 0x80 {
            (ASCII_CLASS[b as usize], 1)
        } else {
            let c = text[i..].chars().next().expect("char boundary");
            let f = flags(c);
            let class = if f & SPACE != 0 {
                1
            } else if f & PUNCT != 0 {
                2
            } else {
                0
            };
            (class, c.len_utf8())
        };
        match class {
            0 => {
                if start.is_none() {
                    start = Some(i);
                }
            }
            _ => {
                if let Some(s) = start.take() {
                    f(s, i);
                }
                if class == 2 {
                    f(i, i + len);
                }
            }
        }
        i += len;
    }
    if let Some(s) = start {
        f(s, bytes.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_bert() {
        let text = "hello, world!! don't\u{3000}x";
        let mut words = Vec::new();
        for_each_word(text, |s, e| words.push(&text[s..e]));
        assert_eq!(
            words,
            ["hello", ",", "world", "!", "!", "don", "'", "t", "x"]
        );
    }
}
