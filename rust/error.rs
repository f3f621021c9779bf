//! One error type for the crate; the bindings map each variant to one Python exception.

use std::path::PathBuf;

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Text contains a special token that the caller did not allow (tiktoken's ValueError).
    #[error("disallowed special token {0:?}")]
    DisallowedSpecial(String),
    /// A token id with no bytes behind it.
    #[error("Invalid token for decoding: {0}")]
    UnknownId(u32),
    /// Bytes or text that are no single token (`encode_single_token`).
    #[error("not a single token: {0:?}")]
    NotAToken(Vec<u8>),
    /// A pattern that does not compile or fails while matching.
    #[error("{0}")]
    Pattern(String),
    /// Inconsistent vocabulary or arguments.
    #[error("{0}")]
    Invalid(String),
    /// A malformed vocabulary file: where and what.
    #[error("{path}: line {line}: {msg}")]
    Format {
        path: String,
        line: usize,
        msg: String,
    },
    /// The caller asked to stop (Ctrl-C during training); nothing was produced.
    #[error("interrupted")]
    Interrupted,
    /// An error raised by a component written outside the crate (a Python object behind a
    /// custom normalizer, pre-tokenizer or decoder), kept whole so the bindings raise it again.
    #[error("{0}")]
    External(Box<dyn std::error::Error + Send + Sync>),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
}
