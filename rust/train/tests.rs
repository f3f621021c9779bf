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
    let (counts, pattern) = counter.into_parts();
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
