//! The `.tiktoken` format: one `base64(token bytes) rank` pair per line.

use super::{read, write_atomic};
use crate::error::{Error, Result};
use crate::vocab::{Rank, Vocab};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use std::collections::HashMap;
use std::path::Path;

/// Parse `.tiktoken` contents; `origin` names the source in errors.
pub fn parse(contents: &[u8], origin: &str) -> Result<Vec<(Vec<u8>, Rank)>> {
    let mut ranks = Vec::with_capacity(contents.len() / 12);
    let mut seen_bytes: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut seen_ranks: HashMap<Rank, usize> = HashMap::new();
    for (k, line) in contents.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let bad = |msg: String| Error::Format {
            path: origin.to_string(),
            line: k + 1,
            msg,
        };
        let mut fields = line.split(|&b| b == b' ').filter(|f| !f.is_empty());
        let (Some(token), Some(rank), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(bad(format!(
                "expected `<base64 token> <rank>`, got {:?}",
                String::from_utf8_lossy(line)
            )));
        };
        let bytes = STANDARD
            .decode(token)
            .map_err(|e| bad(format!("token is not valid base64 ({e})")))?;
        let rank: Rank = std::str::from_utf8(rank)
            .ok()
            .and_then(|r| r.parse().ok())
            .ok_or_else(|| {
                bad(format!(
                    "rank {:?} is not a non-negative integer",
                    String::from_utf8_lossy(rank)
                ))
            })?;
        if let Some(first) = seen_bytes.insert(bytes.clone(), k + 1) {
            return Err(bad(format!(
                "token {} was already given on line {first}",
                String::from_utf8_lossy(token)
            )));
        }
        if let Some(first) = seen_ranks.insert(rank, k + 1) {
            return Err(bad(format!(
                "rank {rank} was already given on line {first}"
            )));
        }
        ranks.push((bytes, rank));
    }
    Ok(ranks)
}

pub fn load(path: &Path) -> Result<Vec<(Vec<u8>, Rank)>> {
    parse(&read(path)?, &path.display().to_string())
}

/// Serialize the mergeable tokens, by rank.
pub fn render(vocab: &Vocab) -> Vec<u8> {
    render_pairs(vocab.mergeable())
}

/// Serialize `(token bytes, rank)` pairs in the order given.
pub fn render_pairs<'a>(pairs: impl IntoIterator<Item = (&'a [u8], Rank)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (bytes, rank) in pairs {
        out.extend_from_slice(STANDARD.encode(bytes).as_bytes());
        out.push(b' ');
        out.extend_from_slice(rank.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

pub fn dump(vocab: &Vocab, path: &Path) -> Result<()> {
    write_atomic(path, &render(vocab))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_line_numbers() {
        let ranks = vec![(b"a".to_vec(), 0), (b" \n".to_vec(), 1), (vec![0xff], 2)];
        let vocab = Vocab::new(ranks.clone(), vec![]).unwrap();
        assert_eq!(parse(&render(&vocab), "x").unwrap(), ranks);
        let err = parse(b"YQ== 0\n\nYg== x\n", "f.tiktoken").unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.tiktoken: line 3: rank \"x\" is not a non-negative integer"
        );
        assert!(parse(b"!!! 0\n", "f")
            .unwrap_err()
            .to_string()
            .contains("line 1"));
        assert!(parse(b"YQ==\n", "f")
            .unwrap_err()
            .to_string()
            .contains("line 1"));
    }
}
