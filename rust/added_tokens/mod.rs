//! Added tokens, the pipeline's first stage (HF `tokenizers`' `AddedToken` and its added
//! vocabulary): strings that are cut out of the text and become one token each before the
//! normalizer, pre-tokenizer and model see the rest.
//!
//! Idea: two leftmost-longest matchers, as HF has them. Tokens with `normalized: false` are
//! found in the raw text first; each stretch between them is normalized on its own, then tokens
//! with `normalized: true` are found in it, matched by their own normalized form. A match of a
//! `single_word` token counts only where no word character (`\w`) touches it; `lstrip` /
//! `rstrip` take the whitespace (`\s`) before / after it into the token (never whitespace an
//! earlier match took with lstrip; a match inside whitespace an earlier rstrip took still
//! counts, overlapping it, as in HF).
//!
//! Ids, as HF gives them: a token the model has keeps the model's id; a new one gets the next
//! id after the model's vocabulary and the added tokens so far.
//!
//! Invariant: the matchers are built from the tokens and the normalizer of the pipeline they
//! run in (a normalized token's pattern is its content through that normalizer), so changing
//! the normalizer means building the vocabulary again.
//!
//! Downside: a pipeline with a normalizer normalizes each stretch between raw tokens apart, so
//! normalizers that look at the whole text (Strip, Prepend) act at each stretch, as in HF.

use crate::error::{Error, Result};
use crate::formats::json_fields::Fields;
use crate::normalizers::Normalizer;
use crate::pretokenize::classes::{self, S, W};
use aho_corasick::{AhoCorasick, Anchored, Input, MatchKind, StartKind};
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AddedToken {
    pub content: String,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    pub normalized: bool,
    pub special: bool,
}

impl AddedToken {
    /// HF's defaults: a special token is not normalized, any other is.
    pub fn new(content: &str, special: bool) -> Self {
        AddedToken {
            content: content.to_string(),
            single_word: false,
            lstrip: false,
            rstrip: false,
            normalized: !special,
            special,
        }
    }

    /// One entry of a tokenizer.json's `added_tokens`: the token and its id.
    pub fn from_json(v: &Value, path: &str) -> Result<(u32, Self)> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::invalid(format!("{path}: an added token must be an object")))?;
        let f = Fields::object(obj, path);
        let id = match obj.get("id").and_then(Value::as_u64) {
            Some(id) if id <= u32::MAX as u64 => id as u32,
            _ => {
                return Err(Error::invalid(format!(
                    "{path}.id: an added token needs an id, a non-negative integer"
                )))
            }
        };
        let special = f.flag("special", false)?;
        Ok((
            id,
            AddedToken {
                content: f.text("content", None)?,
                single_word: f.flag("single_word", false)?,
                lstrip: f.flag("lstrip", false)?,
                rstrip: f.flag("rstrip", false)?,
                normalized: f.flag("normalized", !special)?,
                special,
            },
        ))
    }

    pub fn to_json(&self, id: u32) -> Value {
        json!({
            "id": id,
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        })
    }
}

/// One matcher over token patterns, with the id of each pattern.
#[derive(Clone, Debug)]
struct Matcher {
    ac: AhoCorasick,
    ids: Vec<u32>,
    /// A token that normalizes to the empty string. Its empty pattern matches at every
    /// position in HF (leftmost first), so the text is cut at every character boundary where
    /// no other token starts and its flags allow (the empty token itself is never emitted).
    empty: Option<u32>,
}

impl Matcher {
    /// `patterns` in id order; of two tokens with one pattern (two contents that normalize
    /// alike) the later one is matched (HF's choice there depends on its hash order, which
    /// changes from run to run).
    fn new(patterns: Vec<(String, u32)>) -> Result<Option<Self>> {
        let mut last: FxHashMap<&str, u32> = FxHashMap::default();
        for (p, id) in &patterns {
            last.insert(p, *id);
        }
        let patterns: Vec<(String, u32)> = patterns
            .iter()
            .filter(|(p, id)| last[p.as_str()] == *id)
            .cloned()
            .collect();
        let empty = patterns
            .iter()
            .find(|(p, _)| p.is_empty())
            .map(|(_, id)| *id);
        let patterns: Vec<_> = patterns
            .into_iter()
            .filter(|(p, _)| !p.is_empty())
            .collect();
        if patterns.is_empty() && empty.is_none() {
            return Ok(None);
        }
        let ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .start_kind(StartKind::Both)
            .build(patterns.iter().map(|(p, _)| p.as_str()))
            .map_err(|e| Error::invalid(format!("added tokens: {e}")))?;
        Ok(Some(Matcher {
            ac,
            ids: patterns.into_iter().map(|(_, id)| id).collect(),
            empty,
        }))
    }

