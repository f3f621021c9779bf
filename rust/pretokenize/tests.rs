//! Each scanner against fancy-regex running the original pattern, on random strings drawn from an
//! alphabet that hits every class boundary the patterns care about.

use super::*;

const ALPHABET: &[&str] = &[
    " ", " ", " ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\u{a0}", "\u{3000}", "\u{200b}",
    "\u{2028}", "\u{85}", "a", "b", "s", "t", "l", "v", "e", "r", "d", "m", "S", "T", "L", "V",
    "E", "R", "D", "M", "ſ", "K", "\u{212a}", "'", "'", "'", "0", "7", "٣", "Ⅻ", "½", "!", ".",
    "/", ",", "-", "_", "中", "文", "한", "글", "ᄀ", "é", "\u{301}", "\u{5bf}", "ǅ", "ʰ", "ª",
    "Σ", "σ", "Я", "я", "😀", "\u{200d}", "🇺", "\u{fe0f}", "ǈ", "ᾈ", "ﬀ", "\u{e000}",
];

/// The patterns a hand-written scanner runs (DeepSeek-V3's chain is tested on its own).
pub(super) const SCANNED_PATTERNS: [&str; 6] = [
    GPT2_PATTERN,
    CL100K_PATTERN,
    O200K_PATTERN,
    LLAMA3_PATTERN,
    QWEN2_PATTERN,
    TEKKEN_PATTERN,
];

/// xorshift64: seeded, reproducible random draws for the scanner tests.
pub(super) struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn random_text(rng: &mut Rng) -> String {
    let len = (rng.next() % 24) as usize;
    (0..len)
        .map(|_| ALPHABET[(rng.next() % ALPHABET.len() as u64) as usize])
        .collect()
}

/// Words of every ASCII letter (both cases) and every other ASCII byte between them, with a few
/// non-ASCII letters, marks and spaces: the boundaries of the scanners' ASCII fast paths.
fn random_ascii_text(rng: &mut Rng) -> String {
    const NON_ASCII: &[&str] = &[
        "é", "\u{301}", "Σ", "я", "中", "ʰ", "\u{a0}", "ſ", "\u{212a}",
    ];
    let len = (rng.next() % 40) as usize;
    (0..len)
        .map(|_| match rng.next() % 16 {
            0 => NON_ASCII[(rng.next() % NON_ASCII.len() as u64) as usize].to_string(),
            1..=3 => " ".to_string(),
            4..=6 => char::from((rng.next() % 128) as u8).to_string(),
            7..=11 => char::from(b'a' + (rng.next() % 26) as u8).to_string(),
            _ => char::from(b'A' + (rng.next() % 26) as u8).to_string(),
        })
        .collect()
}

fn regex_pieces<'t>(re: &fancy_regex::Regex, text: &'t str) -> Vec<&'t str> {
    re.find_iter(text).map(|m| m.unwrap().as_str()).collect()
}

fn check(pattern: &str, samples: usize, seed: u64) {
    let scanner = Pattern::new(pattern).unwrap();
    assert!(matches!(scanner.engine, Engine::Scanner(_)));
    let re = fancy_regex::Regex::new(pattern).unwrap();
    let mut rng = Rng(seed);
    for _ in 0..samples {
        let text = random_text(&mut rng);
        assert_eq!(
            scanner.pieces(&text).unwrap(),
            regex_pieces(&re, &text),
            "pattern {pattern:?} on {text:?}"
        );
    }
}

