//! Pre-tokenization: cutting text into the pieces that BPE encodes independently.
//!
//! The built-in patterns run as hand-written scanners (no regex engine, no backtracking, one pass);
//! any other pattern runs on `fancy-regex`, the engine tiktoken uses, so lookaround works. A pattern
//! string equal to a built-in one gets the scanner automatically. `tests` in this module check each
//! scanner against `fancy-regex` running the original pattern.

mod block_cl100k;
mod block_gpt2;
mod block_o200k;
mod blocks;
pub(crate) mod classes;
mod masks;
pub mod safe_cut;
mod scan_cl100k;
mod scan_deepseek;
mod scan_gpt2;
mod scan_o200k;
mod wide_letters;

use crate::error::{Error, Result};
pub use scan_deepseek::DEEPSEEK_V3_SPLITS;

pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
/// The pattern as first published with GPT-2; it splits text exactly like [`GPT2_PATTERN`].
pub const GPT2_ORIGINAL_PATTERN: &str =
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+(?!\S)",
    r"|\s+"
);

/// Llama 3's pattern: cl100k's as first published (`\s*[\r\n]+`, `\s+` where tiktoken's cl100k
/// now has `\s++$|\s*[\r\n]`, `\s`), which splits some whitespace runs differently.
pub const LLAMA3_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen 2/2.5/3's pattern: Llama 3's with single digits.
pub const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Mistral Tekken's pattern (from `tekken.json`): o200k's without contractions, single digits.
pub const TEKKEN_PATTERN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Names accepted wherever a pattern is asked for.
pub const PATTERN_NAMES: &[(&str, &str)] = &[
    ("gpt2", GPT2_PATTERN),
    ("r50k_base", GPT2_PATTERN),
    ("p50k_base", GPT2_PATTERN),
    ("cl100k_base", CL100K_PATTERN),
    ("o200k_base", O200K_PATTERN),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scanner {
    Gpt2,
    Cl100k,
    O200k,
    Llama3,
    Qwen2,
    Tekken,
    DeepSeekV3,
}

#[derive(Clone, Debug)]
enum Engine {
    Scanner(Scanner),
    Regex(fancy_regex::Regex),
    /// No pre-tokenization: the whole text is one piece.
    Whole,
    /// Several regexes in turn, each cutting every piece of the one before into its matches and
    /// the text between them (HF's Sequence of `Split` pre-tokenizers with behavior `Isolated`,
    /// as in DeepSeek-V3's tokenizer.json).
    Isolated(Vec<fancy_regex::Regex>),
}

/// A compiled pre-tokenization pattern.
#[derive(Clone, Debug)]
pub struct Pattern {
    source: String,
    /// The regexes of an [`Engine::Isolated`] chain (empty otherwise).
    parts: Vec<String>,
    engine: Engine,
}

impl Pattern {
    /// Compile `pattern`: a built-in name (`gpt2`, `cl100k_base`, …) or a regex. The empty string
    /// means no pre-tokenization (an empty regex would match nothing useful).
    pub fn new(pattern: &str) -> Result<Self> {
        if pattern.is_empty() {
            return Ok(Self::whole());
        }
        let source = PATTERN_NAMES
            .iter()
            .find(|(name, _)| *name == pattern)
            .map_or(pattern, |(_, p)| p)
            .to_string();
        let engine = match source.as_str() {
            GPT2_PATTERN | GPT2_ORIGINAL_PATTERN => Engine::Scanner(Scanner::Gpt2),
            CL100K_PATTERN => Engine::Scanner(Scanner::Cl100k),
            O200K_PATTERN => Engine::Scanner(Scanner::O200k),
            LLAMA3_PATTERN => Engine::Scanner(Scanner::Llama3),
            QWEN2_PATTERN => Engine::Scanner(Scanner::Qwen2),
            TEKKEN_PATTERN => Engine::Scanner(Scanner::Tekken),
            _ => Engine::Regex(compile_regex(&source)?),
        };
        if let Engine::Scanner(_) = engine {
            classes::tables();
        }
        Ok(Pattern {
            source,
            parts: Vec::new(),
            engine,
        })
    }

    /// Regexes applied in turn, each isolating its matches within the pieces of the one before;
    /// one regex is [`Pattern::new`]. Downside: every piece of every stage is a fancy-regex run.
    pub fn isolated_splits(parts: &[String]) -> Result<Self> {
        let deepseek = parts.len() == DEEPSEEK_V3_SPLITS.len()
            && parts.iter().zip(DEEPSEEK_V3_SPLITS).all(|(a, b)| a == b);
        match parts {
            [] => Ok(Self::whole()),
            [one] => Self::new(one),
            _ if deepseek => {
                classes::tables();
                Ok(Pattern {
                    source: parts.join(" then "),
                    parts: parts.to_vec(),
                    engine: Engine::Scanner(Scanner::DeepSeekV3),
                })
            }
            _ => Ok(Pattern {
                source: parts.join(" then "),
                parts: parts.to_vec(),
                engine: Engine::Isolated(
                    parts
                        .iter()
                        .map(|p| compile_regex(p))
                        .collect::<Result<_>>()?,
                ),
            }),
        }
    }

    /// The regexes of an [`Pattern::isolated_splits`] chain of two or more; None for one pattern.
    pub fn chain(&self) -> Option<&[String]> {
        (!self.parts.is_empty()).then_some(&self.parts[..])
    }

    /// The identity pattern: no splitting at all.
    pub fn whole() -> Self {
        Pattern {
            source: String::new(),
            parts: Vec::new(),
            engine: Engine::Whole,
        }
    }

    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// True for the built-in patterns, whose pieces never span the cut points of
    /// [`safe_cut::is_safe_cut`]; other patterns are never cut inside a document.
    pub fn has_safe_cuts(&self) -> bool {
        matches!(self.engine, Engine::Scanner(_))
    }

    pub fn is_whole(&self) -> bool {
        matches!(self.engine, Engine::Whole)
    }

    /// Call `f` with each piece of `text`, in order.
    #[inline]
    pub fn for_each_piece<'t>(
        &self,
        text: &'t str,
        mut f: impl FnMut(&'t str) -> Result<()>,
    ) -> Result<()> {
        match &self.engine {
            // The block scanners hand over batches (`blocks.rs`); each scanner gets its own loop,
            // so each `next_end` is inlined into it (a function pointer chosen at run time cost an
            // indirect call per piece).
            Engine::Scanner(
                Scanner::Gpt2
                | Scanner::Cl100k
                | Scanner::O200k
                | Scanner::Llama3
                | Scanner::Qwen2
                | Scanner::Tekken,
            ) => self.for_each_span_batch(text, |spans| {
                spans
                    .iter()
                    .try_for_each(|&(start, end)| f(&text[start..end]))
            }),
            Engine::Scanner(Scanner::DeepSeekV3) => scan_all(text, scan_deepseek::next_end, f),
            Engine::Regex(re) => {
                for span in regex_spans(re, text) {
                    let (start, end) = span?;
                    f(&text[start..end])?;
                }
                Ok(())
            }
            Engine::Whole => {
                if text.is_empty() {
                    Ok(())
                } else {
                    f(text)
                }
            }
            Engine::Isolated(res) => {
                for (start, end) in isolated_spans(res, text)? {
                    f(&text[start..end])?;
                }
                Ok(())
            }
        }
    }

    /// Call `f` with the pieces of `text` as byte ranges, up to [`SPAN_BATCH`] at a time, in order.
    /// A batch lets the encoder compute and prefetch every piece's cache slot before it reads the
    /// first one, so the slots' memory latency overlaps instead of adding up piece by piece.
    #[inline]
    pub fn for_each_span_batch(
        &self,
        text: &str,
        f: impl FnMut(&[Span]) -> Result<()>,
    ) -> Result<()> {
        let mut batches = Batches {
            spans: [(0, 0); SPAN_BATCH],
            n: 0,
            f,
        };
        self.for_each_span(text, &mut batches)?;
        batches.finish()
    }

    /// Push the pieces of `text` onto `sink` as byte ranges, in order: for a caller that
    /// gathers pieces across texts (`encode::runs`), with no batch buffer per text.
    #[inline]
    pub fn for_each_span(&self, text: &str, sink: &mut impl SpanSink) -> Result<()> {
        match &self.engine {
            Engine::Scanner(Scanner::Gpt2) => blocks::scan::<{ wide_letters::LETTERS }>(
                text,
                scan_gpt2::next_end,
                block_gpt2::starts,
                sink,
            ),
            Engine::Scanner(Scanner::Cl100k) => blocks::scan::<{ wide_letters::LETTERS }>(
                text,
                scan_cl100k::next_end,
                block_cl100k::starts::<3, true>,
                sink,
            ),
            Engine::Scanner(Scanner::O200k) => blocks::scan::<{ wide_letters::CASED }>(
                text,
                scan_o200k::next_end,
                block_o200k::starts::<true, 3>,
                sink,
            ),
            Engine::Scanner(Scanner::Llama3) => blocks::scan::<{ wide_letters::LETTERS }>(
                text,
                scan_cl100k::next_end_llama3,
                block_cl100k::starts::<3, false>,
                sink,
            ),
            Engine::Scanner(Scanner::Qwen2) => blocks::scan::<{ wide_letters::LETTERS }>(
                text,
                scan_cl100k::next_end_qwen2,
                block_cl100k::starts::<1, false>,
                sink,
            ),
            Engine::Scanner(Scanner::Tekken) => blocks::scan::<{ wide_letters::CASED }>(
                text,
                scan_o200k::next_end_tekken,
                block_o200k::starts::<false, 1>,
                sink,
            ),
            Engine::Scanner(Scanner::DeepSeekV3) => scan_each(text, scan_deepseek::next_end, sink),
            Engine::Regex(re) => {
                for span in regex_spans(re, text) {
                    sink.push(span?)?;
                }
                Ok(())
            }
            Engine::Whole => {
                if text.is_empty() {
                    Ok(())
                } else {
                    sink.push((0, text.len()))
                }
            }
            Engine::Isolated(res) => {
                for span in isolated_spans(res, text)? {
                    sink.push(span)?;
                }
                Ok(())
            }
        }
    }

    /// The pieces of `text` as byte ranges, collected.
    pub fn spans(&self, text: &str) -> Result<Vec<Span>> {
        let mut out = Vec::new();
        self.for_each_span(text, &mut out)?;
        Ok(out)
    }

    /// True for the patterns whose pieces a stream may encode before the text ends (proof in
    /// `encode::stream`): those with a scanner, the GPT family and the open models' variants.
    pub fn streams_exactly(&self) -> bool {
        matches!(self.engine, Engine::Scanner(_))
    }

    /// The pieces of `text`, collected (for tests and inspection).
    pub fn pieces<'t>(&self, text: &'t str) -> Result<Vec<&'t str>> {
        let mut out = Vec::new();
        self.for_each_piece(text, |p| {
            out.push(p);
            Ok(())
        })?;
        Ok(out)
    }
}