    /// Every match in order, as leftmost-longest finds them: (id, start, end).
    fn matches(&self, text: &str) -> Vec<(u32, usize, usize)> {
        let id = |hit: aho_corasick::Match| self.ids[hit.pattern().as_usize()];
        let Some(empty) = self.empty else {
            return self
                .ac
                .find_iter(text)
                .map(|hit| (id(hit), hit.start(), hit.end()))
                .collect();
        };
        // An empty match starts everywhere, so the leftmost match always starts where the
        // last one ended: the longest other token there, else the empty one.
        let mut out = Vec::new();
        let mut at = 0;
        while at <= text.len() {
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            match self.ac.find(input) {
                Some(hit) => {
                    out.push((id(hit), at, hit.end()));
                    at = hit.end();
                }
                None => {
                    out.push((empty, at, at));
                    at += text[at..].chars().next().map_or(1, char::len_utf8);
                }
            }
        }
        out
    }
}

/// A stretch of text: a token's id, or none for text the rest of the pipeline encodes.
pub type Stretch = (Option<u32>, usize, usize);

/// A text's stretches: the whole text, without an allocation (a vocabulary with no added token
/// that could match, the common case on every text of a batch), or the list.
#[derive(Debug)]
pub enum Stretches {
    One([Stretch; 1]),
    Many(Vec<Stretch>),
}

impl std::ops::Deref for Stretches {
    type Target = [Stretch];