#[test]
fn scanners_match_regex_on_ascii_words() {
    for (pattern, seed) in [
        (GPT2_PATTERN, 11),
        (CL100K_PATTERN, 12),
        (O200K_PATTERN, 13),
        (LLAMA3_PATTERN, 14),
        (QWEN2_PATTERN, 15),
        (TEKKEN_PATTERN, 16),
    ] {
        let scanner = Pattern::new(pattern).unwrap();
        let re = fancy_regex::Regex::new(pattern).unwrap();
        let mut rng = Rng((seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        for _ in 0..100_000 {
            let text = random_ascii_text(&mut rng);
            assert_eq!(
                scanner.pieces(&text).unwrap(),
                regex_pieces(&re, &text),
                "pattern {pattern:?} on {text:?}"
            );
        }
    }
}

#[test]
fn gpt2_scanner_matches_regex() {
    check(GPT2_PATTERN, 200_000, 0x9e3779b97f4a7c15);
}

#[test]
fn gpt2_original_pattern_splits_the_same() {
    check(GPT2_ORIGINAL_PATTERN, 100_000, 0x2545f4914f6cdd1d);
}

#[test]
fn cl100k_scanner_matches_regex() {
    check(CL100K_PATTERN, 200_000, 0x1234567887654321);
}

#[test]
fn o200k_scanner_matches_regex() {
    check(O200K_PATTERN, 200_000, 0x0badc0ffee0ddf00);
}

#[test]
fn llama3_scanner_matches_regex() {
    check(LLAMA3_PATTERN, 200_000, 0x5eed_0001_11a3_a300);
}

#[test]
fn qwen2_scanner_matches_regex() {
    check(QWEN2_PATTERN, 200_000, 0x5eed_0002_0e11_2000);
}

#[test]
fn tekken_scanner_matches_regex() {
    check(TEKKEN_PATTERN, 200_000, 0x5eed_0003_7e44_e300);
}

/// The DeepSeek-V3 scanner against the same three regexes run as a chain on fancy-regex.
fn check_deepseek(texts: impl Iterator<Item = String>) {
    let parts: Vec<String> = DEEPSEEK_V3_SPLITS.iter().map(|s| s.to_string()).collect();
    let scanner = Pattern::isolated_splits(&parts).unwrap();
    assert!(matches!(
        scanner.engine,
        Engine::Scanner(Scanner::DeepSeekV3)
    ));
    let res: Vec<fancy_regex::Regex> = parts.iter().map(|p| compile_regex(p).unwrap()).collect();
    for text in texts {
        let want: Vec<&str> = isolated_spans(&res, &text)
            .unwrap()
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect();
        assert_eq!(scanner.pieces(&text).unwrap(), want, "on {text:?}");
    }
}

#[test]
fn deepseek_scanner_matches_the_regex_chain() {
    const EXTRA: &[&str] = &[
        "一", "龥", "ぁ", "ゟ", "゠", "ヿ", "ー", "\u{3099}", "゛", "・", "\u{3097}", "〇",
        "\u{0}", "\u{7}", "\u{200b}", "\u{e000}", "$", "+", "@", "[", "~", "`", "^", "|", "1",
        "12", "١",
    ];
    let mut rng = Rng(0x5eed_0004_d33b_5eec);
    check_deepseek((0..200_000).map(|_| {
        let len = (rng.next() % 24) as usize;
        (0..len)
            .map(|_| {
                let k = rng.next() as usize;
                if k.is_multiple_of(3) {
                    EXTRA[(k / 3) % EXTRA.len()]
                } else {
                    ALPHABET[(k / 3) % ALPHABET.len()]
                }
            })
            .collect()
    }));
    let mut rng = Rng(0x5eed_0005_a5c1_1000);
    check_deepseek((0..100_000).map(|_| random_ascii_text(&mut rng)));
}

#[test]
fn scanners_match_regex_on_corpora() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpora");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // corpora are optional; the random tests above always run
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // A 300 KB slice per file keeps the regex side fast in debug builds.
        let mut end = text.len().min(300_000);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = &text[..end];
        check_deepseek(std::iter::once(text.to_string()));
        for pattern in SCANNED_PATTERNS {
            let re = fancy_regex::Regex::new(pattern).unwrap();
            let ours = Pattern::new(pattern).unwrap();
            assert_eq!(
                ours.pieces(text).unwrap(),
                regex_pieces(&re, text),
                "{path:?} with {pattern:?}"
            );
        }
    }
}

#[test]
fn names_resolve_to_patterns() {
    assert_eq!(
        Pattern::new("cl100k_base").unwrap().as_str(),
        CL100K_PATTERN
    );
    assert!(Pattern::new("(unclosed").is_err());
}

#[test]
fn isolated_splits_cut_each_piece_of_the_stage_before() {
    let p = Pattern::isolated_splits(&[r"\d{1,2}".to_string(), r"[a-z]+".to_string()]).unwrap();
    // Stage 1 isolates "12", "3"; stage 2 isolates letter runs in the rest; gaps stay pieces.
    assert_eq!(
        p.pieces("ab123cd ef").unwrap(),
        ["ab", "12", "3", "cd", " ", "ef"]
    );
    assert_eq!(p.pieces("").unwrap(), Vec::<&str>::new());
    assert_eq!(p.chain().unwrap().len(), 2);
    // One regex is the plain pattern, not a chain.
    assert!(Pattern::isolated_splits(&[CL100K_PATTERN.to_string()])
        .unwrap()
        .chain()
        .is_none());
}
