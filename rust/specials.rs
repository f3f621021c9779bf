//! Special tokens: finding them in text (leftmost, longest wins) and the allowed / disallowed rules.
//!
//! tiktoken builds one regex alternation of all specials, so when one special is a prefix of another
//! the winner depends on hash order. Here an Aho-Corasick automaton with leftmost-longest semantics
//! decides: `<|endoftext|><|endoftext|>`, if it is a special, beats `<|endoftext|>`.

use crate::error::{Error, Result};
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Mutex;

/// Which special tokens a rule applies to.
#[derive(Clone, Debug)]
pub enum Selection {
    All,
    Only(Vec<String>),
}

impl Selection {
    pub fn none() -> Self {
        Selection::Only(Vec::new())
    }
}

pub struct Specials {
    /// Sorted.
    texts: Vec<String>,
    all: Option<AhoCorasick>,
    /// Matchers for selections other than all or none, built once each (see [`Specials::rules`]).
    cache: Mutex<FxHashMap<Key, Option<AhoCorasick>>>,
}

/// What a matcher matches: a subset of the specials (indices into `texts`), or strings given
/// as they are (an explicit `disallowed_special` list may name any string).
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    Subset(Vec<u32>),
    Literal(Vec<String>),
}

/// Most distinct selections whose matchers are kept; past that the cache starts again, so a
/// caller cycling through endless selections costs builds, never unbounded memory.
const MAX_CACHED_SELECTIONS: usize = 64;

/// Total pattern bytes up to which the matcher is a DFA (fastest to search), and the longest
/// pattern allowed there. aho-corasick's DFA build is quadratic for long repetitive patterns
/// (`"x" * 8000` takes seconds), so beyond these the contiguous NFA, whose build is linear, is used.
const DFA_MAX_BYTES: usize = 16 << 10;
const DFA_MAX_PATTERN: usize = 256;

/// A leftmost-longest matcher for `patterns` (None for no patterns), built in time linear in
/// their bytes. Every special-token and added-token matcher of the crate comes from here.
pub fn matcher<P: AsRef<[u8]>>(patterns: &[P]) -> Result<Option<AhoCorasick>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let total: usize = patterns.iter().map(|p| p.as_ref().len()).sum();
    let longest = patterns.iter().map(|p| p.as_ref().len()).max().unwrap_or(0);
    let kind = if total <= DFA_MAX_BYTES && longest <= DFA_MAX_PATTERN {
        AhoCorasickKind::DFA
    } else {
        AhoCorasickKind::ContiguousNFA
    };
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .kind(Some(kind))
        .build(patterns)
        .map(Some)
        .map_err(|e| Error::invalid(format!("cannot build the special-token matcher: {e}")))
}

/// A part of a text under [`Rules::parts`]: byte ranges of the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Stretch(std::ops::Range<usize>),
    Special(std::ops::Range<usize>),
}

/// A call's special-token rules, resolved once: where to split out allowed specials, and what
/// text is an error.
pub struct Rules {
    pub split: Option<AhoCorasick>,
    forbid: Option<AhoCorasick>,
}

impl Rules {
    /// Length in bytes of the longest special split out (0 if none).
    pub fn longest_split(&self) -> usize {
        self.split.as_ref().map_or(0, |ac| ac.max_pattern_len())
    }

    /// Length in bytes of the longest disallowed string (0 if none).
    pub fn longest_forbidden(&self) -> usize {
        self.forbid.as_ref().map_or(0, |ac| ac.max_pattern_len())
    }

    /// `text` cut by the specials split out: its stretches of ordinary text (never empty) and
    /// the specials between them, in order. Every encoder that splits specials walks this.
    pub fn parts<'a>(&'a self, text: &'a str) -> impl Iterator<Item = Part> + 'a {
        let mut found = self.split.as_ref().map(|ac| ac.find_iter(text));
        let mut start = 0;
        let mut special = None;
        std::iter::from_fn(move || loop {
            if let Some(range) = special.take() {
                return Some(Part::Special(range));
            }
            let Some(m) = found.as_mut().and_then(|f| f.next()) else {
                let rest = start..text.len();
                start = text.len();
                return (!rest.is_empty()).then_some(Part::Stretch(rest));
            };
            let stretch = start..m.start();
            start = m.end();
            special = Some(m.range());
            if !stretch.is_empty() {
                return Some(Part::Stretch(stretch));
            }
        })
    }