    fn deref(&self) -> &[Stretch] {
        match self {
            Stretches::One(one) => one,
            Stretches::Many(all) => all,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct AddedVocabulary {
    /// By id, ascending.
    tokens: Vec<(u32, AddedToken)>,
    by_id: FxHashMap<u32, usize>,
    by_content: FxHashMap<String, u32>,
    specials: FxHashSet<String>,
    /// The normalized form of a normalized token whose form differs from its content: its
    /// pattern, and what decoding shows (HF's decode reads it so that its decoder inverts it).
    normalized_form: FxHashMap<u32, String>,
    raw: Option<Matcher>,
    normalized: Option<Matcher>,
}

impl AddedVocabulary {
    /// The vocabulary of `tokens` (id, token), matched as `normalizer` would leave them. Two
    /// tokens with one content: the later wins, as in HF's map.
    pub fn new(tokens: Vec<(u32, AddedToken)>, normalizer: Option<&Normalizer>) -> Result<Self> {
        let mut by_content: FxHashMap<String, u32> = FxHashMap::default();
        let mut by_id_map: FxHashMap<u32, AddedToken> = FxHashMap::default();
        for (id, t) in tokens {
            if t.content.is_empty() {
                return Err(Error::invalid(format!(
                    "added token {id} has empty content; an added token needs text"
                )));
            }
            by_content.insert(t.content.clone(), id);
            by_id_map.insert(id, t);
        }
        let mut tokens: Vec<(u32, AddedToken)> = by_id_map.into_iter().collect();
        tokens.sort_by_key(|(id, _)| *id);
        let mut v = AddedVocabulary {
            by_id: tokens
                .iter()
                .enumerate()
                .map(|(k, (id, _))| (*id, k))
                .collect(),
            specials: tokens
                .iter()
                .filter(|(_, t)| t.special)
                .map(|(_, t)| t.content.clone())
                .collect(),
            by_content,
            tokens,
            ..AddedVocabulary::default()
        };
        let (mut raw, mut normalized) = (Vec::new(), Vec::new());
        for (id, t) in &v.tokens {
            if !t.normalized {
                raw.push((t.content.clone(), *id));
                continue;
            }
            let form = match normalizer {
                Some(n) => n.normalize_str(&t.content)?,
                None => t.content.clone(),
            };
            if form != t.content {
                v.normalized_form.insert(*id, form.clone());
            }
            normalized.push((form, *id));
        }
        v.raw = Matcher::new(raw)?;
        v.normalized = Matcher::new(normalized)?;
        Ok(v)
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Is there an added token matched in normalized text (one whose `normalized` is set)?
    pub fn matches_normalized(&self) -> bool {
        self.normalized.is_some()
    }

    pub fn tokens(&self) -> &[(u32, AddedToken)] {
        &self.tokens
    }

    pub fn token_to_id(&self, content: &str) -> Option<u32> {
        self.by_content.get(content).copied()
    }

    pub fn token(&self, id: u32) -> Option<&AddedToken> {
        self.by_id.get(&id).map(|&k| &self.tokens[k].1)
    }

    /// What decoding shows for the token `id`: its normalized form if it has one.
    pub fn decode_form(&self, id: u32) -> Option<&str> {
        let t = self.token(id)?;
        Some(
            self.normalized_form
                .get(&id)
                .map_or(t.content.as_str(), String::as_str),
        )
    }

    pub fn is_special(&self, content: &str) -> bool {
        self.specials.contains(content)
    }

    /// The raw text's stretches, cut at the tokens that are not normalized.
    pub fn split_raw(&self, text: &str) -> Stretches {
        self.split(text, self.raw.as_ref())
    }

    /// A normalized stretch's stretches, cut at the normalized tokens.
    pub fn split_normalized(&self, text: &str) -> Stretches {
        self.split(text, self.normalized.as_ref())
    }

    fn split(&self, text: &str, matcher: Option<&Matcher>) -> Stretches {
        let Some(m) = matcher else {
            return Stretches::One([(None, 0, text.len())]);
        };
        let mut out = Vec::new();
        let mut done = 0;
        for (id, mut start, mut end) in m.matches(text) {
            let t = self.token(id).expect("every pattern is a token");
            if t.single_word
                && (text[..start].chars().next_back().is_some_and(is_word)
                    || text[end..].chars().next().is_some_and(is_word))
            {
                continue;
            }
            if t.lstrip {
                let spaces: usize = text[..start]
                    .chars()
                    .rev()
                    .take_while(|&c| is_space(c))
                    .map(char::len_utf8)
                    .sum();
                start = (start - spaces).max(done);
                if start > end {
                    // All of it lies in whitespace an earlier token took with its rstrip
                    // (HF panics here): it is not matched.
                    continue;
                }
            }
            if t.rstrip {
                end += text[end..]
                    .chars()
                    .take_while(|&c| is_space(c))
                    .map(char::len_utf8)
                    .sum::<usize>();
            }
            if done < start {
                out.push((None, done, start));
            }
            // An empty match cuts the text but leaves no token (HF drops empty pieces).
            if start < end {
                out.push((Some(id), start, end));
            }
            done = end;
        }
        if done < text.len() {
            out.push((None, done, text.len()));
        }
        if out.is_empty() {
            out.push((None, 0, 0));
        }
        Stretches::Many(out)
    }

    /// HF's `add_tokens`: each token gets the model's id for its content, else the next new
    /// id; a token already there with the same settings is skipped. Returns how many were
    /// added.
    pub fn assign_ids(
        existing: &[(u32, AddedToken)],
        new: Vec<AddedToken>,
        model_id: impl Fn(&str) -> Option<u32>,
        model_size: usize,
    ) -> (Vec<(u32, AddedToken)>, usize) {
        let mut all: Vec<(u32, AddedToken)> = existing.to_vec();
        let size = model_size as u32;
        let mut next = match all.iter().map(|(id, _)| *id).max() {
            Some(max) if max >= size || size == 0 => max + 1,
            _ => size,
        };
        let mut added = 0;
        for t in new {
            if t.content.is_empty() {
                continue;
            }
            let current = all.iter().rposition(|(_, o)| o.content == t.content);
            if current.is_some_and(|k| all[k].1 == t) {
                continue;
            }
            let id = match (current, model_id(&t.content)) {
                (Some(k), _) => all[k].0,
                (None, Some(id)) => id,
                (None, None) => {
                    next += 1;
                    next - 1
                }
            };
            all.retain(|(i, _)| *i != id);
            all.push((id, t));
            added += 1;
        }
        (all, added)
    }

    pub fn to_json(&self) -> Value {
        Value::Array(self.tokens.iter().map(|(id, t)| t.to_json(*id)).collect())
    }
}

fn is_word(c: char) -> bool {
    classes::tables().of(c) & W != 0
}

fn is_space(c: char) -> bool {
    classes::tables().of(c) & S != 0
}
