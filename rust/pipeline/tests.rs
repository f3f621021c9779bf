//! The byte-level fast path with a piece cache (`models/byte_pieces.rs`, `encode_cached`) gives
//! what the per-piece path (`byte_words.rs`) gives: ids, offsets and words, on random text with
//! multi-byte chars, a space put first or not, and added tokens cutting the stretches. Both
//! paths are checked against HF `tokenizers` in tests/test_bpe_model.py and
//! tests/test_open_models.py; this pins the two to each other on text no corpus has.

use super::*;
use crate::formats::byte_unicode::byte_char;
use crate::models::{Bpe, BpeOptions};
use crate::pre_tokenizers::ByteLevelOptions;
use rustc_hash::FxHashMap;

/// A byte-level BPE: the 256 byte chars, then `n` merges of the most frequent adjacent pair in
/// `corpus`'s GPT-2 pieces (a naive trainer: the tokens only need to be plausible).
fn byte_level_bpe(corpus: &str, n: usize) -> (FxHashMap<String, u32>, Vec<(String, String)>) {
    let mut vocab: FxHashMap<String, u32> = (0..=255u8)
        .map(|b| (byte_char(b).to_string(), b as u32))
        .collect();
    let mut words: Vec<Vec<String>> = corpus
        .split_inclusive(' ')
        .map(|w| w.bytes().map(|b| byte_char(b).to_string()).collect())
        .collect();
    let mut merges = Vec::new();
    for _ in 0..n {
        let mut counts: FxHashMap<(String, String), usize> = FxHashMap::default();
        for w in &words {
            for p in w.windows(2) {
                *counts.entry((p[0].clone(), p[1].clone())).or_default() += 1;
            }
        }
        let Some((best, _)) = counts
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        else {
            break;
        };
        let made = format!("{}{}", best.0, best.1);
        let next = vocab.len() as u32;
        vocab.entry(made.clone()).or_insert(next);
        for w in &mut words {
            let mut k = 0;
            while k + 1 < w.len() {
                if w[k] == best.0 && w[k + 1] == best.1 {
                    w[k] = made.clone();
                    w.remove(k + 1);
                }
                k += 1;
            }
        }
        merges.push(best);
    }
    (vocab, merges)
}

fn pipeline(bpe: Bpe, prefix_space: bool, added: &[&str]) -> Pipeline {
    let mut p = Pipeline::new(Model::Bpe(Arc::new(bpe)));
    p.pre_tokenizer = Some(PreTokenizer::ByteLevel(ByteLevelOptions {
        add_prefix_space: prefix_space,
        trim_offsets: false,
        use_regex: true,
    }));
    let first = p.model.vocab_size() as u32;
    let tokens = (first..)
        .zip(added)
        .map(|(id, t)| (id, AddedToken::new(t, false)))
        .collect();
    p.with_added(tokens).unwrap()
}

fn random_text(rng: &mut fastrand::Rng) -> String {
    // Pieces of every cache's size: up to 31 bytes, long ones (32-512) and longer runs.
    const PARTS: [&str; 16] = [
        "the", " the", " and", "in", " ", "  ", "\n", "é", "한국어", "👋🏽", "'s", "123", "<x>", "ǅ",
        " supercalifragilisticexpialidociousness",
        "한국어한국어한국어한국어한국어한국어한국어한국어한국어한국어한국어한국어한국어한국어한국어",
    ];
    (0..rng.usize(0..40))
        .map(|_| PARTS[rng.usize(..PARTS.len())])
        .collect()
}

#[test]
fn the_cached_path_gives_the_per_piece_paths_tokens() {
    let corpus = "the cat and the hat in the hall, the end. 한국어 텍스트 é é 👋🏽 ".repeat(20);
    let (vocab, merges) = byte_level_bpe(&corpus, 120);
    let model = || {
        Bpe::new(
            vocab.clone(),
            merges.clone(),
            BpeOptions::default(),
            None,
            100,
        )
    };
    let mut rng = fastrand::Rng::with_seed(11);
    for prefix_space in [false, true] {
        for added in [&[][..], &["<x>", "and"][..]] {
            let cached = pipeline(model().unwrap(), prefix_space, added);
            let plain = model().unwrap().without_byte_pieces();
            let per_piece = pipeline(plain, prefix_space, added);
            assert!(cached.model.byte_level().is_some());
            assert!(per_piece.model.byte_level().is_none());
            for _ in 0..300 {
                let text = random_text(&mut rng);
                // Twice: the second call reads what the first put in the cache.
                for _ in 0..2 {
                    let a = cached.encode(&text, None, false).unwrap();
                    let b = per_piece.encode(&text, None, false).unwrap();
                    assert_eq!(a, b, "{text:?} prefix_space={prefix_space} added={added:?}");
                }
            }
        }
    }
}

fn bert_pipeline(lowercase: bool, strip_accents: Option<bool>, general: bool) -> Pipeline {
    let mut tokens: Vec<String> = [
        "[UNK]", "[CLS]", "the", "##s", "é", "##é", "un", "##aff", "##able",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    tokens.extend(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.!한국"
            .chars()
            .flat_map(|c| [c.to_string(), format!("##{c}")]),
    );
    let model = crate::wordpiece::WordPiece::new(tokens, "[UNK]", "##", 12).unwrap();
    let mut p = Pipeline::new(Model::WordPiece(Arc::new(model)));
    p.normalizer = Some(Normalizer::Bert {
        clean_text: true,
        handle_chinese_chars: true,
        strip_accents,
        lowercase,
    });
    // A Sequence of the one pre-tokenizer cuts alike but is not BERT's shape.
    p.pre_tokenizer = Some(if general {
        PreTokenizer::Sequence(vec![PreTokenizer::Bert])
    } else {
        PreTokenizer::Bert
    });
    p.with_added(vec![(1, AddedToken::new("[CLS]", true))])
        .unwrap()
}

/// BERT's stages by the WordPiece tokenizer's path (`bert_stages`) give what the general
/// stages give: ids, char offsets (accents stripped, control chars dropped, CJK isolated) and
/// words, around added tokens.
#[test]
fn the_bert_path_gives_the_general_paths_tokens() {
    const PARTS: [&str; 16] = [
        "the",
        " The",
        "s",
        "Unaffable",
        " ",
        "\t",
        "\n",
        "é",
        "É",
        "e\u{301}",
        "한국어",
        "中文",
        "\u{0}",
        ",!",
        "[CLS]",
        "xxxxxxxxxxxxxxx",
    ];
    let mut rng = fastrand::Rng::with_seed(5);
    for (lowercase, strip) in [
        (true, None),
        (false, None),
        (true, Some(false)),
        (false, Some(true)),
    ] {
        let fast = bert_pipeline(lowercase, strip, false);
        let general = bert_pipeline(lowercase, strip, true);
        assert!(fast.bert_stages().is_some() && general.bert_stages().is_none());
        for _ in 0..400 {
            let text: String = (0..rng.usize(0..30))
                .map(|_| PARTS[rng.usize(..PARTS.len())])
                .collect();
            let a = fast.encode_full(Input::Text(&text), None, true).unwrap();
            let b = general.encode_full(Input::Text(&text), None, true).unwrap();
            assert_eq!(a.main.enc, b.main.enc, "{text:?}");
            assert_eq!(a.strings, b.strings, "{text:?}");
        }
    }
}
