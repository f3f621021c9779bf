//! Runs of short texts: their pieces looked up in batches that cross the texts' ends.
//!
//! Idea: the piece cache answers a batch of up to [`crate::pretokenize::SPAN_BATCH`] pieces with
//! the batch's memory loads in flight together (`hot.rs`). A line of prose is about ten pieces, so
//! encoding texts one by one leaves most of every batch empty and waits out the loads' latencies
//! one short batch at a time, besides paying each call's setup per line (en_docs' 290 K lines,
//! cl100k, one thread, timed by hand: 128 MB/s line by line, 171 MB/s as runs, 285 MB/s for the
//! same bytes as one text). Here a run's texts are copied end to end into one buffer; each text
//! (each stretch between special tokens) is still cut into pieces on its own, so no piece crosses
//! a text's end and every text gets exactly the pieces it gets alone; but the pieces go to the
//! cache 64 at a time, whichever text they came from. After each text's last piece the batch
//! gets a mark (`hot.rs`, `Batch::mark`), where the lookup appends the separator id (if any)
//! and records where the text's ids end. So the ids and ends are exactly those of encoding the
//! texts one at a time.
//!
//! Why marks and not an empty piece that the miss path recognises (as this did first): en_docs
//! has about seven lines per 64 pieces, so nearly every batch left the lookup's branch-free
//! path for the miss path; with marks a batch of found pieces stays on a short loop (about 2%
//! of the run's time, one core, cl100k, en_docs' lines; skipping the ends altogether, ids
//! wrong, gained 10–15%, so most of that was not the miss path's detour).
//!
//! Downside: the run's text is copied once (a few percent of the time).

use super::hot::{Batch, Table};
use super::shared_cache::SharedCache;
use super::{with_scratch, Encoder, Scratch};
use crate::error::Result;
use crate::pretokenize::{Span, SpanSink};
use crate::specials::{Part, Rules};
use crate::vocab::Rank;
use std::cell::Cell;

/// A run buffer kept for the thread's next run up to this many bytes.
const KEEP: usize = 16 << 20;

thread_local! {
    static BUFFER: Cell<String> = const { Cell::new(String::new()) };
}

/// One run being encoded: its pieces gathered across texts until a batch is full, then looked
/// up and appended to `out`. Invariant: `out` holds the ids of every piece before the gathered
/// ones, so ids can be appended directly (a special's) only after [`Run::flush`].
struct Run<'a> {
    encoder: &'a Encoder,
    table: &'a mut Table,
    shared: &'a SharedCache,
    scratch: &'a mut Scratch,
    /// The run's texts end to end.
    text: &'a str,
    after_each: Option<Rank>,
    /// Where the stretch being cut starts in `text` (the pattern gives spans in the stretch).
    base: usize,
    /// The pieces gathered, their lines prefetched as they came (`hot.rs`, `Table::prepare`).
    batch: Batch,
    out: &'a mut Vec<Rank>,
    ends: &'a mut Vec<usize>,
    /// When counting (`Some`): how many ids came before those in `out`, which are dropped at
    /// each flush, so a run of any length holds one batch's ids; `ends` then count ids.
    counted: Option<usize>,
}

impl SpanSink for Run<'_> {
    #[inline(always)]
    fn push(&mut self, (start, end): Span) -> Result<()> {
        let span = (self.base + start, self.base + end);
        self.table
            .prepare(self.text.as_bytes(), span, &mut self.batch);
        if self.batch.is_full() {
            self.flush()?;
        }
        Ok(())
    }
}

