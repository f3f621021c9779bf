//! The piece cache of the hot path: pieces of up to 15 bytes → their ids, per thread.
//!
//! Idea: almost every piece of real text is short and one of a few thousand frequent ones. A
//! direct-mapped table of 32-byte entries (a 16-byte packed key and up to four ids inline, two
//! entries per cache line) answers them from L2 in one hash and one compare, before the
//! vocabulary's much larger hash map (megabytes, mostly L3) is touched. Each thread owns its
//! tables, so there is no lock and nothing shared between threads to bounce between cores.
//!
//! Invariants: a key is `vocab::pack_short(piece)`, never 0 (its top byte holds the length
//! 1..=15), so a zeroed entry is empty; an entry's ids are exactly what encoding its piece with
//! its owner's encoder gives (entries are only written from that result). Tables are per
//! encoder (`owner`), at most [`OWNERS`] per thread, least recently used dropped first.
//!
//! A second level of 128 K entries (4 MB, in L3) keeps what the first evicts: a piece coming
//! back then costs one L3 read instead of a merge, whose pair-table lookups miss the cache too.
//!
//! Downside: a piece with more than four ids, or longer than 15 bytes, is never cached here; a
//! thread that alternates between more than four encoders keeps rebuilding tables; each encoder
//! costs 4.5 MB per thread that ran it; text of mostly unique words (a dictionary) pays the
//! second level's miss on top of the merge (en_webster r50k: −5%, en_fortunes o200k: +15%).

use crate::vocab::Rank;

/// Entries per table: 16 K × 32 B = 512 KB, within a core's L2 on current x86.
const BITS: u32 = 14;
const ENTRIES: usize = 1 << BITS;
/// Most ids an entry holds.
pub const MAX_IDS: usize = 4;
/// Encoders per thread with a table of their own.
const OWNERS: usize = 4;
/// Ids are below 2²⁶ (`vocab::MAX_ID`), so the count fits in the top bits of the first.
const COUNT_SHIFT: u32 = 29;
const ID_MASK: u32 = (1 << COUNT_SHIFT) - 1;

#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
struct Entry {
    key: u128,
    ids: [Rank; MAX_IDS],
}

/// Entries of the second level: 128 K × 32 B = 4 MB, in L3.
const BITS2: u32 = 17;

