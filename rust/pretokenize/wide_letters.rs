//! The non-ASCII letters of a 64-byte block, for the block scanners of the patterns whose words
//! are `\p{L}+` (GPT-2's and cl100k's families).
//!
//! Idea: most non-ASCII text is letters whose class a char's first two bytes decide. A 2-byte
//! char is one code point of those two bytes; a 3-byte char lies in the 64-code-point block its
//! first two bytes name, and whole blocks are letters (every CJK ideograph, Hangul syllable and
//! Cyrillic letter block). So each lead byte gets two ranges of second bytes, less at most two
//! of them, for which the char is surely a letter (`WideLeads`, built from the same Unicode tables
//! as the scalar scanners); a block's lead bytes look their range up with byte shuffles, compare
//! the next byte with it, and the char's bytes join the block's letters. Cyrillic (two-byte
//! leads `D0`/`D1`, all letters), German's `ä ö ü ß` (`C3`, letters but for `×` and `÷`), CJK
//! ideographs (`E4`–`E9`) and most Hangul then cut a block at a time, as ASCII words do.
//!
//! Invariant: a bit is set only for the bytes of a char that lies whole in the block, is in
//! `\p{L}`, and folds to none of the contraction letters (`ſ` is `(?i)s`, so it must reach the
//! scalar scanner's contraction check). Anything else stays "unknown" (`high`), which the block
//! rules treat as the horizon: classifying too little is slower, never wrong.
//!
//! The cased patterns (o200k, Tekken) split words where lower case meets upper case, so for them
//! two more tables take the upper-case (`Lu`, `Lt`) and the lower-case (`Ll`) letters apart:
//! Cyrillic and German split on case by their second byte too. Letters of neither case (`Lo`,
//! `Lm`: CJK, kana) belong to both of o200k's word classes, which no mask says, so they stay
//! unknown there.
//!
//! Downside: a lead whose letters are scattered (Greek, Arabic, kana) gets short ranges or none,
//! and its text stays with the scalar scanner; CJK under o200k does too.

use super::classes::{tables, Tables, L, LL, LT, LU};
use std::sync::OnceLock;

/// How a block scanner takes non-ASCII letters (the walker's `WIDE`): as letters, for the
/// patterns whose words are `\p{L}+`.
pub const LETTERS: u8 = 1;
/// As upper- and lower-case letters: o200k's and Tekken's words.
pub const CASED: u8 = 2;

/// The tables, built on first use from this process's Unicode tables (a few milliseconds).
pub struct Leads {
    /// `\p{L}`.
    pub letters: WideLeads,
    /// `\p{Lu}` and `\p{Lt}`: o200k's upper-case class less the letters in both of its classes.
    pub upper: WideLeads,
    /// `\p{Ll}`.
    pub lower: WideLeads,
}

impl Leads {
    /// Does a cased table take the char of `lead` followed by `next`? The walker asks of a
    /// block's first non-ASCII char before it looks the whole block up in both: text in a
    /// script of no case (CJK, Hangul, Arabic under o200k) would pay for both and get nothing.
    #[inline(always)]
    pub fn cased(&self, lead: u8, next: u8) -> bool {
        self.upper.takes(lead, next) || self.lower.takes(lead, next)
    }
}

pub fn leads() -> &'static Leads {
    static LEADS: OnceLock<Leads> = OnceLock::new();
    LEADS.get_or_init(|| {
        let t = tables();
        Leads {
            letters: WideLeads::build(t, L),
            upper: WideLeads::build(t, LU | LT),
            lower: WideLeads::build(t, LL),
        }
    })
}

/// Per lead byte `0xC0..=0xEF` (indexed `[group][low nibble]`, group 0 for `C`, 1 for `D`, 2
/// for `E`): the char is a letter when its second byte `n` is in one of two ranges
/// (`lo[r] <= n <= hi[r]`) and is neither exclusion. An empty range has `lo > hi`. Two ranges,
/// because a lead may cover two scripts: `EA` is Yi and then Hangul's first 1,024 syllables.
#[derive(Clone, Debug)]
pub struct WideLeads {
    lo: [[[u8; 16]; 3]; 2],
    hi: [[[u8; 16]; 3]; 2],
    /// `0x00` when unused: a second byte is a continuation byte (`0x80..=0xBF`), never `0x00`.
    ex: [[[u8; 16]; 3]; 2],
}