impl Run<'_> {
    /// Encode the pieces gathered so far.
    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let Run {
            encoder,
            scratch,
            after_each,
            ends,
            counted,
            ..
        } = self;
        let before = counted.unwrap_or(0);
        self.table.resolve(
            self.shared,
            self.text.as_bytes(),
            &self.batch,
            self.out,
            |piece, key, out| encoder.encode_missed_piece(piece, key, scratch, out),
            |out| {
                // A text's end.
                out.extend(*after_each);
                ends.push(before + out.len());
            },
        )?;
        self.batch.clear();
        if let Some(c) = counted {
            *c += self.out.len();
            self.out.clear();
        }
        Ok(())
    }

    /// The pieces of the stretch `range` of the run's text.
    fn stretch(&mut self, range: std::ops::Range<usize>) -> Result<()> {
        let (encoder, text) = (self.encoder, self.text);
        self.base = range.start;
        encoder.pattern.for_each_span(&text[range], self)
    }

    /// The text `range` of the run's text, specials split out as `rules` say, then its end mark.
    fn text(&mut self, range: std::ops::Range<usize>, rules: Option<&Rules>) -> Result<()> {
        match rules {
            None => self.stretch(range.clone())?,
            Some(rules) => {
                let text = &self.text[range.clone()];
                rules.check(text)?;
                for part in rules.parts(text) {
                    match part {
                        Part::Stretch(r) => {
                            self.stretch(range.start + r.start..range.start + r.end)?
                        }
                        Part::Special(r) => {
                            self.flush()?;
                            let id = self.encoder.special_id(&text[r]);
                            self.out.push(id);
                        }
                    }
                }
            }
        }
        if self.batch.marks_full() {
            self.flush()?;
        }
        self.batch.mark();
        Ok(())
    }
}

/// Where a run's results go: each text's ids onto `out` and then `out.len()` onto `ends`; or,
/// with `count`, the ends alone, each a number of ids from the run's start, the ids dropped as
/// they come (`out` is then scratch).
struct Sink<'a> {
    out: &'a mut Vec<Rank>,
    ends: &'a mut Vec<usize>,
    count: bool,
}

impl Encoder {
    /// Append the ids of each text of `texts` to `out`, each followed by `after_each` if given,
    /// and `out.len()` after each text to `ends`: the same as `append_ordinary` (or, with
    /// `rules`, `append_with_rules`) text by text, including the first error.
    ///
    /// A text long enough to be encoded in parts on several cores (see `Encoder::part_len`) is
    /// encoded so, between the runs of the texts around it: a batch whose one paragraph is most
    /// of its bytes (Korean's is 94%) otherwise left every core but one idle. Its parts run on
    /// the current pool, nested in the batch's tasks.
    pub fn append_run<T: AsRef<str>>(
        &self,
        texts: &[T],
        rules: Option<&Rules>,
        after_each: Option<Rank>,
        out: &mut Vec<Rank>,
        ends: &mut Vec<usize>,
    ) -> Result<()> {
        self.run_texts(
            texts,
            rules,
            after_each,
            Sink {
                out,
                ends,
                count: false,
            },
        )
    }

    /// How many ids each text of `texts` gives under `rules` (as [`Encoder::count`] text by
    /// text), appended to `counts`; holds one batch's ids at a time, like `count`.
    pub fn count_run<T: AsRef<str>>(
        &self,
        texts: &[T],
        rules: &Rules,
        counts: &mut Vec<usize>,
    ) -> Result<()> {
        let first = counts.len();
        let mut ends = Vec::with_capacity(texts.len());
        let sink = Sink {
            out: &mut Vec::new(),
            ends: &mut ends,
            count: true,
        };
        self.run_texts(texts, Some(rules), None, sink)?;
        counts.extend(
            ends.iter()
                .scan(0, |start, &end| Some(end - std::mem::replace(start, end))),
        );
        debug_assert_eq!(counts.len() - first, texts.len());
        Ok(())
    }

    /// [`Encoder::append_run`] into `to` (see [`Sink`]).
    fn run_texts<T: AsRef<str>>(
        &self,
        texts: &[T],
        rules: Option<&Rules>,
        after_each: Option<Rank>,
        mut to: Sink,
    ) -> Result<()> {
        let mut rest = texts;
        while let Some(k) = rest
            .iter()
            .position(|t| self.part_len(t.as_ref()).is_some())
        {
            self.append_short_run(&rest[..k], rules, after_each, &mut to)?;
            let Sink { out, ends, count } = &mut to;
            let long = rest[k].as_ref();
            let end = if *count {
                let n = match rules {
                    Some(rules) => self.count_with_rules(long, rules)?,
                    None => self.count_stretch(&self.normalized(long))?,
                };
                ends.last().copied().unwrap_or(0) + n + usize::from(after_each.is_some())
            } else {
                match rules {
                    Some(rules) => self.append_with_rules(long, rules, out)?,
                    None => self.append_ordinary(long, out)?,
                }
                out.extend(after_each);
                out.len()
            };
            ends.push(end);
            rest = &rest[k + 1..];
        }
        self.append_short_run(rest, rules, after_each, &mut to)
    }

