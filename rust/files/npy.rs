//! One `.npy` file of little-endian unsigned integers, written as a stream and published
//! atomically.
//!
//! Idea: the length of the array is only known at the end, but `.npy` states it in the header.
//! The header is therefore written with room to spare (a fixed 128 bytes, enough for any
//! 64-bit length) and rewritten in place when the stream ends; the data goes to a temporary
//! file in the same folder, which is synced and renamed over the target only then. A reader sees
//! the whole file or none of it. Downside: a crash leaves a hidden `.tmp` file behind.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The header's size: a multiple of 64 (numpy aligns the data so), holding the longest shape.
const HEADER_LEN: usize = 128;

/// The element types written here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    U16,
    U32,
    U64,
}

impl Dtype {
    /// numpy's name (`numpy.dtype(name)`).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::U64 => "uint64",
        }
    }

    fn descr(self) -> &'static str {
        match self {
            Dtype::U16 => "<u2",
            Dtype::U32 => "<u4",
            Dtype::U64 => "<u8",
        }
    }

    /// The largest value it holds.
    pub fn max(self) -> u64 {
        match self {
            Dtype::U16 => u16::MAX as u64,
            Dtype::U32 => u32::MAX as u64,
            Dtype::U64 => u64::MAX,
        }
    }
}

/// `.npy` header of a 1-D array of `len` elements, padded to [`HEADER_LEN`] bytes.
fn header(dtype: Dtype, len: u64) -> [u8; HEADER_LEN] {
    let dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({len},), }}",
        dtype.descr()
    );
    let mut out = [b' '; HEADER_LEN];
    out[..6].copy_from_slice(b"\x93NUMPY");
    out[6] = 1; // format version 1.0
    out[7] = 0;
    out[8..10].copy_from_slice(&((HEADER_LEN - 10) as u16).to_le_bytes());
    out[10..10 + dict.len()].copy_from_slice(dict.as_bytes());
    out[HEADER_LEN - 1] = b'\n';
    out
}

pub struct NpyWriter {
    target: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
    dtype: Dtype,
    len: u64,
    scratch: Vec<u8>,
    /// Bytes of the file handed to the OS to write back so far ([`WRITE_BEHIND`]).
    written_back: u64,
}

/// Every this many bytes, the data so far is handed to the OS to write to disk while the job
/// goes on, so the final sync waits for the last stretch only: syncing 5 MB at the end took
/// 4.5 ms on this machine's disk, a few percent of encoding a 10 MB file on two cores.
const WRITE_BEHIND: u64 = 1 << 20;

impl NpyWriter {
    pub fn create(target: &Path, dtype: Dtype) -> Result<Self> {
        let name = target
            .file_name()
            .map_or_else(|| "array".into(), |n| n.to_string_lossy().into_owned());
        let tmp = target.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
        let mut file = BufWriter::with_capacity(1 << 20, File::create(&tmp).map_err(io(&tmp))?);
        file.write_all(&header(dtype, 0)).map_err(io(&tmp))?;
        Ok(NpyWriter {
            target: target.to_path_buf(),
            tmp,
            file: Some(file),
            dtype,
            len: 0,
            scratch: Vec::new(),
            written_back: 0,
        })
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append `values`; a value the dtype cannot hold is an error (never wrapped).
    pub fn push<T: Copy + Into<u64>>(&mut self, values: &[T]) -> Result<()> {
        let file = self.file.as_mut().expect("pushed after finish");
        let max = self.dtype.max();
        let width = match self.dtype {
            Dtype::U16 => 2,
            Dtype::U32 => 4,
            Dtype::U64 => 8,
        };
        // One buffer kept from call to call: a document is often a few ids, and a fresh zeroed
        // 4 KB array per call was a fifth of a file job's time on short lines. The range is
        // checked first (a maximum, no branch per value) and the values then narrowed in a loop
        // per width; one loop that checked and copied a variable width per value was slower.
        let largest = values.iter().fold(0u64, |m, &v| m.max(v.into()));
        if largest > max {
            let v = values
                .iter()
                .map(|&v| v.into())
                .find(|&v| v > max)
                .unwrap_or(largest);
            return Err(Error::invalid(format!(
                "{}: value {v} does not fit {}",
                self.target.display(),
                self.dtype.name()
            )));
        }
        self.scratch.clear();
        self.scratch.resize(values.len() * width, 0);
        match self.dtype {
            Dtype::U16 => narrow::<T, 2>(values, &mut self.scratch, |v| (v as u16).to_le_bytes()),
            Dtype::U32 => narrow::<T, 4>(values, &mut self.scratch, |v| (v as u32).to_le_bytes()),
            Dtype::U64 => narrow::<T, 8>(values, &mut self.scratch, |v| v.to_le_bytes()),
        }
        file.write_all(&self.scratch).map_err(io(&self.tmp))?;
        if self.scratch.capacity() > 1 << 20 {
            self.scratch = Vec::new(); // a huge document does not pin its buffer
        }
        self.len += values.len() as u64;
        let end = HEADER_LEN as u64 + self.len * width as u64;
        if end - self.written_back >= 2 * WRITE_BEHIND {
            // What the buffer holds is not in the file yet: start up to where the file ends.
            let flushed = end - file.buffer().len() as u64;
            start_write_back(file.get_ref(), self.written_back, flushed);
            self.written_back = flushed;
        }
        Ok(())
    }

    /// Write the final header, sync, and rename into place.
    pub fn finish(mut self) -> Result<()> {
        let mut file = self
            .file
            .take()
            .expect("finished twice")
            .into_inner()
            .map_err(|e| io(&self.tmp)(e.into_error()))?;
        let tmp = self.tmp.clone();
        (|| {
            file.seek(SeekFrom::Start(0))?;
            file.write_all(&header(self.dtype, self.len))?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.target)
        })()
        .map_err(io(&tmp))
    }
}

