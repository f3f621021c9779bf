//! Classic BPE encoding (Sennrich et al.): each whitespace word becomes its characters plus the
//! end-of-word symbol, then learned merges apply lowest rank (earliest learned) first, leftmost
//! among equals. Characters outside the vocabulary become the unknown token.

use crate::error::{Error, Result};
use rustc_hash::FxHashMap;

pub struct ClassicBpe {
    tokens: Vec<String>,
    ids: FxHashMap<String, u32>,
    /// (left id, right id) -> (rank, merged id).
    merges: FxHashMap<(u32, u32), (u32, u32)>,
    merge_list: Vec<(String, String)>,
    suffix: String,
    suffix_id: u32,
    unk: Option<u32>,
}

impl ClassicBpe {
    pub fn new(
        tokens: Vec<String>,
        merge_list: Vec<(String, String)>,
        suffix: &str,
        unk_token: Option<&str>,
    ) -> Result<Self> {
        let mut ids = FxHashMap::default();
        for (i, t) in tokens.iter().enumerate() {
            if ids.insert(t.clone(), i as u32).is_some() {
                return Err(Error::invalid(format!("token {t:?} appears twice")));
            }
        }
        let find = |t: &str, what: &str| {
            ids.get(t)
                .copied()
                .ok_or_else(|| Error::invalid(format!("{what} {t:?} is not in the vocabulary")))
        };
        let suffix_id = find(suffix, "end-of-word suffix")?;
        let unk = unk_token.map(|u| find(u, "unknown token")).transpose()?;
        let mut merges = FxHashMap::default();
        for (rank, (a, b)) in merge_list.iter().enumerate() {
            let merged = find(&format!("{a}{b}"), "merged token")?;
            let pair = (find(a, "merge part")?, find(b, "merge part")?);
            merges.entry(pair).or_insert((rank as u32, merged));
        }
        Ok(ClassicBpe {
            tokens,
            ids,
            merges,
            merge_list,
            suffix: suffix.to_string(),
            suffix_id,
            unk,
        })
    }

    fn encode_word(&self, word: &str, out: &mut Vec<u32>) -> Result<()> {
        let mut syms: Vec<u32> = Vec::with_capacity(word.len() + 1);
        let mut buf = [0u8; 4];
        for ch in word.chars() {
            match self.ids.get(ch.encode_utf8(&mut buf) as &str) {
                Some(&id) => syms.push(id),
                None => syms.push(self.unk.ok_or_else(|| {
                    Error::invalid(format!(
                        "character {ch:?} is not in the vocabulary and there is no unknown token"
                    ))
                })?),
            }
        }
        syms.push(self.suffix_id);
        loop {
            let best = syms
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| self.merges.get(&(w[0], w[1])).map(|&(r, id)| (r, i, id)))
                .min();
            let Some((_, i, id)) = best else { break };
            syms[i] = id;
            syms.remove(i + 1);
        }
        out.extend(syms);
        Ok(())
    }

    pub fn encode(&self, text: &str) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        for w in text.split_whitespace() {
            self.encode_word(w, &mut out)?;
        }
        Ok(out)
    }

    /// Tokens joined, each end-of-word marker a space (none after the last word).
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        let mut s = String::new();
        for &id in ids {
            let t = self.tokens.get(id as usize).ok_or_else(|| {
                Error::invalid(format!(
                    "id {id} is not in the vocabulary (valid ids: 0 to {})",
                    self.tokens.len().saturating_sub(1)
                ))
            })?;
            match t.strip_suffix(self.suffix.as_str()) {
                Some(rest) => {
                    s.push_str(rest);
                    s.push(' ');
                }
                None => s.push_str(t),
            }
        }
        if s.ends_with(' ') {
            s.pop();
        }
        Ok(s)
    }

    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    pub fn merges(&self) -> &[(String, String)] {
        &self.merge_list
    }

    pub fn suffix(&self) -> &str {
        &self.suffix
    }

    pub fn unk_token(&self) -> Option<&str> {
        self.unk.map(|u| self.tokens[u as usize].as_str())
    }
}