    /// [`Encoder::run_texts`] with every text on this thread, in one run.
    fn append_short_run<T: AsRef<str>>(
        &self,
        texts: &[T],
        rules: Option<&Rules>,
        after_each: Option<Rank>,
        to: &mut Sink,
    ) -> Result<()> {
        if texts.is_empty() {
            return Ok(());
        }
        let Sink { out, ends, count } = to;
        // Counting: `out` holds only the ids since the last flush, and the count before it
        // goes on from the run's last end.
        let counted = count.then(|| {
            out.clear();
            ends.last().copied().unwrap_or(0)
        });
        let mut buf = BUFFER.take();
        buf.clear();
        let mut bounds = Vec::with_capacity(texts.len());
        for t in texts {
            buf.push_str(&self.normalized(t.as_ref()));
            bounds.push(buf.len());
        }
        // One search of the run for specials, rather than one per text (a search's setup
        // cost as much as a short line's pieces): a text's special is in the run too, so
        // when the run has none the texts are ordinary text throughout.
        let rules = rules.filter(|r| r.matter_in(&buf));
        let done = with_scratch(|state| {
            let mut run = Run {
                encoder: self,
                table: state.hot.of(self.id),
                shared: self.shared.get_or_init(Default::default),
                scratch: &mut state.merge,
                text: &buf,
                after_each,
                base: 0,
                batch: Batch::new(),
                out,
                ends,
                counted,
            };
            let mut start = 0;
            for &end in &bounds {
                run.text(start..end, rules)?;
                start = end;
            }
            run.flush()
        });
        if buf.capacity() <= KEEP {
            BUFFER.set(buf);
        }
        done
    }
}

#[cfg(test)]
pub(super) mod tests {
    use crate::encode::Encoder;
    use crate::pretokenize::Pattern;
    use crate::specials::Selection;
    use crate::vocab::{Rank, Vocab};

    /// A toy vocabulary (bytes, a few merges, two specials `<s>` and `<t>`) with the gpt2 pattern.
    pub(in crate::encode) fn encoder() -> Encoder {
        let mut tokens: Vec<(Vec<u8>, Rank)> = (0..=255u8).map(|b| (vec![b], b as Rank)).collect();
        for (k, t) in [" a", "ab", " ab", "ba", "aa", " b", "\n\n", "  "]
            .iter()
            .enumerate()
        {
            tokens.push((t.as_bytes().to_vec(), 256 + k as Rank));
        }
        let specials = vec![("<s>".to_string(), 900), ("<t>".to_string(), 901)];
        Encoder::new(
            Vocab::new(tokens, specials).unwrap(),
            Pattern::new("gpt2").unwrap(),
        )
        .unwrap()
    }

