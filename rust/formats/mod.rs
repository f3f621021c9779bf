//! Vocabulary files: tiktoken's `.tiktoken`, GPT-2's `encoder.json` + `vocab.bpe`.

pub mod byte_unicode;
pub mod gpt2;
pub mod hf_json;
pub mod hf_post;
pub mod hf_wordpiece;
pub mod json_fields;
pub mod onig;
pub mod tekken;
pub mod tiktoken;

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

/// A JSON document; a syntax error names `origin` and the line.
pub fn parse_json(text: &str, origin: &str) -> Result<serde_json::Value> {
    serde_json::from_str(text).map_err(|e| Error::Format {
        path: origin.to_string(),
        line: e.line(),
        msg: format!("not JSON: {e}"),
    })
}

/// Hand the pages of freed heap memory back to the OS (glibc keeps them otherwise). Called once a
/// large JSON document has been read and dropped: its tree took ~170 MB for a Llama 3
/// tokenizer.json, which stayed in the process's resident memory after the model (~35 MB) was
/// built from it. Elsewhere than glibc, nothing.
pub fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free heap pages to the OS; it touches no live
    // allocation and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A JSON number that must fit a u32 (an id, a count, a length): anything else is an error naming
/// `what`, never a value silently cut to 32 bits (`2**32 + 5` would otherwise become 5).
pub fn json_u32(v: &serde_json::Value, what: impl std::fmt::Display, origin: &str) -> Result<u32> {
    v.as_u64()
        .and_then(|x| u32::try_from(x).ok())
        .ok_or_else(|| {
            Error::invalid(format!(
                "{origin}: {what} must be an integer in 0..=4294967295 (u32), not {v}"
            ))
        })
}

/// Read a whole file; errors name the path.
pub fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Read a whole file as UTF-8 text; errors name the path.
pub fn read_text(path: &Path) -> Result<String> {
    String::from_utf8(read(path)?)
        .map_err(|e| Error::invalid(format!("{}: not UTF-8 ({e})", path.display())))
}

/// Write `bytes` to `path` atomically: a temporary file in the same folder, synced, then renamed
/// over the target, so readers never see a half-written vocabulary.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid(format!("{}: not a file path", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}
