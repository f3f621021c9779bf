//! Oniguruma patterns (HF's `Regex`: tokenizer.json's `Split` and `Replace`) run on fancy-regex.
//!
//! The usual syntax means the same in both engines; where it does not, the pattern is rewritten
//! before it is compiled, so a `Split` or `Replace` matches exactly what HF's does:
//! - `atom{n,m}+`: Oniguruma repeats the interval, fancy-regex makes it possessive
//!   ([`interval_dialect`]);
//! - `\w` and `\W` ([`escapes_and_anchors`]): Oniguruma's word chars leave out ZWNJ and ZWJ
//!   (the Join_Control chars the Unicode `\w` of fancy-regex takes in) and, outside a bracket
//!   class only, take in Latin-1's six number signs `² ³ ¹ ¼ ½ ¾` (its single-byte table says so);
//! - `^` and `$` are line anchors in Oniguruma's (Ruby) syntax, text anchors in fancy-regex, and
//!   its group flag `m` is fancy-regex's `s`; `\h`, `\H`, `\Z` and `\R` are Oniguruma's only.
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

/// Oniguruma's readings of the escapes, anchors and flags that fancy-regex reads otherwise,
/// written the fancy-regex way: `\w` `\W` (see the module doc), `\h` `\H` (hex digits), `^` `$`
/// (line anchors in Oniguruma's Ruby syntax), `\Z` (end, or before a final newline), `\R` (any
/// line break), and the group flag `m` (Ruby's "dot matches newline", fancy-regex's `s`).
pub fn escapes_and_anchors(pattern: &str) -> Result<String> {
    const JOIN_CONTROL: &str = r"\x{200C}\x{200D}";
    const LATIN1_NUMBERS: &str = r"\xB2\xB3\xB9\xBC-\xBE";
    const HEX: &str = "0-9a-fA-F";
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
                (Some('h'), 0) => out.push_str(&format!("[{HEX}]")),
                (Some('h'), _) => out.push_str(HEX),
                (Some('H'), _) => out.push_str(&format!("[^{HEX}]")),
                (Some('Z'), 0) => out.push_str(r"(?=\n?\z)"),
                (Some('R'), 0) => out.push_str(r"(?:\r\n|[\n\x0B\x0C\r\x{85}\x{2028}\x{2029}])"),
                (Some(other), _) => {
                    out.push('\\');
                    out.push(other);
                }
                (None, _) => out.push('\\'),
            },
            '^' if depth == 0 => out.push_str("(?m:^)"),
            '$' if depth == 0 => out.push_str("(?m:$)"),
            '(' if depth == 0 && chars.peek() == Some(&'?') => {
                out.push('(');
                let rest: String = chars
                    .clone()
                    .take_while(|&f| f != ':' && f != ')')
                    .collect();
                // `(?flags)` or `(?flags:`: flags are letters and `-` only (not `(?=`, `(?<n>`).
                let flags = &rest[1..];
                if !flags.is_empty() && flags.chars().all(|f| f.is_ascii_alphabetic() || f == '-') {
                    if let Some(f) = flags.chars().find(|f| !"imx-".contains(*f)) {
                        return Err(Error::invalid(format!(
                            "undefined group option {f:?} (Oniguruma, HF's engine, knows i, m \
                             and x; its m is \"dot matches newline\")"
                        )));
                    }
                    out.push('?');
                    out.extend(flags.chars().map(|f| if f == 'm' { 's' } else { f }));
                    for _ in 0..rest.chars().count() {
                        chars.next();
                    }
                }
            }
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
    Ok(out)
}

/// An HF `Regex` pattern compiled to match as Oniguruma matches it; an error names `owner`
/// (the component) and the pattern as the user wrote it.
pub fn regex(pattern: &str, owner: &str) -> Result<fancy_regex::Regex> {
    let invalid = |e: &dyn std::fmt::Display| {
        Error::invalid(format!("{owner}: invalid regex {pattern:?}: {e}"))
    };
    let rewritten =
        escapes_and_anchors(&interval_dialect(pattern, Dialect::Rust)).map_err(|e| invalid(&e))?;
    fancy_regex::Regex::new(&rewritten).map_err(|e| invalid(&e))
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
    fn rewrites_leave_escapes_and_literal_brackets_alone() {
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
        assert_eq!(words(r"^b|a$", "a\nb a"), ["a", "b", "a"]);
        assert_eq!(words(r"[$^]+", "a$^b"), ["$^"]);
        assert_eq!(words(r"(?m:a.b)|(?i)C(?=\Z)", "a\nb c\n"), ["a\nb", "c"]);
        assert_eq!(words(r"(?<n>\h+)\R", "xaF\r\n"), ["aF\r\n"]);
        let e = regex("(?s:a.b)", "Split").unwrap_err().to_string();
        assert!(e.contains("undefined group option 's'"), "{e}");
    }
}