impl WideLeads {
    /// The chars with one of the class bits `class` (and no contraction fold).
    pub fn build(t: &Tables, class: u16) -> Self {
        let mut w = WideLeads {
            lo: [[[0xFF; 16]; 3]; 2],
            hi: [[[0x00; 16]; 3]; 2],
            ex: [[[0x00; 16]; 3]; 2],
        };
        for lead in 0xC2u8..=0xEF {
            let mut good: Vec<bool> = (0x80u8..=0xBF)
                .map(|n| second_is_in(t, class, lead, n))
                .collect();
            let (g, k) = ((lead >> 4) as usize - 0xC, (lead & 0x0F) as usize);
            // The best range with its exclusions, then the best one with none among the rest.
            for r in 0..2 {
                let Some((lo, hi, bad)) = best_range(&good, if r == 0 { 2 } else { 0 }) else {
                    break;
                };
                w.lo[r][g][k] = 0x80 + lo as u8;
                w.hi[r][g][k] = 0x80 + hi as u8;
                for (slot, &b) in bad.iter().enumerate() {
                    w.ex[slot][g][k] = 0x80 + b as u8;
                }
                good[lo..=hi].fill(false);
            }
        }
        w
    }

    /// Is the char of `lead` followed by `next` taken as a letter? (The scalar statement of what
    /// the shuffles compute.)
    #[inline(always)]
    fn takes(&self, lead: u8, next: u8) -> bool {
        if !(0xC0..0xF0).contains(&lead) {
            return false;
        }
        let (g, k) = ((lead >> 4) as usize - 0xC, (lead & 0x0F) as usize);
        let within = |r: usize| self.lo[r][g][k] <= next && next <= self.hi[r][g][k];
        (within(0) || within(1)) && next != self.ex[0][g][k] && next != self.ex[1][g][k]
    }
}

/// Is every char that starts with `lead, next` in `class` and folds to no contraction letter?
/// For a 3-byte lead, that is every code point of the 64-code-point block they name; byte pairs
/// that no valid UTF-8 has (overlong forms, surrogates) answer no.
fn second_is_in(t: &Tables, class: u16, lead: u8, next: u8) -> bool {
    let letter = |cp: u32| {
        char::from_u32(cp).is_some_and(|c| t.of(c) & class != 0 && !t.is_contraction_fold(c))
    };
    if lead < 0xE0 {
        letter(((lead as u32 & 0x1F) << 6) | (next as u32 & 0x3F))
    } else {
        let block = ((lead as u32 & 0x0F) << 12) | ((next as u32 & 0x3F) << 6);
        block >= 0x800 && (block..block + 64).all(letter)
    }
}

/// The range of indices of `good` with at most `holes` false entries inside that covers the
/// most true ones, with those false entries; `None` if none is true.
fn best_range(good: &[bool], holes: usize) -> Option<(usize, usize, Vec<usize>)> {
    let mut best: Option<(usize, usize, Vec<usize>, usize)> = None;
    for lo in 0..good.len() {
        let mut bad = Vec::new();
        for (hi, &g) in good.iter().enumerate().skip(lo) {
            if !g {
                if bad.len() == holes {
                    break;
                }
                bad.push(hi);
            }
            let score = hi + 1 - lo - bad.len();
            if score > 0 && best.as_ref().is_none_or(|b| score > b.3) {
                best = Some((lo, hi, bad.clone(), score));
            }
        }
    }
    best.map(|(lo, hi, bad, _)| (lo, hi, bad))
}

