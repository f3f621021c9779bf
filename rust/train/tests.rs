use super::*;

fn train_words(words: &[(&str, u64)], n: usize, tie: TieBreak) -> Vec<(String, String)> {
    let mut counter = PreTokenCounter::new(Pattern::whole(), &[]).unwrap();
    for (w, c) in words {
        counter.add_counts(w.as_bytes(), *c);
    }
    let opts = TrainOptions {
        vocab_size: 256 + n,
        specials: vec![],
        min_frequency: 1,
        tie_break: tie,
        show_progress: false,
    };
    let (counts, pattern) = counter.into_parts().unwrap();
    let trained = finish(counts, pattern, &opts).unwrap();
    trained
        .merges
        .iter()
        .map(|(a, b)| {
            (
                String::from_utf8_lossy(a).into_owned(),
                String::from_utf8_lossy(b).into_owned(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn textbook_example_both_tie_breaks() {
    let words = [("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)];
    // (e,s) and (s,t) both occur 9 times; "first" takes the one met first in "newest".
    assert_eq!(
        train_words(&words, 4, TieBreak::First),
        pairs(&[("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")])
    );
    // Lexicographic: ("s","t") > ("e","s"), and ("o","w") > ("l","o").
    assert_eq!(
        train_words(&words, 4, TieBreak::Lexicographic),
        pairs(&[("s", "t"), ("e", "st"), ("o", "w"), ("l", "ow")])
    );
}

#[test]
fn too_small_vocab_names_the_minimum() {
    let opts = TrainOptions {
        vocab_size: 100,
        specials: vec!["<|eot|>".into()],
        min_frequency: 1,
        tie_break: TieBreak::Lexicographic,
        show_progress: false,
    };
    let err = finish(Counts::default(), Pattern::whole(), &opts)
        .err()
        .unwrap();
    assert!(err.to_string().contains("minimum is 257"), "{err}");
}

fn classic(mergeable: bool, tie: TieBreak) -> (Vec<(String, String)>, crate::classic::ClassicBpe) {
    let mut counter = PreTokenCounter::with_splitter(Splitter::Whitespace, &[]).unwrap();
    for (w, c) in [("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)] {
        counter.add_counts(w.as_bytes(), c);
    }
    let opts = classic::ClassicOptions {
        vocab_size: 100,
        unk_token: Some("<unk>".into()),
        suffix: "</w>".into(),
        merge_end_of_word: mergeable,
        min_frequency: 1,
        tie_break: tie,
        show_progress: false,
    };
    let learned = classic::train(counter.into_counts(), &opts).unwrap();
    let model = crate::classic::ClassicBpe::new(
        learned.tokens,
        learned.merges.clone(),
        "</w>",
        Some("<unk>"),
    )
    .unwrap();
    (learned.merges, model)
}

fn pieces(m: &crate::classic::ClassicBpe, text: &str) -> Vec<String> {
    m.encode(text)
        .unwrap()
        .iter()
        .map(|&id| m.tokens()[id as usize].clone())
        .collect()
}

#[test]
fn classic_textbook_example() {
    let (merges, model) = classic(false, TieBreak::First);
    assert_eq!(
        merges[..4],
        pairs(&[("e", "s"), ("es", "t"), ("l", "o"), ("lo", "w")])
    );
    assert_eq!(pieces(&model, "lowest"), ["low", "est", "</w>"]);
    let (merges, model) = classic(true, TieBreak::First);
    assert_eq!(merges[2], ("est".to_string(), "</w>".to_string()));
    assert_eq!(pieces(&model, "lowest"), ["low", "est</w>"]);
    assert_eq!(
        model
            .decode(&model.encode(" lowest  newer ").unwrap())
            .unwrap(),
        "lowest newer"
    );
}

/// A pipeline from its tokenizer.json stages (a WordLevel stand-in model, as training uses).
fn counting_pipeline(normalizer: &str, pre_tokenizer: &str) -> crate::pipeline::Pipeline {
    let doc = format!(
        r#"{{"normalizer": {normalizer}, "pre_tokenizer": {pre_tokenizer},
            "model": {{"type": "WordLevel", "vocab": {{"<unk>": 0}}, "unk_token": "<unk>"}}}}"#
    );
    crate::pipeline::Pipeline::from_json_str(&doc, "test").unwrap()
}

/// Lines of words with accents, CJK, punctuation and line ends of every kind, long enough
/// (> 1 MB) that a file is counted in several parts cut at safe points.
fn mixed_text() -> String {
    let words = [
        "Héllo",
        "WORLD",
        "naïve",
        "日本語",
        "x,y",
        "don't",
        "a\u{301}b",
        "…",
        "ok.",
        "Ωmega",
    ];
    let mut text = String::new();
    let mut k = 0usize;
    while text.len() < (3 << 20) / 2 {
        for j in 0..(k % 7 + 1) {
            text.push_str(words[(k * 7 + j * 3) % words.len()]);
            text.push(if j % 3 == 2 { '\t' } else { ' ' });
        }
        text.push_str(["\n", ".\n", "!\n\n", "\r\n"][k % 4]);
        k += 1;
    }
    text
}

/// `Pipeline::has_safe_cuts` is the licence to count a long text in parallel parts: where it
/// says yes, the parts' counts must be the whole text's, word for word and count for count.
#[test]
fn safe_cut_pipelines_count_in_parts_as_whole() {
    let text = mixed_text();
    let bert = r#"{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                   "strip_accents": null, "lowercase": true}"#;
    let cases = [
        (bert, r#"{"type": "BertPreTokenizer"}"#, true),
        (r#"{"type": "NFKC"}"#, r#"{"type": "Whitespace"}"#, true),
        (
            r#"{"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}]}"#,
            r#"{"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                {"type": "Punctuation", "behavior": "Isolated"}, {"type": "Digits"}]}"#,
            true,
        ),
        (
            "null",
            r#"{"type": "Punctuation", "behavior": "Isolated"}"#,
            false,
        ),
        (
            r#"{"type": "Prepend", "prepend": "_"}"#,
            r#"{"type": "WhitespaceSplit"}"#,
            false,
        ),
    ];
    let dir = std::env::temp_dir().join(format!("subword-safe-cuts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mixed.txt");
    std::fs::write(&path, &text).unwrap();
    for (normalizer, pre_tokenizer, safe) in cases {
        let pipeline = counting_pipeline(normalizer, pre_tokenizer);
        assert_eq!(
            pipeline.has_safe_cuts(),
            safe,
            "{normalizer} {pre_tokenizer}"
        );
        let mut whole: std::collections::HashMap<String, u64> = Default::default();
        pipeline
            .for_each_word(&text, |w, _| *whole.entry(w.to_string()).or_default() += 1)
            .unwrap();
        let splitter = Splitter::Pipeline(Box::new(pipeline));
        let mut counter = PreTokenCounter::with_splitter(splitter, &[]).unwrap();
        feed_file(&mut counter, &path, false, 2).unwrap();
        let parts: std::collections::HashMap<String, u64> = counter
            .into_counts()
            .into_iter()
            .map(|(w, (n, _))| (String::from_utf8(w.into_vec()).unwrap(), n))
            .collect();
        assert_eq!(parts, whole, "{normalizer} {pre_tokenizer}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