/// Call `f` with each piece of `text` as `next_end` cuts it.
#[inline(always)]
fn scan_all<'t>(
    text: &'t str,
    next_end: impl Fn(&classes::Tables, &[u8], usize) -> usize,
    mut f: impl FnMut(&'t str) -> Result<()>,
) -> Result<()> {
    let t = classes::tables();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let j = next_end(t, b, i);
        debug_assert!(j > i && text.is_char_boundary(j));
        f(&text[i..j])?;
        i = j;
    }
    Ok(())
}

/// A piece as the byte range `start..end` of its text.
pub type Span = (usize, usize);

/// Most pieces [`Pattern::for_each_span_batch`] hands over at once: enough for the prefetches of a
/// batch to be in flight together, few enough that the batch's keys stay in L1.
pub const SPAN_BATCH: usize = 64;

/// Where a pattern's pieces go, one span at a time, in order.
pub trait SpanSink {
    fn push(&mut self, span: Span) -> Result<()>;
}

impl SpanSink for Vec<Span> {
    #[inline(always)]
    fn push(&mut self, span: Span) -> Result<()> {
        Vec::push(self, span);
        Ok(())
    }
}

/// Spans handed to `f` up to [`SPAN_BATCH`] at a time; `finish` hands over the rest.
struct Batches<F> {
    spans: [Span; SPAN_BATCH],
    n: usize,
    f: F,
}

