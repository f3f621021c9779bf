//! The block walker: pieces from the starts a block scanner finds 64 bytes at a time, the
//! scalar scanner where a block cannot tell.
//!
//! Idea: at a piece start `i`, classify `text[i..i + 64]` and take every piece whose end the
//! block scanner is certain of (below its horizon), in one loop over the set bits of the start
//! mask; then the next block begins at the last start taken. A block that gives no piece (a
//! piece longer than the block, or non-ASCII right at the start) hands one piece, or the bytes up
//! to past the block's last non-ASCII byte, to the scalar scanner. The text's last bytes are
//! classified from a padded copy whose padding is marked as the text's end (`ByteMasks::end`),
//! which the block rules treat as an end: a piece stops there and `\s+(?!\S)` keeps its last
//! blank, so a short text is cut by one block with no scalar tail (line by line, the scalar
//! tail and the second block it took were about 65 ns per text, half the scan's time on
//! en_docs' lines). Without AVX2 the scalar scanner runs alone: the portable classifier
//! (a table load per byte) costs more per block than the blocks save.
//!
//! Invariant: the pieces are exactly the scalar scanner's, since each block starts at a start
//! the scalar scanner would reach and the block scanner reports only certain starts.
//!
//! Downside: every block after the first re-reads the bytes of the piece its predecessor could
//! not finish (a few bytes of 64 on prose).

use super::classes::{tables, Tables};
use super::masks::{ByteMasks, Classify};
use super::wide_letters::{leads, CASED, LETTERS};
use super::SpanSink;
use crate::error::Result;

/// Call `f` with the pieces of `text` in batches of up to [`SPAN_BATCH`], as `next_end` (the
/// scalar scanner) cuts them, found a block at a time by `starts` where it can.
/// Most bytes the scalar scanner runs on its own before the next block is tried.
const MAX_SKIP: usize = 4096;

/// `WIDE` (`wide_letters::LETTERS` or `CASED`): how the block rules get the non-ASCII
/// letters `wide_letters.rs` takes: as letters (the patterns whose words are `\p{L}+`) or as
/// upper- and lower-case letters (o200k's and Tekken's).
#[inline(always)]
pub fn scan<const WIDE: u8>(
    text: &str,
    next_end: impl Fn(&Tables, &[u8], usize) -> usize + Copy,
    starts: impl Fn(&[u8; 64], &ByteMasks) -> (u64, u32) + Copy,
    sink: &mut impl SpanSink,
) -> Result<()> {
    #[cfg(target_arch = "x86_64")]
    if let Some(avx2) = super::masks::Avx2::detect() {
        // SAFETY: `detect` found AVX2 on this CPU.
        return unsafe { walk_avx2::<WIDE>(avx2, text, next_end, starts, sink) };
    }
    // Without a wide classifier a block costs more than the scalar scanner saves.
    let _ = starts;
    super::scan_each(text, next_end, sink)
}

/// [`walk`] compiled with AVX2 on, so the classifier inlines into the loop.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn walk_avx2<const WIDE: u8>(
    c: super::masks::Avx2,
    text: &str,
    next_end: impl Fn(&Tables, &[u8], usize) -> usize + Copy,
    starts: impl Fn(&[u8; 64], &ByteMasks) -> (u64, u32) + Copy,
    sink: &mut impl SpanSink,
) -> Result<()> {
    walk::<WIDE>(c, text, next_end, starts, sink)
}

