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
/// document. Lines are read straight into the string and cut where they lie (the line endings
/// stay between the spans); other formats append each document.
#[derive(Default, Debug)]
pub struct Docs {
    text: String,
    /// Each document's byte range in `text`, in order.
    spans: Vec<(usize, usize)>,
}

impl Docs {
    pub fn push(&mut self, doc: &str) {
        let start = self.text.len();
        self.text.push_str(doc);
        self.spans.push((start, self.text.len()));
    }

    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Room for `text_bytes` more bytes of text without moving it.
    pub fn reserve(&mut self, text_bytes: usize) {
        self.text.reserve(text_bytes);
    }

    /// Empty, keeping the memory (for the next batch).
    pub fn clear(&mut self) {
        self.text.clear();
        self.spans.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// Each document, in order.
    pub fn strs(&self) -> Vec<&str> {
        self.spans.iter().map(|&(s, e)| &self.text[s..e]).collect()
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
        if let Format::Lines = self.format {
            self.next_lines(reader, batch_bytes, &mut docs)?;
            return Ok(docs);
        }
        // Each document costs a byte besides its text, so that a batch of empty ones ends.
        while docs.text.len() + docs.spans.len() < batch_bytes && !self.done {
            if !self.next_doc(reader, &mut docs)? {
                self.done = true;
            }
        }
        Ok(docs)
    }

    /// Append the next document to `docs`; false at the end of the input.
    fn next_doc(&mut self, reader: &mut dyn BufRead, docs: &mut Docs) -> Result<bool> {
        match self.format {
            Format::Lines => unreachable!("`next_batch_into` reads lines a block at a time"),
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
            Format::Jsonl(field) => loop {
                if !self.next_line(reader)? {
                    return Ok(false);
                }
                if self.line.iter().all(u8::is_ascii_whitespace) {
                    continue; // a blank line holds no record
                }
                let text = self.field(&self.line, field)?;
                docs.push(&text);
                break;
            },
        }
        Ok(true)
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// About `batch_bytes` of whole lines, read straight into `docs` and cut where they lie (at
    /// least one line, unless the input is exhausted). The part of a line that the block cuts off
    /// waits in `self.line` for the next block.
    ///
    /// Why in place: the bytes are copied once, from the OS into the batch, and a line costs a
    /// `memchr` hit and a span; appending line by line from a buffered reader copied every byte
    /// twice and cost a call per line, a third of the reader thread's time, which at two threads
    /// comes out of the encoders'. The block is checked as UTF-8 in one call: a line break is
    /// ASCII, so the block is valid exactly when each of its lines is. A block that is not valid
    /// goes line by line, which names the bad line (or replaces its bytes).
    fn next_lines(
        &mut self,
        reader: &mut dyn BufRead,
        batch_bytes: usize,
        docs: &mut Docs,
    ) -> Result<()> {
        if self.done {
            return Ok(());
        }
        let mut block = std::mem::take(&mut docs.text).into_bytes();
        block.extend_from_slice(&self.line);
        self.line.clear();
        // Read until the block holds a line break past the carried part, or the input ends.
        let mut searched = block.len();
        let mut target = block.len() + batch_bytes.max(1);
        let last = loop {
            let eof = self.fill(reader, &mut block, target)?;
            if let Some(at) = memchr::memrchr(b'\n', &block[searched..]) {
                break Some(searched + at);
            }
            if eof {
                break None;
            }
            searched = block.len();
            target = block.len() + batch_bytes.max(1);
        };
        let Some(last) = last else {
            // The input is done; what is left is a last line without a line break.
            self.done = true;
            if !block.is_empty() {
                self.seen += 1;
                self.push_line(&block, docs)?;
            }
            return Ok(());
        };
        self.line.extend_from_slice(&block[last + 1..]);
        block.truncate(last + 1);
        match String::from_utf8(block) {
            Ok(text) => {
                let mut start = 0;
                for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
                    let stop = if end > start && text.as_bytes()[end - 1] == b'\r' {
                        end - 1
                    } else {
                        end
                    };
                    docs.spans.push((start, stop));
                    start = end + 1;
                }
                self.seen += docs.spans.len() as u64;
                docs.text = text;
            }
            Err(e) => {
                let block = e.into_bytes();
                for line in block[..block.len() - 1].split(|&b| b == b'\n') {
                    self.seen += 1;
                    self.push_line(line, docs)?;
                }
            }
        }
        Ok(())
    }

    /// Read into `block` until it holds `target` bytes; true when the input ended first. The
    /// block's memory is kept from batch to batch, so the zeroing that `resize` does touches
    /// memory already mapped.
    fn fill(&self, reader: &mut dyn BufRead, block: &mut Vec<u8>, target: usize) -> Result<bool> {
        let mut filled = block.len();
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

    /// A line without its `\n` onto `docs`, its `\r` (of a `\r\n` ending) dropped.
    fn push_line(&self, line: &[u8], docs: &mut Docs) -> Result<()> {
        self.push_text(line.strip_suffix(b"\r").unwrap_or(line), "line", docs)
    }

    /// The next line, without its ending, into `self.line`; false at the end of the input.
    fn next_line(&mut self, reader: &mut dyn BufRead) -> Result<bool> {
        self.line.clear();
        if reader
            .read_until(b'\n', &mut self.line)
            .map_err(|e| self.io(e))?
            == 0
        {
            return Ok(false);
        }
        self.seen += 1;
        if self.line.last() == Some(&b'\n') {
            self.line.pop();
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
        }
        Ok(true)
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

    fn field(&self, line: &[u8], field: &str) -> Result<String> {
        let bad = |msg: String| {
            Error::invalid(format!(
                "{}: record {} (line {}): {msg}",
                self.path.display(),
                self.seen,
                self.seen
            ))
        };
        let owned;
        let line = match std::str::from_utf8(line) {
            Ok(s) => s,
            Err(_) if self.lossy => {
                owned = String::from_utf8_lossy(line).into_owned();
                owned.as_str()
            }
            Err(e) => return Err(bad(format!("not UTF-8 ({e})"))),
        };
        let mut de = serde_json::Deserializer::from_str(line);
        let found = FieldOf(field)
            .deserialize(&mut de)
            .and_then(|v| de.end().map(|()| v))
            .map_err(|e| bad(format!("not a JSON object ({e})")))?;
        match found {
            Found::Text(s) => Ok(s),
            Found::Missing => Err(bad(format!(
                "no field {field:?}; pass field=\"...\" naming the field that holds the text"
            ))),
            Found::NotText(kind) => Err(bad(format!("field {field:?} is {kind}, not a string"))),
        }
    }
}

enum Found {
    Text(String),
    Missing,
    NotText(&'static str),
}

/// A visitor that keeps one field of a JSON object and skips the others without building them.
struct FieldOf<'f>(&'f str);

impl<'de> DeserializeSeed<'de> for FieldOf<'_> {
    type Value = Found;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> std::result::Result<Found, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for FieldOf<'_> {
    type Value = Found;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Found, A::Error> {
        let mut found = Found::Missing;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            // A repeated key: the last one counts, as in Python's json.
            if key == self.0 {
                found = map.next_value::<Kind>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(found)
    }
}

/// A JSON value read as text, or the name of its kind when it is not a string.
struct Kind(Found);

impl<'de> de::Deserialize<'de> for Kind {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Kind;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_str<E>(self, s: &str) -> std::result::Result<Kind, E> {
                Ok(Kind(Found::Text(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> std::result::Result<Kind, E> {
                Ok(Kind(Found::Text(s)))
            }
            fn visit_bool<E>(self, _: bool) -> std::result::Result<Kind, E> {
                Ok(Kind(Found::NotText("a boolean")))
            }
            fn visit_i64<E>(self, _: i64) -> std::result::Result<Kind, E> {
                Ok(Kind(Found::NotText("a number")))
            }
            fn visit_u64<E>(self, _: u64) -> std::result::Result<Kind, E> {
                Ok(Kind(Found::NotText("a number")))
            }
            fn visit_f64<E>(self, _: f64) -> std::result::Result<Kind, E> {
                Ok(Kind(Found::NotText("a number")))
            }
            fn visit_unit<E>(self) -> std::result::Result<Kind, E> {
                Ok(Kind(Found::NotText("null")))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Kind, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Kind(Found::NotText("an array")))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> std::result::Result<Kind, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Kind(Found::NotText("an object")))
            }
        }
        d.deserialize_any(V)
    }
}
