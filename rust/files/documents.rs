//! Cutting an input's text into documents: one per line, between separators, or one per jsonl
//! record (a named string field). Documents come out in batches of about `batch_bytes` of text.
//!
//! Invariants: nothing of the input is lost but the boundaries themselves (the line ending, the
//! separator); an empty last piece after the final boundary is not a document (a file that ends
//! with a newline has no empty last line); text that is not UTF-8 is an error naming the file
//! and the document's position, or with `lossy` becomes U+FFFD as Python's `errors="replace"`.

use crate::error::{Error, Result};
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use std::io::BufRead;
use std::path::Path;

#[derive(Clone, Debug)]
pub enum Format {
    /// One document per line (`\n` or `\r\n` ends a line).
    Lines,
    /// Documents between occurrences of this (non-empty) separator.
    Separated(String),
    /// One JSON object per line; the document is its string `field`.
    Jsonl(String),
    /// A string column of a parquet file, read by the caller (pyarrow) and handed over in
    /// batches; the splitter never sees it.
    Parquet(String),
}

/// A batch of documents: spans of one string, so a batch is one allocation, not one per
/// document. Lines and jsonl records are read straight into the string in blocks and cut where
/// they lie (a record's text is a span inside its line when it has no escapes); other documents,
/// and record texts that had escapes, are appended to a second string.
#[derive(Default, Debug)]
pub struct Docs {
    text: String,
    appended: String,
    /// Each document's byte range, in order: in `appended` when the start has [`APPENDED`] set,
    /// else in `text`.
    spans: Vec<(usize, usize)>,
}

/// The tag of a span in [`Docs::appended`].
const APPENDED: usize = 1 << (usize::BITS - 1);

impl Docs {
    pub fn push(&mut self, doc: &str) {
        let start = self.appended.len();
        self.appended.push_str(doc);
        self.spans.push((start | APPENDED, self.appended.len()));
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Empty, with room for `text_bytes` of text without moving it: a recycled batch made ready
    /// for the next.
    pub fn recycle(&mut self, text_bytes: usize) {
        self.clear();
        self.text.reserve(text_bytes);
    }

    /// Empty, keeping the memory (for the next batch).
    pub fn clear(&mut self) {
        self.text.clear();
        self.appended.clear();
        self.spans.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Each document, in order.
    pub fn strs(&self) -> Vec<&str> {
        self.spans
            .iter()
            .map(|&(s, e)| match s & APPENDED {
                0 => &self.text[s..e],
                _ => &self.appended[s & !APPENDED..e],
            })
            .collect()
    }

    /// Text read in so far, for the batch's size.
    fn bytes(&self) -> usize {
        self.text.len() + self.appended.len()
    }
}

/// Pulls documents out of one input.
pub struct Splitter<'a> {
    path: &'a Path,
    format: &'a Format,
    lossy: bool,
    /// Bytes read and not yet cut into documents (separated format).
    pending: Vec<u8>,
    start: usize,
    /// The line being read (lines and jsonl formats), kept from line to line.
    line: Vec<u8>,
    /// Documents (lines, records) seen so far: positions in errors.
    seen: u64,
    done: bool,
}

impl<'a> Splitter<'a> {
    pub fn new(path: &'a Path, format: &'a Format, lossy: bool) -> Self {
        Splitter {
            path,
            format,
            lossy,
            pending: Vec::new(),
            start: 0,
            line: Vec::new(),
            seen: 0,
            done: false,
        }
    }

    /// The next documents, about `batch_bytes` of text (at least one document unless the input
    /// is exhausted); empty at the end.
    pub fn next_batch(&mut self, reader: &mut dyn BufRead, batch_bytes: usize) -> Result<Docs> {
        self.next_batch_into(reader, batch_bytes, Docs::default())
    }

    /// [`Self::next_batch`] into `docs` (emptied first, its memory kept), so that a caller can
    /// recycle batches.
    pub fn next_batch_into(
        &mut self,
        reader: &mut dyn BufRead,
        batch_bytes: usize,
        mut docs: Docs,
    ) -> Result<Docs> {
        docs.clear();
        if let Format::Lines | Format::Jsonl(_) = self.format {
            // A block of blank jsonl lines holds no record: read on.
            while docs.is_empty() && !self.done {
                self.next_block(reader, batch_bytes, &mut docs)?;
            }
            return Ok(docs);
        }
        // Each document costs a byte besides its text, so that a batch of empty ones ends.
        while docs.bytes() + docs.spans.len() < batch_bytes && !self.done {
            if !self.next_doc(reader, &mut docs)? {
                self.done = true;
            }
        }
        Ok(docs)
    }

