//! Opening one input: the raw file hashed and counted as it is read, decompressed when its first
//! bytes say gzip or zstd (not its name: a `.txt` that is really gzip is still read right).

use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What the manifest says about an input's raw bytes.
#[derive(Clone, Debug, Default)]
pub struct Fingerprint {
    pub bytes: u64,
    pub sha256: String,
}

/// The raw file: every byte read goes through the hash and the shared progress counter.
struct Hashing {
    file: File,
    hash: Sha256,
    bytes: u64,
    progress: Arc<AtomicU64>,
}

impl Read for Hashing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.file.read(buf)?;
        self.hash.update(&buf[..n]);
        self.bytes += n as u64;
        self.progress.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// An open input: its decompressed text as a buffered reader, and its raw bytes' fingerprint
/// once read to the end.
pub struct Input {
    reader: Box<dyn BufRead + Send>,
    raw: RawHandle,
}

/// Where the fingerprint of the raw stream is read back after the decoder has consumed it.
type RawHandle = Arc<std::sync::Mutex<Option<Fingerprint>>>;

struct Finishing {
    inner: BufReader<Hashing>,
    done: RawHandle,
}

impl Read for Finishing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 && !buf.is_empty() {
            self.finish();
        }
        Ok(n)
    }
}

impl BufRead for Finishing {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.inner.fill_buf()?.is_empty() {
            self.finish();
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.inner.consume(amt)
    }
}

impl Finishing {
    fn finish(&mut self) {
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        if done.is_none() {
            let h = self.inner.get_ref();
            *done = Some(Fingerprint {
                bytes: h.bytes,
                sha256: hex(&h.hash.clone().finalize()),
            });
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The raw file's buffer: big enough for few calls into the OS, small enough that the
/// splitter's block reads bypass it.
const RAW_BUFFER: usize = 64 << 10;

const GZIP: &[u8] = &[0x1f, 0x8b];
const ZSTD: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];

impl Input {
    pub fn open(path: &Path, progress: Arc<AtomicU64>) -> Result<Self> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        if file.metadata().map_err(io)?.is_dir() {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a directory: give the files in it",
            )));
        }
        let done: RawHandle = Default::default();
        let mut raw = Finishing {
            // Small: a plain input's lines are read in blocks larger than this, which a
            // `BufReader` hands straight to the file, so the bytes are copied once.
            inner: BufReader::with_capacity(
                RAW_BUFFER,
                Hashing {
                    file,
                    hash: Sha256::new(),
                    bytes: 0,
                    progress,
                },
            ),
            done: done.clone(),
        };
        let head = raw.fill_buf().map_err(io)?;
        let reader: Box<dyn BufRead + Send> = if head.starts_with(GZIP) {
            Box::new(BufReader::with_capacity(
                1 << 20,
                flate2::bufread::MultiGzDecoder::new(raw),
            ))
        } else if head.starts_with(ZSTD) {
            Box::new(BufReader::with_capacity(
                1 << 20,
                zstd::stream::read::Decoder::with_buffer(raw).map_err(io)?,
            ))
        } else {
            Box::new(raw)
        };
        Ok(Input { reader, raw: done })
    }

    pub fn reader(&mut self) -> &mut (dyn BufRead + Send) {
        &mut *self.reader
    }

    /// The raw file's size and sha256; `None` until the decoder has read it to its end.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        self.raw.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// The fingerprint of a file read on its own (when a decoder did not read it to the end).
pub fn fingerprint_of(path: &Path) -> Result<Fingerprint> {
    let mut reader = Hashing {
        file: File::open(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?,
        hash: Sha256::new(),
        bytes: 0,
        progress: Arc::new(AtomicU64::new(0)),
    };
    std::io::copy(&mut reader, &mut std::io::sink()).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Fingerprint {
        bytes: reader.bytes,
        sha256: hex(&reader.hash.finalize()),
    })
}
