//! Special tokens: finding them in text (leftmost, longest wins) and the allowed / disallowed rules.
//!
//! tiktoken builds one regex alternation of all specials, so when one special is a prefix of another
//! the winner depends on hash order. Here an Aho-Corasick automaton with leftmost-longest semantics
//! decides: `<|endoftext|><|endoftext|>`, if it is a special, beats `<|endoftext|>`.

use crate::error::{Error, Result};
use aho_corasick::{AhoCorasick, MatchKind};

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
    texts: Vec<String>,
    all: Option<AhoCorasick>,
}

fn automaton(patterns: &[String]) -> Result<Option<AhoCorasick>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    AhoCorasick::builder()
        .match_kind(MatchKind::LeftmostLongest)
        .build(patterns)
        .map(Some)
        .map_err(|e| Error::invalid(format!("cannot build the special-token matcher: {e}")))
}

impl Specials {
    pub fn new(mut texts: Vec<String>) -> Result<Self> {
        texts.sort();
        let all = automaton(&texts)?;
        Ok(Specials { texts, all })
    }

    pub fn texts(&self) -> &[String] {
        &self.texts
    }

    /// The matcher for the specials that `allowed` lets through (strings that are no special are
    /// ignored, as in tiktoken).
    pub fn allowed_matcher(&self, allowed: &Selection) -> Result<Option<AhoCorasick>> {
        match allowed {
            Selection::All => Ok(self.all.clone()),
            Selection::Only(v) if v.is_empty() => Ok(None),
            Selection::Only(v) => {
                let keep: Vec<String> = self
                    .texts
                    .iter()
                    .filter(|t| v.contains(t))
                    .cloned()
                    .collect();
                if keep.len() == self.texts.len() {
                    Ok(self.all.clone())
                } else {
                    automaton(&keep)
                }
            }
        }
    }

    /// Fail if `text` contains a disallowed string. `disallowed == All` means every special that is
    /// not in `allowed`; an explicit list is searched for as given.
    pub fn check(&self, text: &str, allowed: &Selection, disallowed: &Selection) -> Result<()> {
        let matcher = match (disallowed, allowed) {
            (Selection::All, Selection::All) => None,
            (Selection::All, Selection::Only(a)) if a.is_empty() => self.all.clone(),
            (Selection::All, Selection::Only(a)) => {
                let rest: Vec<String> = self
                    .texts
                    .iter()
                    .filter(|t| !a.contains(t))
                    .cloned()
                    .collect();
                automaton(&rest)?
            }
            (Selection::Only(d), _) => automaton(d)?,
        };
        if let Some(m) = matcher.and_then(|ac| ac.find(text)) {
            return Err(Error::DisallowedSpecial(text[m.range()].to_string()));
        }
        Ok(())
    }
}
