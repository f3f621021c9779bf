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
