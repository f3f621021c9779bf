//! Oniguruma patterns (HF's `Regex`: tokenizer.json's `Split` and `Replace`) run on fancy-regex.
//!
//! The usual syntax means the same in both engines; where it does not, the pattern is rewritten
//! before it is compiled, so a `Split` or `Replace` matches exactly what HF's does:
//! - `atom{n,m}+`: Oniguruma repeats the interval, fancy-regex makes it possessive
//!   ([`interval_dialect`]);
//! - `\w` and `\W` ([`word_classes`]): Oniguruma's word chars leave out ZWNJ and ZWJ (the
//!   Join_Control chars the Unicode `\w` of fancy-regex takes in) and, outside a bracket class
//!   only, take in Latin-1's six number signs `² ³ ¹ ¼ ½ ¾` (its single-byte table says so).
//!
//! Found by running HF's `Replace` and ours over every code point below U+30000 for `\w`,
//! `[\w]`, `\W`, `[^\w]`, `[\W]`, `\d`, `[\d]`, `\D`, `\s`, `[\s]`, `\S`, `\p{..}`, `.`: those
//! were the only differences (`tests/test_regex_dialect.py` keeps the sweep).
//! Downside: `\b` and `\B` still use fancy-regex's word chars (they cannot be rewritten as a
//! class), so a boundary next to one of those eight chars can differ.

use crate::error::{Error, Result};

/// Which engine a pattern is rewritten for.
pub enum Dialect {
    /// Oniguruma (HF's engine) reads `X{1,3}+` as "`X{1,3}`, one or more times".
    Onig,
    /// fancy-regex reads `X{1,3}+` as a possessive `X{1,3}`.
    Rust,
}

/// Rewrite `atom{n,m}+` so that the other engine means the same: for Oniguruma a possessive interval
/// becomes an atomic group `(?>atom{n,m})`; an Oniguruma pattern's `atom{n,m}+` becomes
/// `(?:atom{n,m})+` for fancy-regex. (cl100k's `\p{N}{1,3}+` is the case that matters: read by
/// Oniguruma as written, it would keep "1900" whole.)
pub fn interval_dialect(pattern: &str, to: Dialect) -> String {
    static RE: std::sync::OnceLock<fancy_regex::Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        fancy_regex::Regex::new(
            r"(?<!\\)(\\[pP]\{[^}]*\}|\[(?:\\.|[^\]])*\]|\\.|[^\\()|])(\{\d+(?:,\d*)?\})\+",
        )
        .expect("valid rewrite pattern")
    });
    let replacement = match to {
        Dialect::Onig => "(?>$1$2)",
        Dialect::Rust => "(?:$1$2)+",
    };
    re.replace_all(pattern, replacement).into_owned()
}

/// Oniguruma's `\w` and `\W` as fancy-regex classes, inside and outside bracket classes.
pub fn word_classes(pattern: &str) -> String {
    const JOIN_CONTROL: &str = r"\x{200C}\x{200D}";
    const LATIN1_NUMBERS: &str = r"\xB2\xB3\xB9\xBC-\xBE";
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut depth = 0usize; // how many bracket classes are open
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match (chars.next(), depth) {
                (Some('w'), 0) => {
                    out.push_str(&format!(r"[[\w{LATIN1_NUMBERS}]&&[^{JOIN_CONTROL}]]"))
                }
                (Some('W'), 0) => {
                    out.push_str(&format!(r"[[\W{JOIN_CONTROL}]&&[^{LATIN1_NUMBERS}]]"))
                }
                (Some('w'), _) => out.push_str(&format!(r"[\w&&[^{JOIN_CONTROL}]]")),
                (Some('W'), _) => out.push_str(&format!(r"[\W{JOIN_CONTROL}]")),
                (Some(other), _) => {
                    out.push('\\');
                    out.push(other);
                }
                (None, _) => out.push('\\'),
            },
            '[' => {
                depth += 1;
                out.push('[');
                // `[]...]` and `[^]...]`: a `]` first in a class is a literal, not its end.
                if chars.peek() == Some(&'^') {
                    out.push('^');
                    chars.next();
                }
                if chars.peek() == Some(&']') {
                    out.push(']');
                    chars.next();
                }
            }
            ']' if depth > 0 => {
                depth -= 1;
                out.push(']');
            }
            _ => out.push(c),
        }
    }
    out
}

/// An HF `Regex` pattern compiled to match as Oniguruma matches it; an error names `owner`
/// (the component) and the pattern as the user wrote it.
pub fn regex(pattern: &str, owner: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::Regex::new(&word_classes(&interval_dialect(pattern, Dialect::Rust)))
        .map_err(|e| Error::invalid(format!("{owner}: invalid regex {pattern:?}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::CL100K_PATTERN;

    #[test]
    fn possessive_intervals_are_rewritten_per_engine() {
        let onig = interval_dialect(CL100K_PATTERN, Dialect::Onig);
        assert!(onig.contains(r"|(?>\p{N}{1,3})|"), "{onig}");
        assert_eq!(onig.matches("(?>").count(), 1);
        assert_eq!(
            interval_dialect(r"[a-z]{2}+|\d{1,3}+x", Dialect::Rust),
            r"(?:[a-z]{2})+|(?:\d{1,3})+x"
        );
        assert_eq!(interval_dialect(r"a{2}|b+", Dialect::Onig), r"a{2}|b+");
    }

    #[test]
    fn word_classes_leave_escapes_and_literal_brackets_alone() {
        let re = |p: &str| regex(p, "test").unwrap();
        let words = |p: &str, t: &str| -> Vec<String> {
            re(p)
                .find_iter(t)
                .map(|m| m.unwrap().as_str().to_string())
                .collect()
        };
        assert_eq!(words(r"\w+", "a²b\u{200C}c ½"), ["a²b", "c", "½"]);
        assert_eq!(words(r"[\w]+", "a²b\u{200C}c"), ["a", "b", "c"]);
        assert_eq!(words(r"[^\w\s]+", "a² \u{200D}-"), ["²", "\u{200D}-"]);
        assert_eq!(words(r"\W+", "a²b\u{200C}c"), ["\u{200C}"]);
        assert_eq!(words(r"\\w", r"a\wb"), [r"\w"]);
        assert_eq!(words(r"[]\w]+", "x]y"), ["x]y"]);
        assert_eq!(words(r"[^]a]+", "a]bc"), ["bc"]);
        assert_eq!(words(r"[[:alpha:]]+\w", "ab1"), ["ab1"]);
    }
}
