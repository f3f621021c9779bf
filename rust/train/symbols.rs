//! Character-level starts for WordPiece and classic BPE: the alphabet (most frequent characters,
//! optionally limited) and each counted word as symbol ids over it, with the boundary marker of
//! the variant — `##` on every non-initial character, or `</w>` after the last one.

use crate::vocab::Rank;
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// The characters of `words` (weighted by count); with `limit`, only the `limit` most frequent
/// (ties: lower code point first). Returned in code point order.
pub fn alphabet(words: &[(Box<[u8]>, u64)], limit: Option<usize>) -> Vec<char> {
    alphabet_with(words, limit, &[])
}

/// [`alphabet`] with the characters of `forced` counted as more frequent than any other, so
/// they are kept even if absent from `words` (HF's `initial_alphabet`); within `limit` they go
/// first, lower code points first if even they are too many.
pub fn alphabet_with(
    words: &[(Box<[u8]>, u64)],
    limit: Option<usize>,
    forced: &[char],
) -> Vec<char> {
    let mut freq: FxHashMap<char, u64> = FxHashMap::default();
    for (w, c) in words {
        for ch in std::str::from_utf8(w).expect("words are text").chars() {
            let f = freq.entry(ch).or_insert(0);
            *f = f.saturating_add(*c);
        }
    }
    for &ch in forced {
        freq.insert(ch, u64::MAX);
    }
    let mut chars: Vec<(char, u64)> = freq.into_iter().collect();
    chars.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if let Some(n) = limit {
        chars.truncate(n);
    }
    let mut kept: Vec<char> = chars.into_iter().map(|(c, _)| c).collect();
    kept.sort_unstable();
    kept
}

/// How a word becomes symbols.
pub enum Boundary<'a> {
    /// WordPiece: the first character as itself, the others as `prefix` + character.
    ContinuingPrefix(&'a str),
    /// Classic BPE: the characters, then `suffix` as a symbol of its own.
    EndOfWord(&'a str),
}

pub struct Start {
    /// Symbol spellings; ids index this.
    pub symbols: Vec<Rc<[u8]>>,
    /// Each word (or part of a word between dropped characters) as symbol ids, with its count.
    pub words: Vec<(Vec<Rank>, u64)>,
    /// The id of the end-of-word symbol, for `EndOfWord`.
    pub end_of_word: Option<Rank>,
}

/// Symbols for `alphabet` under `boundary`, and `words` (in order) spelled with them. A character
/// outside the alphabet splits its word there; no pair ever spans it.
pub fn start(words: &[(Box<[u8]>, u64)], alphabet: &[char], boundary: &Boundary) -> Start {
    let mut symbols: Vec<Rc<[u8]>> = alphabet
        .iter()
        .map(|c| Rc::from(c.to_string().as_bytes()))
        .collect();
    let initial: FxHashMap<char, Rank> = alphabet
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, i as Rank))
        .collect();
    let (inner, end_of_word) = match boundary {
        Boundary::ContinuingPrefix(prefix) => {
            let base = symbols.len() as Rank;
            symbols.extend(
                alphabet
                    .iter()
                    .map(|c| Rc::from(format!("{prefix}{c}").as_bytes())),
            );
            (
                alphabet
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| (c, base + i as Rank))
                    .collect(),
                None,
            )
        }
        Boundary::EndOfWord(suffix) => {
            symbols.push(Rc::from(suffix.as_bytes()));
            (initial.clone(), Some(symbols.len() as Rank - 1))
        }
    };
    let mut out = Vec::with_capacity(words.len());
    for (w, count) in words {
        let text = std::str::from_utf8(w).expect("words are text");
        let mut part: Vec<Rank> = Vec::new();
        for (k, ch) in text.chars().enumerate() {
            let table = if k == 0 { &initial } else { &inner };
            match table.get(&ch) {
                Some(&id) => part.push(id),
                None => {
                    if !part.is_empty() {
                        out.push((std::mem::take(&mut part), *count));
                    }
                }
            }
        }
        if let Some(eow) = end_of_word {
            part.push(eow);
        }
        if !part.is_empty() {
            out.push((part, *count));
        }
    }
    Start {
        symbols,
        words: out,
        end_of_word,
    }
}

/// Symbols and words for HF's BPE trainer: `prefix` on every character of a word but its
/// first, `suffix` joined to its last (either may be empty). The plain alphabet comes first (in
/// its order), then each marked form seen, in order of first appearance (so the ids do not
/// depend on a hash order, as HF's do). A character outside the alphabet splits its word there
/// and keeps its neighbours' marks: first and last refer to the word as counted.
pub fn start_marked(
    words: &[(Box<[u8]>, u64)],
    alphabet: &[char],
    prefix: &str,
    suffix: &str,
) -> Start {
    let mut symbols: Vec<Rc<[u8]>> = Vec::with_capacity(alphabet.len());
    let mut ids: FxHashMap<String, Rank> = FxHashMap::default();
    for c in alphabet {
        ids.insert(c.to_string(), symbols.len() as Rank);
        symbols.push(Rc::from(c.to_string().as_bytes()));
    }
    let known: rustc_hash::FxHashSet<char> = alphabet.iter().copied().collect();
    let mut out = Vec::with_capacity(words.len());
    let mut form = String::new();
    for (w, count) in words {
        let text = std::str::from_utf8(w).expect("words are text");
        let n = text.chars().count();
        let mut part: Vec<Rank> = Vec::new();
        for (k, ch) in text.chars().enumerate() {
            if !known.contains(&ch) {
                if !part.is_empty() {
                    out.push((std::mem::take(&mut part), *count));
                }
                continue;
            }
            form.clear();
            if k > 0 {
                form.push_str(prefix);
            }
            form.push(ch);
            if k + 1 == n {
                form.push_str(suffix);
            }
            let id = match ids.get(&form) {
                Some(&id) => id,
                None => {
                    let id = symbols.len() as Rank;
                    symbols.push(Rc::from(form.as_bytes()));
                    ids.insert(form.clone(), id);
                    id
                }
            };
            part.push(id);
        }
        if !part.is_empty() {
            out.push((part, *count));
        }
    }
    Start {
        symbols,
        words: out,
        end_of_word: None,
    }
}

/// A character-level trainer's result as strings.
pub struct Learned {
    /// Token strings in id order.
    pub tokens: Vec<String>,
    /// Merges in learned order, as the two parts' strings.
    pub merges: Vec<(String, String)>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("merges of whole characters are text")
}

/// `leading` (special or unknown tokens), then the merge loop's tokens in id order — a token
/// that spells one of `leading` keeps that one id — and the merges as strings.
pub fn spell(leading: Vec<String>, result: &super::queue::MergeResult) -> Learned {
    let mut seen: std::collections::HashSet<String> = leading.iter().cloned().collect();
    let mut tokens = leading;
    for t in &result.tokens {
        let t = text(t);
        if seen.insert(t.clone()) {
            tokens.push(t);
        }
    }
    let merges = result
        .merges
        .iter()
        .map(|&(a, b)| {
            (
                text(&result.tokens[a as usize]),
                text(&result.tokens[b as usize]),
            )
        })
        .collect();
    Learned { tokens, merges }
}
