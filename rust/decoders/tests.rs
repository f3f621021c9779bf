//! Properties of the stage; the results are checked against HF `tokenizers` in
//! tests/test_decoders.py.

use super::*;

#[test]
fn byte_level_inverts_the_alphabet_and_byte_fallback_reads_runs() {
    let toks = crate::formats::byte_unicode::encode("héllo 🙂".as_bytes());
    let bl = Decoder::ByteLevel(ByteLevelOptions {
        add_prefix_space: true,
        trim_offsets: true,
        use_regex: true,
    });
    assert_eq!(bl.decode(vec![toks]).unwrap(), "héllo 🙂");
    let bf = Decoder::ByteFallback;
    let t = |s: &str| s.to_string();
    assert_eq!(
        bf.decode(vec![t("a"), t("<0xC3>"), t("<0xA9>"), t("b")])
            .unwrap(),
        "aéb"
    );
    assert_eq!(bf.decode(vec![t("<0xC3>"), t("x")]).unwrap(), "\u{fffd}x");
}

#[test]
fn json_round_trips_and_errors_name_their_place() {
    let all = vec![
        Decoder::ByteLevel(ByteLevelOptions {
            add_prefix_space: false,
            trim_offsets: true,
            use_regex: true,
        }),
        Decoder::ByteFallback,
        Decoder::Fuse,
        Decoder::WordPiece {
            prefix: "##".into(),
            cleanup: true,
        },
        Decoder::Metaspace {
            replacement: '▁',
            prepend_scheme: PrependScheme::First,
            split: true,
        },
        Decoder::Bpe {
            suffix: "</w>".into(),
        },
        Decoder::Ctc {
            pad_token: "<pad>".into(),
            word_delimiter_token: "|".into(),
            cleanup: false,
        },
        Decoder::Strip {
            content: ' ',
            start: 1,
            stop: 2,
        },
        Decoder::Replace(Replace::new(ReplacePattern::String("▁".into()), " ".into()).unwrap()),
        Decoder::Sequence(vec![Decoder::ByteFallback, Decoder::Fuse]),
    ];
    for d in all {
        let v = d.to_json().unwrap();
        assert_eq!(
            Decoder::from_json(&v, "decoder")
                .unwrap()
                .to_json()
                .unwrap(),
            v
        );
    }
    let v = serde_json::json!({"type": "Sequence", "decoders": [{"type": "Metaspace", "prepend_scheme": "sometimes"}]});
    let e = Decoder::from_json(&v, "decoder").unwrap_err().to_string();
    assert!(
        e.contains("decoder.decoders[0].prepend_scheme") && e.contains("sometimes"),
        "{e}"
    );
}

#[test]
fn empty_input_and_short_tokens_do_not_panic() {
    assert_eq!(
        Decoder::Bpe {
            suffix: "</w>".into()
        }
        .decode(vec![])
        .unwrap(),
        ""
    );
    let strip = Decoder::Strip {
        content: 'x',
        start: 5,
        stop: 5,
    };
    assert_eq!(strip.decode(vec!["xx".into(), "xax".into()]).unwrap(), "a");
}