    /// Append the next document to `docs`; false at the end of the input.
    fn next_doc(&mut self, reader: &mut dyn BufRead, docs: &mut Docs) -> Result<bool> {
        match self.format {
            Format::Lines | Format::Jsonl(_) => {
                unreachable!("`next_batch_into` reads lines a block at a time")
            }
            Format::Separated(sep) => {
                let Some((start, end)) = self.next_separated(reader, sep.as_bytes())? else {
                    return Ok(false);
                };
                self.push_text(&self.pending[start..end], "document", docs)?;
            }
            Format::Parquet(_) => {
                return Err(Error::invalid(
                    "parquet documents are handed over by the caller, not read here",
                ))
            }
        }
        Ok(true)
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// About `batch_bytes` of whole lines read straight into `docs` in one block, and cut into
    /// documents where they lie: each line (lines format) or each line's record text (jsonl).
    /// The part of a line that the block cuts off waits in `self.line` for the next block.
    ///
    /// Why in place: the bytes are copied once, from the OS into the batch, and a line costs a
    /// `memchr` hit and a span; appending line by line from a buffered reader copied every byte
    /// twice and cost a call per line, a third of the reader thread's time, which at two threads
    /// comes out of the encoders'. The block is checked as UTF-8 in one call: a line break is
    /// ASCII, so the block is valid exactly when each of its lines is. A block that is not valid
    /// goes line by line, which names the bad line (or replaces its bytes).
    fn next_block(
        &mut self,
        reader: &mut dyn BufRead,
        batch_bytes: usize,
        docs: &mut Docs,
    ) -> Result<()> {
        let mut block = std::mem::take(&mut docs.text).into_bytes();
        // Not empty when the last block held only blank jsonl lines: they are dropped here.
        block.clear();
        block.extend_from_slice(&self.line);
        self.line.clear();
        // Read until the block holds a line break past the carried part, or the input ends.
        let mut searched = block.len();
        let last = loop {
            let eof = self.fill(reader, &mut block, batch_bytes.max(1))?;
            if let Some(at) = memchr::memrchr(b'\n', &block[searched..]) {
                break Some(searched + at);
            }
            if eof {
                break None;
            }
            searched = block.len();
        };
        match last {
            Some(last) => {
                self.line.extend_from_slice(&block[last + 1..]);
                block.truncate(last + 1);
            }
            // The input is done; what is left is a last line without a line break.
            None => self.done = true,
        }
        match String::from_utf8(block) {
            Ok(text) => {
                let cut = match self.format {
                    Format::Jsonl(field) => self.cut_records(&text, field, docs),
                    _ => {
                        self.cut_lines(&text, docs);
                        Ok(())
                    }
                };
                docs.text = text;
                cut
            }
            Err(e) => {
                let block = e.into_bytes();
                for line in lines_of(&block) {
                    self.seen += 1;
                    match self.format {
                        Format::Jsonl(field) => {
                            if let Some(record) = record_of(line) {
                                self.push_record(record, field, docs)?;
                            }
                        }
                        _ => self.push_text(without_cr(line), "line", docs)?,
                    }
                }
                Ok(())
            }
        }
    }

    /// Each line of `text` (valid UTF-8, read into `docs.text`) as a document.
    fn cut_lines(&mut self, text: &str, docs: &mut Docs) {
        let mut start = 0;
        for line in lines_of(text.as_bytes()) {
            self.seen += 1;
            docs.spans.push((start, start + without_cr(line).len()));
            start += line.len() + 1;
        }
    }

    /// Each record's `field` of `text` (valid UTF-8, read into `docs.text`) as a document: a
    /// span of the line when the string has no escapes, else its unescaped text appended.
    fn cut_records(&mut self, text: &str, field: &str, docs: &mut Docs) -> Result<()> {
        let base = text.as_ptr() as usize;
        for line in lines_of(text.as_bytes()) {
            self.seen += 1;
            let Some(line) = record_of(line) else {
                continue;
            };
            let start = line.as_ptr() as usize - base;
            let line = &text[start..start + line.len()];
            let found = self.parse_field(line, field, &mut docs.appended)?;
            match found {
                Found::Borrowed(s) => {
                    let at = s.as_ptr() as usize - base;
                    docs.spans.push((at, at + s.len()));
                }
                Found::Appended(a, b) => docs.spans.push((a | APPENDED, b)),
                Found::Missing | Found::NotText(_) => unreachable!("`parse_field` refuses these"),
            }
        }
        Ok(())
    }

    /// Read about `more` bytes onto `block`; true when the input ended first. The block's memory
    /// is kept from batch to batch, so the zeroing that `resize` does touches memory already
    /// mapped.
    fn fill(&self, reader: &mut dyn BufRead, block: &mut Vec<u8>, more: usize) -> Result<bool> {
        let mut filled = block.len();
        let target = filled + more;
        block.resize(target, 0);
        let eof = loop {
            if filled == target {
                break false;
            }
            match reader.read(&mut block[filled..]) {
                Ok(0) => break true,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    block.truncate(filled);
                    return Err(self.io(e));
                }
            }
        };
        block.truncate(filled);
        Ok(eof)
    }

