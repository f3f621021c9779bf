//! A byte trie frozen into flat arrays, for greedy longest-match: one walk from a position finds
//! the longest vocabulary entry there, without building any substring.
//!
//! The root has a dense 256-way table (every walk starts there); inner nodes keep their edges as
//! sorted labels scanned linearly — WordPiece vocabularies branch little below the first byte.

use rustc_hash::FxHashMap;

const NONE: u32 = u32::MAX;

/// One node: everything a step reads sits together (one cache line holds several nodes).
#[derive(Clone, Copy)]
struct Node {
    /// Token id ending here, or NONE.
    token: u32,
    /// Its edges are `edges[first..first + len]`, sorted by label.
    first: u32,
    len: u32,
}

#[derive(Clone, Copy)]
struct Edge {
    label: u8,
    child: u32,
}

pub struct Trie {
    root: Box<[u32; 256]>,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
}

impl Trie {
    pub fn new<'a>(entries: impl IntoIterator<Item = (&'a [u8], u32)>) -> Trie {
        // Build with hash-map children, then freeze breadth-first into flat arrays.
        let mut kids: Vec<FxHashMap<u8, u32>> = vec![FxHashMap::default()];
        let mut token = vec![NONE];
        for (key, id) in entries {
            if key.is_empty() {
                continue;
            }
            let mut node = 0usize;
            for &b in key {
                let next = kids.len() as u32;
                let child = *kids[node].entry(b).or_insert(next);
                if child == next {
                    kids.push(FxHashMap::default());
                    token.push(NONE);
                }
                node = child as usize;
            }
            // The lowest id wins if a file lists a token twice (HF keeps the last; ids differ
            // only in malformed files, which the loader rejects).
            if token[node] == NONE {
                token[node] = id;
            }
        }
        let mut root = Box::new([NONE; 256]);
        for (&b, &c) in &kids[0] {
            root[b as usize] = c;
        }
        let mut nodes = Vec::with_capacity(kids.len());
        let mut edges = Vec::new();
        for (k, t) in kids.iter().zip(&token) {
            let mut out: Vec<(u8, u32)> = k.iter().map(|(&b, &c)| (b, c)).collect();
            out.sort_unstable();
            nodes.push(Node {
                token: *t,
                first: edges.len() as u32,
                len: out.len() as u32,
            });
            edges.extend(out.into_iter().map(|(label, child)| Edge { label, child }));
        }
        Trie { root, nodes, edges }
    }

    #[inline]
    fn child(&self, node: u32, b: u8) -> u32 {
        if node == 0 {
            return self.root[b as usize];
        }
        let n = self.nodes[node as usize];
        let edges = &self.edges[n.first as usize..(n.first + n.len) as usize];
        let found = if edges.len() <= 8 {
            edges.iter().position(|e| e.label == b)
        } else {
            edges.binary_search_by_key(&b, |e| e.label).ok()
        };
        found.map_or(NONE, |k| edges[k].child)
    }

    /// The longest entry that `text` starts with: (id, length in bytes).
    #[inline]
    pub fn longest_prefix(&self, text: &[u8]) -> Option<(u32, usize)> {
        let mut node = 0u32;
        let mut best = None;
        for (i, &b) in text.iter().enumerate() {
            node = self.child(node, b);
            if node == NONE {
                break;
            }
            let t = self.nodes[node as usize].token;
            if t != NONE {
                best = Some((t, i + 1));
            }
        }
        best
    }

    /// The id of exactly `key`, if it is an entry.
    pub fn get(&self, key: &[u8]) -> Option<u32> {
        let mut node = 0u32;
        for &b in key {
            node = self.child(node, b);
            if node == NONE {
                return None;
            }
        }
        let t = self.nodes[node as usize].token;
        (t != NONE && !key.is_empty()).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_prefix_prefers_longer_entries() {
        let t = Trie::new([(&b"un"[..], 1), (&b"una"[..], 2), (&b"unaff"[..], 3)]);
        assert_eq!(t.longest_prefix(b"unaffable"), Some((3, 5)));
        assert_eq!(t.longest_prefix(b"unab"), Some((2, 3)));
        assert_eq!(t.longest_prefix(b"u"), None);
        assert_eq!(t.get(b"una"), Some(2));
        assert_eq!(t.get(b"unaf"), None);
    }
}