#[inline(always)]
fn walk<const WIDE: u8>(
    c: impl Classify,
    text: &str,
    next_end: impl Fn(&Tables, &[u8], usize) -> usize + Copy,
    starts: impl Fn(&[u8; 64], &ByteMasks) -> (u64, u32) + Copy,
    sink: &mut impl SpanSink,
) -> Result<()> {
    let t = tables();
    let wide = leads();
    let b = text.as_bytes();
    let mut i = 0;
    // Below this the scalar scanner runs: past the unknown bytes of a block that gave nothing.
    let mut scalar_until = 0;
    let mut skip = 0;
    let mut padded = [0x80u8; 64];
    while i < b.len() {
        if i >= scalar_until {
            let left = b.len() - i;
            let block: &[u8; 64] = match b.get(i..i + 64) {
                Some(w) => w.try_into().expect("64 bytes"),
                None => {
                    padded.fill(0x80);
                    padded[..left].copy_from_slice(&b[i..]);
                    &padded
                }
            };
            // One classify for both arms: with one per arm, the compiler kept the padded
            // copy in registers and rebuilt it byte by byte (a third of the scan's time).
            let mut m = c.classify(block);
            if left < 64 {
                // The padding classifies as high; it is the text's end instead.
                m.end = !super::block_cl100k::below(left as u32);
                m.high &= !m.end;
            }
            if WIDE == LETTERS && m.high != 0 {
                let w = c.wide_letters(block, &wide.letters);
                m.letter |= w;
                m.high &= !w;
            }
            // Only when the block's first non-ASCII char is cased (`Leads::cased`): Korean
            // under o200k ran 4% slower with both lookups in every block.
            if WIDE == CASED && m.high != 0 && {
                let k = m.high.trailing_zeros() as usize;
                wide.cased(block[k], block.get(k + 1).copied().unwrap_or(0))
            } {
                let lower = c.wide_letters(block, &wide.lower);
                let w = lower | c.wide_letters(block, &wide.upper);
                m.letter |= w;
                m.lower |= lower;
                m.high &= !w;
            }
            let base = i;
            // A non-ASCII byte among the first two leaves no certain start past bit 0 (every
            // horizon stops short of the unknown), so the block rules need not run.
            let mut rest = if m.high & 3 == 0 {
                starts(block, &m).0 & !1
            } else {
                0
            };
            if rest != 0 {
                skip = 0;
                while rest != 0 {
                    let end = base + rest.trailing_zeros() as usize;
                    debug_assert_eq!(end, next_end(t, b, i), "block start at {i}");
                    sink.push((i, end))?;
                    i = end;
                    rest &= rest - 1;
                }
                continue;
            }
            // Past the block's last unknown byte (when it takes wide letters, its first one: the
            // letters after it are likely to cut a block again), and further after each block
            // in a row that gave nothing: text in another script would pay for a block per few
            // pieces.
            let past = if WIDE == LETTERS {
                (m.high.trailing_zeros() as usize + 1).min(64)
            } else {
                64 - m.high.leading_zeros() as usize
            };
            scalar_until = base + past.max(1) + skip;
            skip = (2 * skip + 64).min(MAX_SKIP);
        }
        // A stretch for the scalar scanner: at least one piece.
        loop {
            let j = next_end(t, b, i);
            debug_assert!(j > i && text.is_char_boundary(j));
            sink.push((i, j))?;
            i = j;
            if i >= scalar_until || i >= b.len() {
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::masks::portable::Portable;
    use super::super::tests::Rng;
    use super::super::wide_letters::{CASED, LETTERS};
    use super::super::{
        block_cl100k, block_gpt2, block_o200k, scan_cl100k, scan_gpt2, scan_o200k, Span,
    };
    use super::*;

    /// Long texts, mostly ASCII, dense in what the block rules distinguish: blanks of every
    /// kind before letters, others and digits, line breaks after others, contractions in both
    /// cases, digit runs, and non-ASCII chars that are letters, whitespace or a long s.
    fn random_long_text(rng: &mut Rng) -> String {
        random_text(rng, 200)
    }

    /// Up to `max_units` of the units below. Short texts (a few units) put every rule next to
    /// the text's end, where the block rules keep no certain start back.
    fn random_text(rng: &mut Rng, max_units: u64) -> String {
        const UNITS: &[&str] = &[
            " ",
            " ",
            " ",
            "  ",
            "\t",
            "\x0b",
            "\x0c",
            "\n",
            "\r\n",
            "\n\n",
            "a",
            "b",
            "word",
            "Word",
            "s",
            "t",
            "ll",
            "ve",
            "re",
            "d",
            "m",
            "LL",
            "Ve",
            "rE",
            "S",
            "'",
            "'",
            "''",
            "0",
            "12",
            "345",
            "6789",
            "!",
            ".",
            "..",
            "/",
            "//",
            "-",
            "_",
            "\x00",
            "\x1c",
            "\x7f",
            "Ab",
            "aB",
            "ABC",
            "HTTPServer",
            "'S",
            "'Re",
            "n't",
            "é",
            "\u{a0}",
            "\u{85}",
            "\u{3000}",
            "ſ",
            "\u{212a}",
            "中",
            "한",
            "😀",
            "٣",
            "Ⅻ",
            // What `wide_letters.rs` takes as letters, and its neighbours that it must not:
            // Cyrillic words, German's letters beside `×` and `÷`, CJK beside a Yijing symbol
            // and CJK punctuation, Hangul at the end of its block, a dash and quotes.
            "д",
            "Москва",
            "Я",
            "ДОМ",
            "Ä",
            "ǅ",
            "ä",
            "ß",
            "Straße",
            "×",
            "÷",
            "文字",
            "\u{4DC0}",
            "，",
            "。",
            "가",
            "힣",
            "\u{D7A4}",
            "—",
            "«",
            "»",
        ];
        let units = (rng.next() % max_units) as usize;
        let ascii_only = rng.next().is_multiple_of(2);
        (0..units)
            .map(|_| loop {
                let u = UNITS[(rng.next() % UNITS.len() as u64) as usize];
                if !ascii_only || u.is_ascii() {
                    break u;
                }
            })
            .collect()
    }

    fn scalar_spans(text: &str, next_end: impl Fn(&Tables, &[u8], usize) -> usize) -> Vec<Span> {
        let (t, b) = (tables(), text.as_bytes());
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let j = next_end(t, b, i);
            out.push((i, j));
            i = j;
        }
        out
    }

    fn block_spans<const WIDE: u8>(
        c: impl Classify,
        text: &str,
        next_end: impl Fn(&Tables, &[u8], usize) -> usize + Copy,
        starts: impl Fn(&[u8; 64], &ByteMasks) -> (u64, u32) + Copy,
    ) -> Vec<Span> {
        let mut out = Vec::new();
        walk::<WIDE>(c, text, next_end, starts, &mut out).unwrap();
        out
    }

    fn check_family<const WIDE: u8>(
        seed: u64,
        next_end: impl Fn(&Tables, &[u8], usize) -> usize + Copy,
        starts: impl Fn(&[u8; 64], &ByteMasks) -> (u64, u32) + Copy,
    ) {
        let mut rng = Rng(seed);
        #[cfg(target_arch = "x86_64")]
        let avx2 = super::super::masks::Avx2::detect();
        for k in 0..40_000 {
            // A quarter of short texts: all end, and most in their first block.
            let text = random_text(&mut rng, if k % 4 == 0 { 8 } else { 200 });
            let want = scalar_spans(&text, next_end);
            assert_eq!(
                block_spans::<WIDE>(Portable, &text, next_end, starts),
                want,
                "{text:?}"
            );
            #[cfg(target_arch = "x86_64")]
            if let Some(c) = avx2 {
                assert_eq!(
                    block_spans::<WIDE>(c, &text, next_end, starts),
                    want,
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn gpt2_blocks_cut_like_the_scalar_scanner() {
        check_family::<LETTERS>(
            0x5eed_b10c_6972_0005,
            scan_gpt2::next_end,
            block_gpt2::starts,
        );
    }

    #[test]
    fn o200k_blocks_cut_like_the_scalar_scanner() {
        check_family::<CASED>(
            0x5eed_b10c_0200_0006,
            scan_o200k::next_end,
            block_o200k::starts::<true, 3>,
        );
    }

    #[test]
    fn tekken_blocks_cut_like_the_scalar_scanner() {
        check_family::<CASED>(
            0x5eed_b10c_7e44_0007,
            scan_o200k::next_end_tekken,
            block_o200k::starts::<false, 1>,
        );
    }

    #[test]
    fn cl100k_blocks_cut_like_the_scalar_scanner() {
        check_family::<LETTERS>(
            0x5eed_b10c_c100_0001,
            scan_cl100k::next_end,
            block_cl100k::starts::<3, true>,
        );
    }

    #[test]
    fn llama3_blocks_cut_like_the_scalar_scanner() {
        check_family::<LETTERS>(
            0x5eed_b10c_11a3_0002,
            scan_cl100k::next_end_llama3,
            block_cl100k::starts::<3, false>,
        );
    }

    #[test]
    fn qwen2_blocks_cut_like_the_scalar_scanner() {
        check_family::<LETTERS>(
            0x5eed_b10c_0e12_0003,
            scan_cl100k::next_end_qwen2,
            block_cl100k::starts::<1, false>,
        );
    }

    /// The walk as the encoder runs it, against fancy-regex itself on long texts.
    #[test]
    fn block_walk_matches_the_regex_on_long_texts() {
        use super::super::tests::SCANNED_PATTERNS;
        use super::super::Pattern;
        let mut rng = Rng(0x5eed_b10c_4e6e_0004);
        for pattern in SCANNED_PATTERNS {
            let ours = Pattern::new(pattern).unwrap();
            let re = fancy_regex::Regex::new(pattern).unwrap();
            for _ in 0..3_000 {
                let text = random_long_text(&mut rng);
                let want: Vec<&str> = re.find_iter(&text).map(|m| m.unwrap().as_str()).collect();
                assert_eq!(ours.pieces(&text).unwrap(), want, "{pattern:?} on {text:?}");
            }
        }
    }
}