#[inline(always)]
fn hash(key: u128) -> u64 {
    let x = (key as u64) ^ ((key >> 64) as u64).rotate_left(29);
    x.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// One encoder's table on this thread.
pub struct Table {
    entries: Box<[Entry]>,
    /// What the first level lost: a piece it evicted costs an L3 read here instead of a merge
    /// (hundreds of ns of pair-table misses) when it comes back.
    second: Box<[Entry]>,
    lookups: u64,
    hits: u64,
}

impl Table {
    fn new() -> Self {
        Table {
            entries: vec![Entry::default(); ENTRIES].into_boxed_slice(),
            second: vec![Entry::default(); 1 << BITS2].into_boxed_slice(),
            lookups: 0,
            hits: 0,
        }
    }

    /// Append the ids of the piece packed as `key` to `out`; false if not cached.
    #[inline(always)]
    pub fn get(&mut self, key: u128, out: &mut Vec<Rank>) -> bool {
        self.lookups += 1;
        let h = hash(key);
        let first = (h >> (64 - BITS)) as usize;
        let e = if self.entries[first].key == key {
            &self.entries[first]
        } else {
            let e2 = self.second[(h >> (64 - BITS2)) as usize];
            if e2.key != key {
                return false;
            }
            self.entries[first] = e2;
            &self.entries[first]
        };
        self.hits += 1;
        let n = (e.ids[0] >> COUNT_SHIFT) as usize;
        out.push(e.ids[0] & ID_MASK);
        out.extend_from_slice(&e.ids[1..n]);
        true
    }

    /// Remember `ids` (1..=MAX_IDS of them) for the piece packed as `key`.
    #[inline(always)]
    pub fn insert(&mut self, key: u128, ids: &[Rank]) {
        if ids.is_empty() || ids.len() > MAX_IDS {
            return;
        }
        let h = hash(key);
        let mut e = Entry {
            key,
            ids: [0; MAX_IDS],
        };
        e.ids[..ids.len()].copy_from_slice(ids);
        e.ids[0] = (ids[0] & ID_MASK) | ((ids.len() as u32) << COUNT_SHIFT);
        self.entries[(h >> (64 - BITS)) as usize] = e;
        self.second[(h >> (64 - BITS2)) as usize] = e;
    }
}

/// This thread's tables, most recently used first.
#[derive(Default)]
pub struct Tables {
    by_owner: Vec<(u64, Table)>,
}

impl Tables {
    /// The table of encoder `owner`, made (or taken over from the least recently used) if needed.
    #[inline]
    pub fn of(&mut self, owner: u64) -> &mut Table {
        match self.by_owner.iter().position(|(o, _)| *o == owner) {
            Some(0) => {}
            Some(k) => self.by_owner[..=k].rotate_right(1),
            None => {
                let table = if self.by_owner.len() < OWNERS {
                    Table::new()
                } else {
                    let (_, mut t) = self.by_owner.pop().expect("full");
                    t.entries.fill(Entry::default());
                    t.second.fill(Entry::default());
                    t.lookups = 0;
                    t.hits = 0;
                    t
                };
                self.by_owner.insert(0, (owner, table));
            }
        }
        &mut self.by_owner[0].1
    }

    /// (lookups, hits) of `owner`'s table on this thread since it was made.
    pub fn stats(&self, owner: u64) -> (u64, u64) {
        self.by_owner
            .iter()
            .find(|(o, _)| *o == owner)
            .map_or((0, 0), |(_, t)| (t.lookups, t.hits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::pack_short;

    #[test]
    fn the_second_level_keeps_what_the_first_evicts() {
        let mut t = Table::new();
        let first = |k: u128| hash(k) >> (64 - BITS);
        let second = |k: u128| hash(k) >> (64 - BITS2);
        // Two pieces in one first-level slot but different second-level slots.
        let a = pack_short(b"alpha").unwrap();
        let b = (0u32..)
            .map(|i| pack_short(format!("w{i}").as_bytes()).unwrap())
            .find(|&k| first(k) == first(a) && second(k) != second(a))
            .unwrap();
        t.insert(a, &[1, 2]);
        t.insert(b, &[3]);
        let mut out = Vec::new();
        assert!(t.get(a, &mut out) && out == [1, 2]); // from the second level, promoted
        out.clear();
        assert!(t.get(b, &mut out) && out == [3]);
        assert_eq!((t.lookups, t.hits), (2, 2));
    }

    #[test]
    fn hit_miss_overwrite_and_owners() {
        let mut tables = Tables::default();
        let k = pack_short(b"hello").unwrap();
        let mut out = Vec::new();
        assert!(!tables.of(1).get(k, &mut out));
        tables.of(1).insert(k, &[7, (1 << 26) - 1, 3]);
        assert!(tables.of(1).get(k, &mut out));
        assert_eq!(out, [7, (1 << 26) - 1, 3]);
        // Another encoder has its own table.
        assert!(!tables.of(2).get(k, &mut out));
        // Too many ids: not cached (the old entry stays).
        tables.of(1).insert(k, &[1, 2, 3, 4, 5]);
        out.clear();
        assert!(tables.of(1).get(k, &mut out));
        assert_eq!(out, [7, (1 << 26) - 1, 3]);
        // More owners than kept: the least recently used goes, the others stay.
        for owner in 3..=5 {
            tables.of(owner);
        }
        assert!(!tables.of(2).get(k, &mut out) && tables.by_owner.len() == OWNERS);
        assert_eq!(tables.stats(1), (0, 0)); // 1 was dropped and forgotten
    }
}