    /// The next document's range in `self.pending`; None at the end of the input.
    fn next_separated(
        &mut self,
        reader: &mut dyn BufRead,
        sep: &[u8],
    ) -> Result<Option<(usize, usize)>> {
        // `pending[start..]` is unread; the read part is dropped only when it is most of the
        // buffer, so cutting many short documents out of one chunk copies each byte about once.
        let mut searched = self.start;
        loop {
            if let Some(at) = memchr::memmem::find(&self.pending[searched..], sep) {
                let end = searched + at;
                let doc = (self.start, end);
                self.start = end + sep.len();
                self.seen += 1;
                return Ok(Some(doc));
            }
            if self.start > self.pending.len() / 2 {
                self.pending.drain(..self.start);
                self.start = 0;
            }
            // A separator may straddle what is buffered and what comes next.
            searched = self
                .pending
                .len()
                .saturating_sub(sep.len() - 1)
                .max(self.start);
            let chunk = reader.fill_buf().map_err(|e| self.io(e))?;
            if chunk.is_empty() {
                if self.start == self.pending.len() {
                    return Ok(None);
                }
                self.seen += 1;
                let doc = (self.start, self.pending.len());
                self.start = self.pending.len();
                return Ok(Some(doc));
            }
            let n = chunk.len();
            self.pending.extend_from_slice(chunk);
            reader.consume(n);
        }
    }

    fn push_text(&self, bytes: &[u8], what: &str, docs: &mut Docs) -> Result<()> {
        match std::str::from_utf8(bytes) {
            Ok(s) => docs.push(s),
            Err(_) if self.lossy => docs.push(&String::from_utf8_lossy(bytes)),
            Err(e) => {
                return Err(Error::invalid(format!(
                    "{}: {what} {} is not UTF-8 ({e}); pass errors=\"replace\" to read invalid \
                     bytes as U+FFFD",
                    self.path.display(),
                    self.seen,
                )))
            }
        }
        Ok(())
    }

    /// The record `line`'s `field` onto `docs` (a line of a block that is not valid UTF-8: the
    /// error names it, or with `lossy` its bad bytes become U+FFFD).
    fn push_record(&self, line: &[u8], field: &str, docs: &mut Docs) -> Result<()> {
        let owned;
        let line = match std::str::from_utf8(line) {
            Ok(s) => s,
            Err(_) if self.lossy => {
                owned = String::from_utf8_lossy(line).into_owned();
                owned.as_str()
            }
            Err(e) => return Err(self.bad_record(format!("not UTF-8 ({e})"))),
        };
        match self.parse_field(line, field, &mut docs.appended)? {
            Found::Borrowed(s) => docs.push(s),
            Found::Appended(a, b) => docs.spans.push((a | APPENDED, b)),
            Found::Missing | Found::NotText(_) => unreachable!("`parse_field` refuses these"),
        }
        Ok(())
    }

