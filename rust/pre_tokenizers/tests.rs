//! Properties of the stage; the pieces themselves are checked against HF `tokenizers` in
//! tests/test_pre_tokenizers.py.

use super::*;

fn all() -> Vec<PreTokenizer> {
    let split = |p: &str, re: bool, b: Behavior, inv: bool| {
        PreTokenizer::Split(Box::new(Split::new(p.into(), re, b, inv).unwrap()))
    };
    vec![
        PreTokenizer::Whitespace,
        PreTokenizer::WhitespaceSplit,
        PreTokenizer::Bert,
        PreTokenizer::FixedLength(3),
        PreTokenizer::Punctuation(Behavior::Isolated),
        PreTokenizer::Punctuation(Behavior::MergedWithNext),
        PreTokenizer::Digits { individual: true },
        PreTokenizer::Digits { individual: false },
        PreTokenizer::CharDelimiterSplit('x'),
        PreTokenizer::UnicodeScripts,
        split(" ", false, Behavior::MergedWithPrevious, false),
        split(r"\s+", true, Behavior::Removed, true),
        split(r"\d", true, Behavior::Contiguous, false),
        PreTokenizer::ByteLevel(ByteLevelOptions {
            add_prefix_space: true,
            trim_offsets: true,
            use_regex: true,
        }),
        PreTokenizer::Metaspace {
            replacement: '▁',
            prepend_scheme: PrependScheme::First,
            split: true,
        },
        PreTokenizer::Sequence(vec![
            PreTokenizer::WhitespaceSplit,
            PreTokenizer::Digits { individual: true },
        ]),
    ]
}

const TEXTS: &[&str] = &[
    "",
    " ",
    "Hello, wörld!! 12 3x4",
    "  a  b  ",
    "日本語。テスト 123",
    "x",
];

#[test]
fn pieces_are_in_order_inside_the_text_and_on_char_boundaries() {
    for p in all() {
        for text in TEXTS {
            let pieces = p.pre_tokenize_str(text).unwrap();
            let mut last = 0;
            for (piece, (s, e)) in &pieces {
                let (s, e) = (*s, *e);
                assert!(
                    !piece.is_empty() && last <= s && s <= e && e <= text.len(),
                    "{p:?} {text:?}: {pieces:?}"
                );
                assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
                last = s;
            }
        }
    }
}

#[test]
fn isolated_and_contiguous_keep_every_byte() {
    for b in [
        Behavior::Isolated,
        Behavior::Contiguous,
        Behavior::MergedWithNext,
        Behavior::MergedWithPrevious,
    ] {
        let p = PreTokenizer::Punctuation(b);
        for text in TEXTS {
            let joined: String = p
                .pre_tokenize_str(text)
                .unwrap()
                .into_iter()
                .map(|(piece, _)| piece)
                .collect();
            assert_eq!(joined, *text, "{b:?}");
        }
    }
}

#[test]
fn json_round_trips_and_errors_name_their_place() {
    for p in all() {
        let v = p.to_json().unwrap();
        let back = PreTokenizer::from_json(&v, "pre_tokenizer").unwrap();
        assert_eq!(back.to_json().unwrap(), v);
    }
    let v = serde_json::json!({"type": "Split", "pattern": {"String": " "}, "behavior": "Up"});
    let e = PreTokenizer::from_json(&v, "pre_tokenizer")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("pre_tokenizer.behavior") && e.contains("Up"),
        "{e}"
    );
    let v = serde_json::json!({"type": "Sequence", "pretokenizers": [{"type": "Scripted"}]});
    let e = PreTokenizer::from_json(&v, "p").unwrap_err().to_string();
    assert!(
        e.contains("p.pretokenizers[0]") && e.contains("Scripted"),
        "{e}"
    );
}