    /// Pseudo-random short texts over letters, spaces, newlines and the specials, some empty:
    /// many texts per 64-piece batch, and batches that end inside a text and on a mark.
    fn texts(mut state: u64, n: usize) -> Vec<String> {
        let parts = ["a", "b", " ", "\n", "<s>", "<t>", "ab", " ba", "", "é"];
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let len = (state % 12) as usize;
                (0..len)
                    .map(|k| parts[((state >> (4 * k)) % parts.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_run_encodes_each_text_as_alone() {
        let enc = encoder();
        let texts = texts(0x9e37_79b9_7f4a_7c15, 700);
        for allowed in [Selection::none(), Selection::All] {
            let rules = enc.specials().rules(&allowed, &Selection::none()).unwrap();
            for (rules, after_each) in [(None, None), (Some(&rules), Some(7)), (Some(&rules), None)]
            {
                let (mut ids, mut ends) = (Vec::new(), Vec::new());
                enc.append_run(&texts, rules, after_each, &mut ids, &mut ends)
                    .unwrap();
                let mut want = Vec::new();
                let mut want_ends = Vec::new();
                for t in &texts {
                    match rules {
                        Some(r) => enc.append_with_rules(t, r, &mut want).unwrap(),
                        None => enc.append_ordinary(t, &mut want).unwrap(),
                    }
                    want.extend(after_each);
                    want_ends.push(want.len());
                }
                assert_eq!(ids, want);
                assert_eq!(ends, want_ends);
            }
        }
    }

    /// Texts long enough to be encoded in parts on the pool's threads, first, last and between
    /// short ones, with specials inside: the same ids and ends as text by text on one thread.
    #[test]
    fn long_texts_in_a_run_on_several_threads_encode_as_alone() {
        let enc = encoder();
        let long = |k: usize| format!("ab a<s>{}", "ba ab\n\n aa".repeat(30_000 + k));
        let short = texts(0x2545_f491_4f6c_dd1d, 300);
        let mut all: Vec<String> = vec![long(0)];
        all.extend(short[..150].iter().cloned());
        all.push(long(1));
        all.push(long(2));
        all.extend(short[150..].iter().cloned());
        all.push(long(3));
        assert!(all[0].len() > super::super::PARALLEL_MIN);
        let allowed = enc
            .specials()
            .rules(&Selection::All, &Selection::none())
            .unwrap();
        for (rules, after_each) in [(None, None), (Some(&allowed), Some(7))] {
            let (mut ids, mut ends) = (Vec::new(), Vec::new());
            crate::pool::install(2, || {
                enc.append_run(&all, rules, after_each, &mut ids, &mut ends)
            })
            .unwrap()
            .unwrap();
            let (mut want, mut want_ends) = (Vec::new(), Vec::new());
            crate::pool::install(1, || {
                for t in &all {
                    match rules {
                        Some(r) => enc.append_with_rules(t, r, &mut want).unwrap(),
                        None => enc.append_ordinary(t, &mut want).unwrap(),
                    }
                    want.extend(after_each);
                    want_ends.push(want.len());
                }
            })
            .unwrap();
            assert_eq!(ends, want_ends);
            assert!(ids == want, "ids differ");
        }
    }

    /// Counting a run gives each text's `count`, with specials split, forbidden (in no text,
    /// or only across two texts' joint, which is no text's) or ordinary, and with texts long
    /// enough to be counted in parts among them.
    #[test]
    fn a_counted_run_counts_each_text_as_alone() {
        let enc = encoder();
        let mut all = texts(0x5851_f42d_4c95_7f2d, 700);
        all.insert(300, format!("ab<s> {}", "ba ab\n\n aa".repeat(30_000)));
        assert!(all[300].len() > super::super::PARALLEL_MIN);
        let plain: Vec<String> = all.iter().map(|t| t.replace(['<', '>'], "")).collect();
        let joint: Vec<String> = ["ab <", "s> ba", "", "a<", "t>"].map(String::from).to_vec();
        let (none, every) = (Selection::none(), Selection::All);
        for (texts, allowed, disallowed) in [
            (&all, &every, &none),
            (&all, &none, &none),
            (&plain, &none, &every),
            (&joint, &none, &every),
            (&joint, &every, &none),
        ] {
            let rules = enc.specials().rules(allowed, disallowed).unwrap();
            let want: Vec<usize> = texts
                .iter()
                .map(|t| enc.count(t, allowed, disallowed).unwrap())
                .collect();
            for threads in [1, 2] {
                let mut got = vec![usize::MAX];
                crate::pool::install(threads, || enc.count_run(texts, &rules, &mut got))
                    .unwrap()
                    .unwrap();
                assert_eq!(got[0], usize::MAX, "what was there stays");
                assert_eq!(got[1..], want[..]);
            }
        }
        // A forbidden special in one text fails the run, as it fails that text.
        let rules = enc.specials().rules(&none, &every).unwrap();
        assert!(enc.count_run(&all, &rules, &mut Vec::new()).is_err());
    }

    /// More text ends than a batch holds marks, with no piece between most of them.
    #[test]
    fn runs_of_empty_texts_end_each_text() {
        let enc = encoder();
        let mut texts = vec![""; 150];
        texts.extend(["ab a", "", "", " b"]);
        texts.extend(vec![""; 70]);
        texts.push("ba");
        let (mut ids, mut ends) = (Vec::new(), Vec::new());
        enc.append_run(&texts, None, Some(7), &mut ids, &mut ends)
            .unwrap();
        let mut want = Vec::new();
        let mut want_ends = Vec::new();
        for t in &texts {
            enc.append_ordinary(t, &mut want).unwrap();
            want.push(7);
            want_ends.push(want.len());
        }
        assert_eq!((ids, ends), (want, want_ends));
    }

    #[test]
    fn a_disallowed_special_fails_the_run() {
        let enc = encoder();
        let rules = enc
            .specials()
            .rules(&Selection::none(), &Selection::All)
            .unwrap();
        let (mut ids, mut ends) = (Vec::new(), Vec::new());
        let got = enc.append_run(&["ab", "a<s>"], Some(&rules), None, &mut ids, &mut ends);
        assert!(got.is_err());
    }
}