impl Drop for NpyWriter {
    /// A writer dropped unfinished (an error on the way) leaves no temporary file.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// `values` as `W`-byte little-endian integers into `out` (`W` bytes per value).
#[inline(always)]
fn narrow<T: Copy + Into<u64>, const W: usize>(
    values: &[T],
    out: &mut [u8],
    bytes: impl Fn(u64) -> [u8; W],
) {
    for (slot, &v) in out.chunks_exact_mut(W).zip(values) {
        slot.copy_from_slice(&bytes(v.into()));
    }
}

/// Ask the OS to start writing bytes `from..to` of `file` to disk, without waiting. Only a
/// hint: `finish` syncs the whole file whatever happens here, so a failure is ignored.
#[cfg(target_os = "linux")]
fn start_write_back(file: &File, from: u64, to: u64) {
    use std::os::fd::AsRawFd;
    // SAFETY: the descriptor is open for as long as `file` is borrowed; the call reads no
    // memory of ours.
    unsafe {
        libc::sync_file_range(
            file.as_raw_fd(),
            from as libc::off64_t,
            (to - from) as libc::off64_t,
            libc::SYNC_FILE_RANGE_WRITE,
        );
    }
}

#[cfg(not(target_os = "linux"))]
fn start_write_back(_file: &File, _from: u64, _to: u64) {}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned_and_holds_the_longest_shape() {
        for len in [0, 7, u64::MAX] {
            let h = header(Dtype::U64, len);
            let dict = std::str::from_utf8(&h[10..]).unwrap();
            assert!(dict.contains(&format!("'shape': ({len},)")), "{dict}");
            assert!(dict.ends_with('\n'));
        }
    }

    #[test]
    fn values_too_large_for_the_dtype_are_refused() {
        let dir = std::env::temp_dir().join(format!("subword-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("x.npy");
        let mut w = NpyWriter::create(&target, Dtype::U16).unwrap();
        w.push(&[1u32, 65535]).unwrap();
        assert!(w.push(&[65536u32]).is_err());
        drop(w);
        // Nothing published, nothing left over.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn a_file_written_back_while_growing_holds_every_value() {
        // Several write-back stretches, pushed in uneven pieces, then read back whole.
        let dir = std::env::temp_dir().join(format!("subword-npy-wb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("x.npy");
        let values: Vec<u32> = (0..3_000_000u32)
            .map(|k| k.wrapping_mul(2_654_435_761) >> 16)
            .collect();
        let mut w = NpyWriter::create(&target, Dtype::U16).unwrap();
        for piece in values.chunks(12_345) {
            w.push(piece).unwrap();
        }
        assert!(w.written_back >= 2 * WRITE_BEHIND, "{}", w.written_back);
        w.finish().unwrap();
        let bytes = std::fs::read(&target).unwrap();
        assert_eq!(bytes.len(), HEADER_LEN + 2 * values.len());
        assert_eq!(
            &bytes[..HEADER_LEN],
            &header(Dtype::U16, values.len() as u64)[..]
        );
        let read: Vec<u32> = bytes[HEADER_LEN..]
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
            .collect();
        assert!(read == values);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
