//! Properties of the stage; the results themselves are checked against HF `tokenizers` in
//! tests/test_normalizers.py.

use super::*;

fn all() -> Vec<Normalizer> {
    vec![
        Normalizer::Unicode(UnicodeForm::Nfc),
        Normalizer::Unicode(UnicodeForm::Nfd),
        Normalizer::Unicode(UnicodeForm::Nfkc),
        Normalizer::Unicode(UnicodeForm::Nfkd),
        Normalizer::Lowercase,
        Normalizer::StripAccents,
        Normalizer::Strip {
            left: true,
            right: false,
        },
        Normalizer::Prepend("▁".into()),
        Normalizer::ByteLevel,
        Normalizer::Nmt,
        Normalizer::Replace(Replace::new(ReplacePattern::String(" ".into()), "▁".into()).unwrap()),
        Normalizer::Replace(Replace::new(ReplacePattern::Regex(r"\s+".into()), "".into()).unwrap()),
        Normalizer::Bert {
            clean_text: true,
            handle_chinese_chars: true,
            strip_accents: None,
            lowercase: true,
        },
        Normalizer::Sequence(vec![
            Normalizer::Unicode(UnicodeForm::Nfd),
            Normalizer::StripAccents,
            Normalizer::Lowercase,
            Normalizer::Strip {
                left: true,
                right: true,
            },
        ]),
    ]
}

const TEXTS: &[&str] = &[
    "",
    " ",
    "Héllo  WÖRLD ",
    "  e\u{301}cole\u{301} İstanbul ΣΑΣ ",
    "你好, 世界!\u{0}\u{fffd}\tok",
    "ﬁ ① ｶ Å \u{212b}",
    "   ",
];

#[test]
fn alignments_cover_every_byte_in_order_and_inside_the_original() {
    for norm in all() {
        for text in TEXTS {
            let mut n = Normalized::new(text);
            norm.normalize(text, &mut n).unwrap();
            assert_eq!(
                n.alignments().len(),
                n.normalized().len(),
                "{norm:?} {text:?}"
            );
            let mut last_start = 0;
            for (k, &(s, e)) in n.alignments().iter().enumerate() {
                assert!(
                    s <= e && e <= text.len(),
                    "{norm:?} {text:?} byte {k}: {s}..{e}"
                );
                assert!(text.is_char_boundary(s) && text.is_char_boundary(e));
                assert!(
                    s >= last_start,
                    "{norm:?} {text:?}: alignments go back at byte {k}"
                );
                last_start = s;
            }
        }
    }
}

#[test]
fn json_round_trips() {
    for norm in all() {
        let v = norm.to_json().unwrap();
        let back = Normalizer::from_json(&v, "normalizer").unwrap();
        assert_eq!(back.to_json().unwrap(), v);
        for text in TEXTS {
            assert_eq!(
                back.normalize_str(text).unwrap(),
                norm.normalize_str(text).unwrap()
            );
        }
    }
}

#[test]
fn unknown_or_unimplemented_parts_name_their_place() {
    let v = serde_json::json!({"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Precompiled", "precompiled_charsmap": ""}]});
    let e = Normalizer::from_json(&v, "normalizer")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("normalizer.normalizers[1].precompiled_charsmap") && e.contains("header"),
        "{e}"
    );
    let v = serde_json::json!({"type": "Strip", "strip_left": "yes"});
    let e = Normalizer::from_json(&v, "normalizer")
        .unwrap_err()
        .to_string();
    assert!(e.contains("normalizer.strip_left"), "{e}");
    let v = serde_json::json!({"type": "Shout"});
    assert!(Normalizer::from_json(&v, "n")
        .unwrap_err()
        .to_string()
        .contains("Shout"));
}

#[test]
fn untouched_text_keeps_identity_alignment() {
    let n = Normalized::new("aé");
    assert_eq!(n.alignments(), &[(0, 1), (1, 3), (1, 3)]);
    assert_eq!(n.original_range(1, 3), (1, 3));
}

#[test]
fn char_ranges_read_as_hf_reads_a_slice() {
    let n = Normalized::new("a你b");
    // A start must be a char; an end past the text stops at its end; reversed runs to the end.
    assert_eq!(n.char_range(0, 0), Some((0, 0)));
    assert_eq!(n.char_range(1, 2), Some((1, 4)));
    assert_eq!(n.char_range(1, 1), Some((1, 1)));
    assert_eq!(n.char_range(1, 9), Some((1, 5)));
    assert_eq!(n.char_range(2, 1), Some((4, 5)));
    assert_eq!(n.char_range(3, 3), None);
    assert_eq!(n.char_range(3, 4), None);
    assert_eq!(Normalized::new("").char_range(0, 0), Some((0, 0)));
    assert_eq!(Normalized::new("").char_range(0, 1), None);
}

#[test]
fn a_piece_keeps_the_original_span_it_was_cut_from_through_edits() {
    let text = "  ab  cd";
    let mut n = Normalized::new(text).slice(0, 4);
    assert_eq!(n.original_span(), (0, 4));
    n.strip(true, true);
    assert_eq!(n.normalized(), "ab");
    assert_eq!(n.original_range(0, 2), (2, 4));
    assert_eq!(n.original_span(), (0, 4));
    n.clear();
    assert_eq!((n.normalized(), n.original_span()), ("", (0, 4)));
    let mut m = Normalized::new("x");
    m.append("yz");
    assert_eq!((m.normalized(), m.original_range(0, 3)), ("xyz", (0, 1)));
}

#[test]
fn a_range_is_the_slice_of_the_whole() {
    let text = "a你b\u{1F642}c";
    for (s, e) in [
        (0, 0),
        (0, 1),
        (1, 4),
        (4, 9),
        (0, text.len()),
        (text.len(), text.len()),
    ] {
        assert_eq!(
            Normalized::of_range(text, s, e),
            Normalized::new(text).slice(s, e),
            "{s}..{e}"
        );
    }
}