impl<F: FnMut(&[Span]) -> Result<()>> SpanSink for Batches<F> {
    #[inline(always)]
    fn push(&mut self, span: Span) -> Result<()> {
        self.spans[self.n] = span;
        self.n += 1;
        if self.n == SPAN_BATCH {
            self.n = 0;
            (self.f)(&self.spans)?;
        }
        Ok(())
    }
}

impl<F: FnMut(&[Span]) -> Result<()>> Batches<F> {
    fn finish(mut self) -> Result<()> {
        if self.n > 0 {
            (self.f)(&self.spans[..self.n])?;
        }
        Ok(())
    }
}

/// The scalar scanner's pieces onto `sink`.
fn scan_each(
    text: &str,
    next_end: impl Fn(&classes::Tables, &[u8], usize) -> usize,
    sink: &mut impl SpanSink,
) -> Result<()> {
    let t = classes::tables();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let j = next_end(t, b, i);
        debug_assert!(j > i && text.is_char_boundary(j));
        sink.push((i, j))?;
        i = j;
    }
    Ok(())
}

/// The matches of a pattern run on fancy-regex, as spans; a match that fails (the backtrack
/// limit) is an error naming it.
fn regex_spans<'a>(
    re: &'a fancy_regex::Regex,
    text: &'a str,
) -> impl Iterator<Item = Result<Span>> + 'a {
    re.find_iter(text).map(|m| {
        m.map(|m| (m.start(), m.end()))
            .map_err(|e| Error::Pattern(format!("while matching: {e}")))
    })
}

/// The pieces of an [`Engine::Isolated`] chain: each regex cuts every piece so far into its
/// matches and the (non-empty) text between them.
fn isolated_spans(res: &[fancy_regex::Regex], text: &str) -> Result<Vec<Span>> {
    let mut spans = if text.is_empty() {
        Vec::new()
    } else {
        vec![(0, text.len())]
    };
    for re in res {
        let mut next = Vec::with_capacity(spans.len() * 2);
        for (start, end) in spans {
            let mut at = start;
            for m in regex_spans(re, &text[start..end]) {
                let (s, e) = m?;
                let (s, e) = (start + s, start + e);
                if s > at {
                    next.push((at, s));
                }
                if e > s {
                    next.push((s, e));
                }
                at = e;
            }
            if end > at {
                next.push((at, end));
            }
        }
        spans = next;
    }
    Ok(spans)
}

fn compile_regex(source: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(source)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| Error::Pattern(format!("cannot compile pattern {source:?}: {e}")))
}

#[cfg(test)]
mod tests;