    /// The string `field` of the JSON object `line`: borrowed from `line` when it has no
    /// escapes, else unescaped onto `appended`. Anything else is an error naming the record.
    fn parse_field<'l>(
        &self,
        line: &'l str,
        field: &str,
        appended: &mut String,
    ) -> Result<Found<'l>> {
        let mut de = serde_json::Deserializer::from_str(line);
        let found = FieldOf { field, appended }
            .deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v))
            .map_err(|e| self.bad_record(format!("not a JSON object ({e})")))?;
        match found {
            Found::Missing => Err(self.bad_record(format!(
                "no field {field:?}; pass field=\"...\" naming the field that holds the text"
            ))),
            Found::NotText(kind) => {
                Err(self.bad_record(format!("field {field:?} is {kind}, not a string")))
            }
            text => Ok(text),
        }
    }

    fn bad_record(&self, msg: String) -> Error {
        Error::invalid(format!(
            "{}: record {} (line {}): {msg}",
            self.path.display(),
            self.seen,
            self.seen
        ))
    }
}

/// Lines of `block`, without their `\n`; no empty piece after a final `\n`. (`memchr` finds
/// the breaks 32 bytes at a time; `slice::split` tests byte by byte: on en_docs at 2 threads
/// that was 6.8% of the job's samples against 2.6% for `memchr`.)
fn lines_of(block: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut start = 0;
    let breaks = memchr::memchr_iter(b'\n', block).map(Some);
    // The end of the block, when a last line has no line break.
    let tail =
        std::iter::once((block.last() != Some(&b'\n') && !block.is_empty()).then_some(block.len()));
    breaks.chain(tail).flatten().map(move |end| {
        let line = &block[start..end];
        start = end + 1;
        line
    })
}

/// A line without the `\r` of a `\r\n` ending.
fn without_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The record on a jsonl line; None for a blank line, which holds none.
fn record_of(line: &[u8]) -> Option<&[u8]> {
    let line = without_cr(line);
    (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
}

/// What a record's field holds.
enum Found<'a> {
    /// A string without escapes, as it lies in the line.
    Borrowed(&'a str),
    /// A string with escapes, unescaped at this range of the batch's appended text.
    Appended(usize, usize),
    Missing,
    NotText(&'static str),
}

/// A visitor that keeps one field of a JSON object and skips the others without building them.
struct FieldOf<'f, 'b> {
    field: &'f str,
    appended: &'b mut String,
}

impl<'de> DeserializeSeed<'de> for FieldOf<'_, '_> {
    type Value = Found<'de>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Found<'de>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FieldOf<'_, '_> {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Found<'de>, A::Error> {
        let mut found = Found::Missing;
        while let Some(is_field) = map.next_key_seed(KeyIs(self.field))? {
            // A repeated key: the last one counts, as in Python's json.
            if is_field {
                found = map.next_value_seed(Kind(&mut *self.appended))?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// Whether a key is the field, compared where it lies (a `String` or `Cow` key would be built
/// for every key of every record).
struct KeyIs<'f>(&'f str);

impl<'de> DeserializeSeed<'de> for KeyIs<'_> {
    type Value = bool;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<bool, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeyIs<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, key: &str) -> std::result::Result<bool, E> {
        Ok(key == self.0)
    }
}

/// A JSON value read as text (see [`Found`]), or the name of its kind when it is not a string.
struct Kind<'b>(&'b mut String);

impl<'de> DeserializeSeed<'de> for Kind<'_> {
    type Value = Found<'de>;

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        d: D,
    ) -> std::result::Result<Found<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Kind<'_> {
    type Value = Found<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> std::result::Result<Found<'de>, E> {
        Ok(Found::Borrowed(s))
    }
    fn visit_str<E>(self, s: &str) -> std::result::Result<Found<'de>, E> {
        let start = self.0.len();
        self.0.push_str(s);
        Ok(Found::Appended(start, self.0.len()))
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<Found<'de>, E> {
        Ok(Found::NotText("a boolean"))
    }
    fn visit_i64<E>(self, _: i64) -> std::result::Result<Found<'de>, E> {
        Ok(Found::NotText("a number"))
    }
    fn visit_u64<E>(self, _: u64) -> std::result::Result<Found<'de>, E> {
        Ok(Found::NotText("a number"))
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<Found<'de>, E> {
        Ok(Found::NotText("a number"))
    }
    fn visit_unit<E>(self) -> std::result::Result<Found<'de>, E> {
        Ok(Found::NotText("null"))
    }
    fn visit_seq<A: de::SeqAccess<'de>>(
        self,
        mut a: A,
    ) -> std::result::Result<Found<'de>, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Found::NotText("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Found<'de>, A::Error> {
        while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Found::NotText("an object"))
    }
}