/// The bits of `block`'s bytes that [`WideLeads`] takes as letters: each taken lead, and its one
/// or two continuation bytes, when the char ends inside the block.
#[inline(always)]
fn spread(lead2: u64, lead3: u64) -> u64 {
    let lead2 = lead2 & (u64::MAX >> 1); // a lead at byte 63 ends past the block
    let lead3 = lead3 & (u64::MAX >> 2);
    lead2 | lead2 << 1 | lead3 | lead3 << 1 | lead3 << 2
}

/// The portable statement, a byte at a time: the tests hold the AVX2 version to it.
#[cfg(test)]
pub fn portable(block: &[u8; 64], w: &WideLeads) -> u64 {
    let (mut lead2, mut lead3) = (0u64, 0u64);
    for k in 0..63 {
        if w.takes(block[k], block[k + 1]) {
            if block[k] < 0xE0 {
                lead2 |= 1 << k;
            } else {
                lead3 |= 1 << k;
            }
        }
    }
    spread(lead2, lead3)
}

/// [`portable`] with AVX2: per 32 bytes, eighteen byte shuffles fetch each lead's ranges and
/// exclusions, and a few compares check the next byte against them.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
pub unsafe fn avx2(block: &[u8; 64], w: &WideLeads) -> u64 {
    use std::arch::x86_64::*;
    let p = block.as_ptr().cast::<__m256i>();
    let a = _mm256_loadu_si256(p);
    let b = _mm256_loadu_si256(p.add(1));
    // Each byte's successor: `alignr` shifts within 128-bit lanes, so the lane above is brought
    // next to each lane first; byte 63's successor lies outside the block (0: no lead's range).
    let a_next = _mm256_alignr_epi8::<1>(_mm256_permute2x128_si256::<0x21>(a, b), a);
    let b_next = _mm256_alignr_epi8::<1>(_mm256_permute2x128_si256::<0x81>(b, b), b);
    let table = |t: &[[u8; 16]; 3], g: usize| {
        _mm256_broadcastsi128_si256(_mm_loadu_si128(t[g].as_ptr().cast()))
    };
    let half = |x: __m256i, next: __m256i| {
        let low = _mm256_and_si256(x, _mm256_set1_epi8(0x0F));
        let group = _mm256_and_si256(_mm256_srli_epi16::<4>(x), _mm256_set1_epi8(0x0F));
        // The lead's entry of `t`, 0 for a byte that is no lead of 0xC0..=0xEF.
        let lookup = |t: &[[u8; 16]; 3]| {
            let mut r = _mm256_setzero_si256();
            for g in 0..3 {
                let is = _mm256_cmpeq_epi8(group, _mm256_set1_epi8(0xC + g as i8));
                let v = _mm256_shuffle_epi8(table(t, g), low);
                r = _mm256_or_si256(r, _mm256_and_si256(is, v));
            }
            r
        };
        let within = |r: usize| {
            let (lo, hi) = (lookup(&w.lo[r]), lookup(&w.hi[r]));
            _mm256_and_si256(
                _mm256_cmpeq_epi8(_mm256_max_epu8(next, lo), next),
                _mm256_cmpeq_epi8(_mm256_min_epu8(next, hi), next),
            )
        };
        let excluded = _mm256_or_si256(
            _mm256_cmpeq_epi8(next, lookup(&w.ex[0])),
            _mm256_cmpeq_epi8(next, lookup(&w.ex[1])),
        );
        // A byte that is no such lead got lo = hi = 0 and exclusion 0: `next` ≤ 0 only when it
        // is 0, which the exclusion then rejects.
        let taken = _mm256_andnot_si256(excluded, _mm256_or_si256(within(0), within(1)));
        let three = _mm256_cmpeq_epi8(group, _mm256_set1_epi8(0xE));
        let bits = |v: __m256i| _mm256_movemask_epi8(v) as u32 as u64;
        (
            bits(_mm256_andnot_si256(three, taken)),
            bits(_mm256_and_si256(three, taken)),
        )
    };
    let (a2, a3) = half(a, a_next);
    let (b2, b3) = half(b, b_next);
    spread(a2 | b2 << 32, a3 | b3 << 32)
}

