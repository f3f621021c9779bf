//! Decoders back to bytes.

use crate::formats::byte_unicode;

/// GPT-2's byte alphabet back to bytes: each token whose every char is in the alphabet gives
/// its bytes, any other token its UTF-8 as is; the whole is read as UTF-8, invalid sequences
/// becoming U+FFFD (one token out).
pub fn byte_level(tokens: Vec<String>) -> Vec<String> {
    let mut bytes = Vec::new();
    for t in &tokens {
        match byte_unicode::decode(t) {
            Some(b) => bytes.extend(b),
            None => bytes.extend_from_slice(t.as_bytes()),
        }
    }
    vec![String::from_utf8_lossy(&bytes).into_owned()]
}

/// `<0xAB>` tokens (SentencePiece's byte fallback) back to bytes: each run of them is read as
/// UTF-8, and a run that is not valid UTF-8 becomes one U+FFFD per byte; other tokens pass.
pub fn byte_fallback(tokens: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(tokens.len());
    let mut run: Vec<u8> = Vec::new();
    let flush = |run: &mut Vec<u8>, out: &mut Vec<String>| {
        if run.is_empty() {
            return;
        }
        match String::from_utf8(std::mem::take(run)) {
            Ok(s) => out.push(s),
            Err(e) => out.extend(std::iter::repeat_n(
                "\u{fffd}".to_string(),
                e.as_bytes().len(),
            )),
        }
    };
    for t in tokens {
        match byte_token(&t) {
            Some(b) => run.push(b),
            None => {
                flush(&mut run, &mut out);
                out.push(t);
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

/// The byte of a `<0xAB>` token (exactly six bytes, two hex digits).
fn byte_token(t: &str) -> Option<u8> {
    let hex = t.strip_prefix("<0x")?.strip_suffix('>')?;
    if t.len() != 6 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}
