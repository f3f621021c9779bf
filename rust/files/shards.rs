//! The token stream cut into shards of `shard_tokens` ids (the last one shorter), and the index
//! of where each document starts in the stream.
//!
//! Layout: `shard_00000.npy`, `shard_00001.npy`, … hold the stream in order, a document may run
//! from one shard into the next (training reads the stream, not documents); `documents.npy`
//! (uint64) holds `n_documents + 1` offsets into the whole stream, so document `i` is
//! `stream[index[i]:index[i + 1]]`. Every file is published atomically when complete
//! ([`NpyWriter`]); memory does not grow with the shard size or the input.

use super::npy::{Dtype, NpyWriter};
use crate::error::Result;
use std::path::{Path, PathBuf};

pub const INDEX_FILE: &str = "documents.npy";

/// The file name of shard `k`.
pub fn shard_name(k: usize) -> String {
    format!("shard_{k:05}.npy")
}

#[derive(Clone, Debug)]
pub struct Shard {
    pub file: String,
    pub tokens: u64,
}

pub struct ShardWriter {
    dir: PathBuf,
    dtype: Dtype,
    shard_tokens: u64,
    current: Option<NpyWriter>,
    shards: Vec<Shard>,
    index: Option<NpyWriter>,
    tokens: u64,
    documents: u64,
    /// The index entries of the documents being pushed, kept from call to call.
    offsets: Vec<u64>,
}

impl ShardWriter {
    pub fn new(dir: &Path, dtype: Dtype, shard_tokens: u64) -> Result<Self> {
        assert!(shard_tokens > 0, "shard_tokens is checked by the caller");
        let mut index = NpyWriter::create(&dir.join(INDEX_FILE), Dtype::U64)?;
        index.push(&[0u64])?;
        Ok(ShardWriter {
            dir: dir.to_path_buf(),
            dtype,
            shard_tokens,
            current: None,
            shards: Vec::new(),
            index: Some(index),
            tokens: 0,
            documents: 0,
            offsets: Vec::new(),
        })
    }

    /// The shards published so far (for removing them when the job fails).
    pub fn published(&self) -> &[Shard] {
        &self.shards
    }

    /// Append documents to the stream: `ids` holds them end to end, and document `i` ends at
    /// `ends[i]` (non-decreasing, the last one `ids.len()`). Written whole, not document by
    /// document: a document is often a few ids, and a write per document was a twentieth of a
    /// file job's time.
    pub fn push_documents(&mut self, ids: &[u32], ends: &[usize]) -> Result<()> {
        assert!(
            ends.windows(2).all(|w| w[0] <= w[1])
                && ends.last().map_or(ids.is_empty(), |&e| e == ids.len()),
            "document ends must rise to the number of ids"
        );
        let mut rest = ids;
        while !rest.is_empty() {
            let current = match &mut self.current {
                Some(c) => c,
                None => {
                    let path = self.dir.join(shard_name(self.shards.len()));
                    self.current.insert(NpyWriter::create(&path, self.dtype)?)
                }
            };
            let room = (self.shard_tokens - current.len()).min(rest.len() as u64) as usize;
            current.push(&rest[..room])?;
            rest = &rest[room..];
            if current.len() == self.shard_tokens {
                self.close_shard()?;
            }
        }
        let base = self.tokens;
        self.offsets.clear();
        self.offsets.extend(ends.iter().map(|&e| base + e as u64));
        self.tokens += ids.len() as u64;
        self.documents += ends.len() as u64;
        self.index
            .as_mut()
            .expect("index open until finish")
            .push(&self.offsets)
    }

    /// Append one document's ids to the stream.
    pub fn push_document(&mut self, ids: &[u32]) -> Result<()> {
        self.push_documents(ids, &[ids.len()])
    }

    fn close_shard(&mut self) -> Result<()> {
        if let Some(shard) = self.current.take() {
            let tokens = shard.len();
            shard.finish()?;
            self.shards.push(Shard {
                file: shard_name(self.shards.len()),
                tokens,
            });
        }
        Ok(())
    }

    /// Publish the last shard and the index: (shards, documents, tokens).
    pub fn finish(mut self) -> Result<(Vec<Shard>, u64, u64)> {
        self.close_shard()?;
        self.index.take().expect("finished once").finish()?;
        Ok((
            std::mem::take(&mut self.shards),
            self.documents,
            self.tokens,
        ))
    }
}