    /// Whether `text` holds a special these rules split out or forbid: when not, every part of
    /// it is ordinary text, and so is every part of a part.
    pub fn matter_in(&self, text: &str) -> bool {
        [&self.split, &self.forbid]
            .into_iter()
            .flatten()
            .any(|ac| ac.is_match(text))
    }

    /// Fail if `text` contains a disallowed string.
    pub fn check(&self, text: &str) -> Result<()> {
        if let Some(m) = self.forbid.as_ref().and_then(|ac| ac.find(text)) {
            return Err(Error::DisallowedSpecial(text[m.range()].to_string()));
        }
        Ok(())
    }
}

impl Specials {
    pub fn new(mut texts: Vec<String>) -> Result<Self> {
        texts.sort();
        let all = matcher(&texts)?;
        Ok(Specials {
            texts,
            all,
            cache: Mutex::default(),
        })
    }

    pub fn texts(&self) -> &[String] {
        &self.texts
    }

    /// Indices of the specials that `pick` keeps.
    fn subset(&self, pick: impl Fn(&str) -> bool) -> Vec<u32> {
        (0..self.texts.len() as u32)
            .filter(|&i| pick(&self.texts[i as usize]))
            .collect()
    }

    fn cached(&self, key: Key) -> Result<Option<AhoCorasick>> {
        match &key {
            Key::Subset(v) if v.is_empty() => return Ok(None),
            Key::Subset(v) if v.len() == self.texts.len() => return Ok(self.all.clone()),
            Key::Literal(v) if v.is_empty() => return Ok(None),
            _ => {}
        }
        let lock = || self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = lock().get(&key) {
            return Ok(m.clone());
        }
        // Built outside the lock: other threads keep using the matchers already there.
        let built = match &key {
            Key::Subset(v) => matcher(
                &v.iter()
                    .map(|&i| &self.texts[i as usize])
                    .collect::<Vec<_>>(),
            )?,
            Key::Literal(v) => matcher(v)?,
        };
        let mut cache = lock();
        if cache.len() >= MAX_CACHED_SELECTIONS {
            cache.clear();
        }
        cache.insert(key, built.clone());
        Ok(built)
    }

    /// The matcher for the specials that `allowed` lets through (strings that are no special are
    /// ignored, as in tiktoken).
    pub fn allowed_matcher(&self, allowed: &Selection) -> Result<Option<AhoCorasick>> {
        match allowed {
            Selection::All => Ok(self.all.clone()),
            Selection::Only(v) => {
                let v: FxHashSet<&str> = v.iter().map(String::as_str).collect();
                self.cached(Key::Subset(self.subset(|t| v.contains(t))))
            }
        }
    }

    /// Resolve tiktoken's two arguments once for a call (or a whole batch). `disallowed == All`
    /// means every special that is not in `allowed`; an explicit list is searched for as given.
    pub fn rules(&self, allowed: &Selection, disallowed: &Selection) -> Result<Rules> {
        let forbid = match (disallowed, allowed) {
            (Selection::All, Selection::All) => None,
            (Selection::All, Selection::Only(a)) => {
                let a: FxHashSet<&str> = a.iter().map(String::as_str).collect();
                self.cached(Key::Subset(self.subset(|t| !a.contains(t))))?
            }
            (Selection::Only(d), _) => {
                let mut d = d.clone();
                d.sort();
                d.dedup();
                self.cached(Key::Literal(d))?
            }
        };
        Ok(Rules {
            split: self.allowed_matcher(allowed)?,
            forbid,
        })
    }
}