#[cfg(test)]
mod tests {
    use super::super::tests::Rng;
    use super::*;

    /// Every code point below U+10000, in every position of a block: its bytes are taken only
    /// if it is in the table's class and folds to no contraction letter, and only when it ends
    /// inside the block.
    fn check_class(class: u16, want: &[char], refuse: &[char]) -> usize {
        let t = tables();
        let w = WideLeads::build(t, class);
        let mut taken = 0;
        for c in ('\u{80}'..='\u{FFFF}').filter(|c| c.len_utf8() > 1) {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            for at in [0usize, 61, 62, 63] {
                let mut block = [b'x'; 64];
                let n = bytes.len().min(64 - at);
                block[at..at + n].copy_from_slice(&bytes[..n]);
                let got = portable(&block, &w);
                let mine = got & (((1u64 << bytes.len()) - 1) << at);
                if mine == 0 {
                    continue;
                }
                assert_eq!(got, mine, "{c:?} at {at}: bits outside the char");
                assert_eq!(mine.count_ones() as usize, bytes.len(), "{c:?} at {at}");
                assert!(at + bytes.len() <= 64, "{c:?} at {at} ends past the block");
                assert!(t.of(c) & class != 0, "{c:?} is not in {class:#x}");
                assert!(
                    !t.is_contraction_fold(c),
                    "{c:?} folds to a contraction letter"
                );
                taken += 1;
            }
        }
        for &c in want {
            let mut block = [b'x'; 64];
            c.encode_utf8(&mut block[..4]);
            assert_ne!(portable(&block, &w), 0, "{c:?} is not taken");
        }
        for &c in refuse {
            let mut block = [b'x'; 64];
            c.encode_utf8(&mut block[..4]);
            assert_eq!(portable(&block, &w), 0, "{c:?} is taken");
        }
        taken
    }

    #[test]
    fn only_whole_letters_are_taken() {
        // The scripts it is for: Cyrillic, Latin-1's letters, CJK ideographs, Hangul.
        let taken = check_class(
            L,
            &['д', 'Я', 'ä', 'ß', '中', '文', '한', '국', '가'],
            &[
                '×', '÷', 'ſ', '\u{4DC0}', '，', '\u{3000}', '\u{A0}', '—', '\u{D7A4}',
            ],
        );
        assert!(taken > 40_000, "only {taken} code point placements taken");
    }

    #[test]
    fn only_whole_letters_of_one_case_are_taken() {
        let upper = check_class(
            LU | LT,
            &['Я', 'Д', 'Ä', 'Ö'],
            &['д', 'ä', 'ß', '中', '×', 'ſ'],
        );
        let lower = check_class(LL, &['д', 'я', 'ä', 'ß', 'ü'], &['Я', 'Ä', '中', '÷', 'ſ']);
        assert!(upper > 300 && lower > 400, "{upper} upper, {lower} lower");
    }

    #[test]
    fn avx2_takes_what_the_portable_version_takes() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("no AVX2 on this CPU: only the portable version runs here");
            return;
        }
        let l = leads();
        let chars = [
            "a", " ", "д", "Я", "ä", "Ä", "×", "÷", "ß", "ſ", "中", "\u{4DC0}", "한", "\u{D7A4}",
            "，", "😀", "\u{80}", "é", "\u{A0}", "\0", "\u{7FF}", "\u{800}", "\u{FFFF}",
        ];
        let mut rng = Rng(0x5eed_3de1_e77e_0001);
        for _ in 0..100_000 {
            let mut text = Vec::new();
            while text.len() < 64 {
                text.extend_from_slice(
                    chars[(rng.next() % chars.len() as u64) as usize].as_bytes(),
                );
            }
            let block: &[u8; 64] = text[..64].try_into().unwrap();
            for w in [&l.letters, &l.upper, &l.lower] {
                // SAFETY: AVX2 was detected above.
                assert_eq!(unsafe { avx2(block, w) }, portable(block, w), "{block:?}");
            }
        }
    }
}
