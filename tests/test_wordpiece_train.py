"""WordPiece training: ``trainers.WordPieceTrainer`` through ``Tokenizer.train`` /
``train_from_iterator``.

The oracle is ``naive_trainers.naive_wordpiece``, written from the spec: at every step recount
every symbol and every adjacent pair of every word, score each pair by likelihood,
count(ab) / (count(a) * count(b)), compared exactly as fractions, then by count(ab), then by the
tie-break, and merge the best one everywhere, left to right. Its words come from HF ``tokenizers``
(BertNormalizer + BertPreTokenizer), the oracle for normalization and pre-tokenization.

A trained tokenizer must also be a valid BERT-style WordPiece tokenizer: HF loads the saved
tokenizer.json and encodes text to the same ids (HF's WordPiece model encodes longest-match
first).

Environment: SUBWORD_TRAINING_EXAMPLES sets the number of hypothesis examples per property;
otherwise it is min(the suite's number, 200 locally / 600 with CI=true).
"""

from __future__ import annotations

import os
import random
from contextlib import nullcontext
from pathlib import Path

import pytest
import refdata
import textgen
import tokenizers
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_trainers import (
    BERT_SPECIALS,
    TIE_BREAKS,
    bert_words,
    naive_wordpiece,
    wordpiece_alphabet,
)
from subword import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

N = int(
    os.environ.get("SUBWORD_TRAINING_EXAMPLES")
    or min(refdata.hypothesis_examples(), 600 if refdata.in_ci() else 200)
)
BIG = 100_000  # a vocab_size nothing here reaches


def make_tokenizer(**normalizer_kwargs) -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(**normalizer_kwargs)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def make_trainer(vocab_size, special_tokens=None, **kwargs):
    if special_tokens is not None:
        kwargs["special_tokens"] = list(special_tokens)
    return trainers.WordPieceTrainer(vocab_size=vocab_size, show_progress=False, **kwargs)


def train_wp(texts, vocab_size, normalizer=None, special_tokens=None, **kwargs):
    """(tokenizer, trainer) after training on `texts` (each a document)."""
    tok = make_tokenizer(**(normalizer or {}))
    trainer = make_trainer(vocab_size, special_tokens, **kwargs)
    tok.train_from_iterator(iter(texts), trainer)
    return tok, trainer


def vocab_list(tok) -> list[str]:
    """tok.get_vocab() as a list of tokens by id (the ids must be 0..n-1)."""
    vocab = tok.get_vocab()
    by_id = sorted(vocab.items(), key=lambda kv: kv[1])
    assert [i for _, i in by_id] == list(range(len(vocab))), "ids are not 0..n-1"
    return [t for t, _ in by_id]


def first_difference(got, want) -> int:
    return next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))


def assert_matches_naive(
    tok,
    trainer,
    words,
    vocab_size,
    min_frequency=0,
    limit_alphabet=None,
    special_tokens=None,
    tie_break="lexicographic",
):
    """`tok` and `trainer` hold exactly what naive_wordpiece learns from `words`."""
    specials = BERT_SPECIALS if special_tokens is None else special_tokens
    want_vocab, want_merges = naive_wordpiece(
        words, vocab_size, min_frequency, limit_alphabet, specials, tie_break
    )
    settings_text = (
        f"tie_break={tie_break}, min_frequency={min_frequency}, limit_alphabet={limit_alphabet}, "
        f"vocab_size={vocab_size}, {len(words)} distinct words: {list(words.items())[:12]}"
    )
    got = list(trainer.merges)
    if got != want_merges:
        i = first_difference(got, want_merges)
        raise AssertionError(
            f"merges differ at step {i} ({settings_text})\n"
            f"  subword: {got[max(0, i - 2) : i + 3]} ({len(got)} merges)\n"
            f"  naive  : {want_merges[max(0, i - 2) : i + 3]} ({len(want_merges)} merges)"
        )
    vocab = vocab_list(tok)
    if vocab != want_vocab:
        i = first_difference(vocab, want_vocab)
        raise AssertionError(
            f"vocab differs at id {i} ({settings_text})\n"
            f"  subword: {vocab[max(0, i - 2) : i + 3]} ({len(vocab)} tokens)\n"
            f"  naive  : {want_vocab[max(0, i - 2) : i + 3]} ({len(want_vocab)} tokens)"
        )
    assert len(vocab) <= vocab_size
    return want_vocab, want_merges


def initial_pair_counts(words) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for w, c in words.items():
        syms = [w[0]] + ["##" + ch for ch in w[1:]]
        for p in zip(syms, syms[1:]):
            counts[p] = counts.get(p, 0) + c
    return counts


# --------------------------------------------------------------------------------------------
# the naive trainer on cases worked by hand


def test_naive_by_hand():
    # t, ##h, ##e occur 50 times each: (t,##h) and (##h,##e) score 50/2500; (q,##z) scores 1/1.
    vocab, merges = naive_wordpiece({"qz": 1, "the": 50}, BIG, special_tokens=["[UNK]"])
    assert merges == [("q", "##z"), ("t", "##h"), ("th", "##e")]
    assert vocab == ["[UNK]", "e", "h", "q", "t", "z", "##e", "##h", "##q", "##t", "##z"] + [
        "qz",
        "th",
        "the",
    ]
    # limit_alphabet=2 keeps a, b (6 each; x has 4): "abxab" -> [a, ##b] [##a, ##b], "xyz" -> [].
    # Both pairs score 3 / (3 * 6); equal counts; ("a","##b") is the greater and the first.
    for tie_break in TIE_BREAKS:
        vocab, merges = naive_wordpiece({"abxab": 3, "xyz": 1}, BIG, 0, 2, [], tie_break=tie_break)
        assert merges == [("a", "##b"), ("##a", "##b")]
        assert vocab == ["a", "b", "##a", "##b", "ab", "##ab"]
    # equal scores and counts: lexicographic takes ("b","##a"), first takes ("a","##b")
    assert naive_wordpiece({"ab": 1, "ba": 1}, BIG, 0, None, [], "lexicographic")[1] == [
        ("b", "##a"),
        ("a", "##b"),
    ]
    assert naive_wordpiece({"ab": 1, "ba": 1}, BIG, 0, None, [], "first")[1] == [
        ("a", "##b"),
        ("b", "##a"),
    ]
    # limit_alphabet ties: lower code point first
    assert wordpiece_alphabet({"cab": 1}, 2) == ["a", "b"]
    assert wordpiece_alphabet({"cab": 1, "c": 1}, 1) == ["c"]
    with pytest.raises(ValueError):
        naive_wordpiece({"abc": 1}, 5 + 5, special_tokens=BERT_SPECIALS)


def test_bert_words_normalize_and_split():
    words = bert_words(["Héllo, WORLD! 中文 [UNK] [unk]", "hello"])
    assert words == {
        "hello": 2,
        ",": 1,
        "world": 1,
        "!": 1,
        "中": 1,
        "文": 1,
        "[": 1,
        "unk": 1,
        "]": 1,
    }
    assert bert_words(["Héllo"], lowercase=False) == {"Héllo": 1}


# --------------------------------------------------------------------------------------------
# likelihood, not frequency


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_likelihood_beats_frequency(tie_break):
    # "the" is frequent: (t,##h) and (##h,##e) occur 60 times but t, ##h, ##e are everywhere,
    # so they score 60 / (60 * 60). q and ##z are rare but always together: 3 / (3 * 3).
    texts = ["the cat saw the dog " * 20, "qz " * 3, "then they ate the theme"]
    words = bert_words(texts)
    counts = initial_pair_counts(words)
    by_count = max(counts, key=counts.__getitem__)
    assert by_count in {("t", "##h"), ("##h", "##e")}
    vocab_size = len(BERT_SPECIALS) + 2 * len(wordpiece_alphabet(words)) + 10
    tok, trainer = train_wp(texts, vocab_size, tie_break=tie_break)
    assert trainer.merges[0] == ("q", "##z")
    assert trainer.merges[0] != by_count
    assert_matches_naive(tok, trainer, words, vocab_size, tie_break=tie_break)


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
@pytest.mark.parametrize("min_frequency", [0, 2, 4])
def test_likelihood_with_min_frequency(tie_break, min_frequency):
    # (x,##y) occurs 3 times and scores 3 / (3 * 3); with min_frequency=4 it is not eligible and
    # a frequent pair comes first.
    texts = ["xy xy xy", "the the the then them there these the the the"]
    words = bert_words(texts)
    vocab_size = len(BERT_SPECIALS) + 2 * len(wordpiece_alphabet(words)) + 6
    tok, trainer = train_wp(texts, vocab_size, min_frequency=min_frequency, tie_break=tie_break)
    _, merges = assert_matches_naive(
        tok, trainer, words, vocab_size, min_frequency=min_frequency, tie_break=tie_break
    )
    assert (merges[0] == ("x", "##y")) == (min_frequency <= 3)


# --------------------------------------------------------------------------------------------
# hand corpora

HAND_CORPORA = {
    "textbook": ["low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3],
    "mixed": [
        "Hello, World! Héllo again, HELLO world.",
        "Naïve café — CAFÉ résumé? Ünïcödé!",
        "中文字符 and 日本語 text, 한국어 텍스트 (Hangul decomposes under NFD).",
        "[CLS] special tokens are just text [SEP] [MASK] [unk]",
        "don't won't can't it's O'Neil's x.y.z a-b-c 1,000.50 3.14",
    ],
    "repeats": ["aaaa aaa aa a aaaaa", "abab baba abba", "aaaa"],
    "one_word": ["supercalifragilisticexpialidocious"],
    "controls": ["a\x00b\u200bc\td\re\nf\u00a0g\u3000h\ufeffi \x85j \u2028k"],
    "empty": ["", "   ", "\n"],
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # the "empty" corpus
@pytest.mark.parametrize("name", list(HAND_CORPORA))
@pytest.mark.parametrize("tie_break", TIE_BREAKS)
@pytest.mark.parametrize("min_frequency", [0, 2, 3])
@pytest.mark.parametrize("limit_alphabet", [None, 3])
@pytest.mark.parametrize("n_merges", [0, 5, 60])
def test_hand_corpora(name, tie_break, min_frequency, limit_alphabet, n_merges):
    texts = HAND_CORPORA[name]
    words = bert_words(texts)
    vocab_size = len(BERT_SPECIALS) + 2 * len(wordpiece_alphabet(words, limit_alphabet)) + n_merges
    tok, trainer = train_wp(
        texts,
        vocab_size,
        min_frequency=min_frequency,
        limit_alphabet=limit_alphabet,
        tie_break=tie_break,
    )
    assert_matches_naive(
        tok, trainer, words, vocab_size, min_frequency, limit_alphabet, None, tie_break
    )


@pytest.mark.parametrize(
    "normalizer",
    [
        {},
        {"lowercase": False},
        {"lowercase": True, "strip_accents": False},
        {"lowercase": False, "strip_accents": True},
        {"handle_chinese_chars": False},
        {"clean_text": False},
    ],
)
def test_normalizer_settings_are_used(normalizer):
    texts = HAND_CORPORA["mixed"] + HAND_CORPORA["controls"]
    words = bert_words(texts, **normalizer)
    vocab_size = len(BERT_SPECIALS) + 2 * len(wordpiece_alphabet(words)) + 40
    tok, trainer = train_wp(texts, vocab_size, normalizer=normalizer)
    assert_matches_naive(tok, trainer, words, vocab_size)


@pytest.mark.parametrize("specials", [["[UNK]"], ["<s>", "[UNK]", "</s>"], BERT_SPECIALS])
def test_special_tokens_come_first(specials):
    texts = HAND_CORPORA["mixed"]
    words = bert_words(texts, specials)
    vocab_size = len(specials) + 2 * len(wordpiece_alphabet(words)) + 20
    tok, trainer = train_wp(texts, vocab_size, special_tokens=specials)
    vocab, _ = assert_matches_naive(tok, trainer, words, vocab_size, special_tokens=specials)
    assert vocab[: len(specials)] == specials
    # a special token of the trainer is cut out of the text; otherwise "[SEP]" is "[", "sep", "]"
    assert ("sep" in words) == ("[SEP]" not in specials)
    assert "[sep]" not in vocab


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_special_tokens_in_the_text_are_cut_out(tie_break):
    # The trainer's special tokens are cut out of the text first (as in byte-level BPE
    # training): "[MASK]" adds nothing, so m, a, s, k occur once, b twice, and
    # limit_alphabet=1 keeps "b". Lowercase "[mask]" is not the special token: it is text.
    texts = ["[MASK] mask b b"]
    words = bert_words(texts)
    assert words == {"mask": 1, "b": 2}
    tok, trainer = train_wp(texts, BIG, limit_alphabet=1, tie_break=tie_break)
    vocab, _ = assert_matches_naive(tok, trainer, words, BIG, 0, 1, None, tie_break)
    assert vocab == BERT_SPECIALS + ["b", "##b"]
    texts = ["[mask]"]
    tok, trainer = train_wp(texts, BIG, tie_break=tie_break)
    vocab, _ = assert_matches_naive(tok, trainer, bert_words(texts), BIG, tie_break=tie_break)
    assert "mask" in vocab


def test_vocab_size_exactly_the_alphabet():
    texts = ["abc cab"]
    tok, trainer = train_wp(texts, 5 + 6)
    assert trainer.merges == []
    assert vocab_list(tok) == BERT_SPECIALS + ["a", "b", "c", "##a", "##b", "##c"]


# --------------------------------------------------------------------------------------------
# hypothesis: subword == naive

FIXED_PIECES = [
    "the", "The", "THE", "café", "CAFÉ", "cafe\u0301", "naïve", "Ünï", "ß", "ﬁ", "Ⅻ",
    "中", "中文", "日本語", "한", "한국어", "각", "[UNK]", "[MASK]", "don't", "x.y", "a,b", "...",
    "!?", "\x00", "\u200b", "ab\u00adcd", "\u0301", "é", "É",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", "\n", "\t", "  ", "\u3000", "\xa0", "\r\n", ""]
piece = st.one_of(
    st.text("aabbcAB", min_size=1, max_size=7),
    st.text("abéÉü中한국,.!'", min_size=1, max_size=5),
    st.sampled_from(FIXED_PIECES),
)
NORMALIZERS = [
    {},
    {},
    {"lowercase": False},
    {"lowercase": True, "strip_accents": False},
    {"lowercase": False, "strip_accents": True},
    {"handle_chinese_chars": False},
    {"clean_text": False},
]
# The model's unk_token ("[UNK]") must be among the special tokens (subword raises otherwise).
SPECIAL_LISTS = [None, None, ["[UNK]"], ["[UNK]", "<s>"], ["<s>", "</s>", "[UNK]"]]


@st.composite
def small_corpus(draw):
    """A few documents from a small pool of pieces, so words and pairs repeat."""
    pool = draw(st.lists(piece, min_size=1, max_size=8))
    parts = st.tuples(st.sampled_from(pool), st.sampled_from(SEPARATORS))
    n_docs = draw(st.integers(1, 5))  # the empty corpus is a hand case
    return [
        "".join(p + s for p, s in draw(st.lists(parts, min_size=1, max_size=24)))
        for _ in range(n_docs)
    ]


WORD_CHARS = "aaabbbccdeAB" + "éÉüß" + "中文한국" + ",.!'"


@st.composite
def random_corpus(draw):
    """Bigger documents (hypothesis keeps drawn structures small): up to 80 words each, from a
    random pool of up to 16 random words and fixed pieces; plain `random` from a drawn seed."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    pool = [
        "".join(rng.choice(WORD_CHARS) for _ in range(rng.randint(1, 8)))
        for _ in range(rng.randint(2, 12))
    ]
    pool += rng.sample(FIXED_PIECES, rng.randint(0, 4))
    return [
        "".join(rng.choice(pool) + rng.choice(SEPARATORS) for _ in range(rng.randint(1, 80)))
        for _ in range(rng.randint(1, 4))
    ]


wp_corpus = st.one_of(small_corpus(), random_corpus())


@st.composite
def wp_setup(draw):
    docs = draw(wp_corpus)
    normalizer = draw(st.sampled_from(NORMALIZERS))
    specials = draw(st.sampled_from(SPECIAL_LISTS))
    limit_alphabet = draw(st.sampled_from([None, None, None, 1, 3, 6, 10]))
    words = bert_words(docs, specials, **normalizer)
    n_specials = len(BERT_SPECIALS if specials is None else specials)
    base = n_specials + 2 * len(wordpiece_alphabet(words, limit_alphabet))
    return dict(
        docs=docs,
        words=words,
        normalizer=normalizer,
        special_tokens=specials,
        limit_alphabet=limit_alphabet,
        min_frequency=draw(st.sampled_from([0, 0, 1, 2, 3])),
        tie_break=draw(st.sampled_from(TIE_BREAKS)),
        vocab_size=base + draw(st.integers(1, 60)),  # 0 new tokens is a hand case
    )


@settings(max_examples=N)
@given(setup=wp_setup())
def test_matches_naive(setup):
    s = setup
    # A corpus with no words at all must say so; otherwise training is silent.
    expect = pytest.warns(UserWarning, match="empty") if not s["words"] else nullcontext()
    with expect:
        tok, trainer = train_wp(
            s["docs"],
            s["vocab_size"],
            normalizer=s["normalizer"],
            special_tokens=s["special_tokens"],
            min_frequency=s["min_frequency"],
            limit_alphabet=s["limit_alphabet"],
            tie_break=s["tie_break"],
        )
    assert_matches_naive(
        tok,
        trainer,
        s["words"],
        s["vocab_size"],
        s["min_frequency"],
        s["limit_alphabet"],
        s["special_tokens"],
        s["tie_break"],
    )


@settings(max_examples=max(25, N // 8))
@given(setup=wp_setup())
def test_files_match_iterator(setup, tmp_path_factory):
    s = setup
    d = tmp_path_factory.mktemp("docs")
    paths = []
    for i, doc in enumerate(s["docs"]):
        p = d / f"doc{i}.txt"
        p.write_bytes(doc.encode("utf-8"))  # binary: no newline translation
        paths.append(str(p))
    kwargs = {k: s[k] for k in ("special_tokens", "min_frequency", "limit_alphabet", "tie_break")}
    tok = make_tokenizer(**s["normalizer"])
    trainer = make_trainer(s["vocab_size"], **kwargs)
    tok.train(paths, trainer)
    assert_matches_naive(
        tok,
        trainer,
        s["words"],
        s["vocab_size"],
        s["min_frequency"],
        s["limit_alphabet"],
        s["special_tokens"],
        s["tie_break"],
    )


# --------------------------------------------------------------------------------------------
# slices of real text


def corpus_slice(path: Path, size: int = 30_000) -> str:
    with open(path, "rb") as f:
        data = f.read(size)
    text = data.decode("utf-8", errors="ignore")
    return text[: text.rfind("\n") + 1] or text


CORPUS_CASES = [
    # (tie_break, min_frequency, limit_alphabet, new tokens)
    ("lexicographic", 0, None, 80),
    ("first", 2, 40, 60),
]


@pytest.mark.corpora
@pytest.mark.parametrize("name", [p.name for p in refdata.corpora_files()])
@pytest.mark.parametrize("case", CORPUS_CASES)
def test_real_text_matches_naive(corpora, name, case):
    tie_break, min_frequency, limit_alphabet, n_merges = case
    text = corpus_slice(next(p for p in corpora if p.name == name))
    words = bert_words([text])
    vocab_size = len(BERT_SPECIALS) + 2 * len(wordpiece_alphabet(words, limit_alphabet)) + n_merges
    tok, trainer = train_wp(
        [text],
        vocab_size,
        min_frequency=min_frequency,
        limit_alphabet=limit_alphabet,
        tie_break=tie_break,
    )
    assert_matches_naive(
        tok, trainer, words, vocab_size, min_frequency, limit_alphabet, None, tie_break
    )


# --------------------------------------------------------------------------------------------
# determinism

TRAIN_DOCS = [
    "The quick brown fox jumps over the lazy dog. " * 3,
    "Hello, world! It's 2024 and we'll see 1234567 things.\n\n",
    "한국어 텍스트도 조금 있습니다. 안녕하세요!\n",
    "naïve café résumé — «quotes» … Ünïcödé\n",
    "def f(x):\n    return x + 1\n\n",
    "中文字符和日本語のテキスト。\n",
    "Unbelievable, unbreakable, unthinkable: the undoing of understanding.\n",
] * 10


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_same_result_twice(tie_break):
    runs = []
    for _ in range(2):
        tok, trainer = train_wp(TRAIN_DOCS, 400, tie_break=tie_break)
        runs.append((vocab_list(tok), list(trainer.merges), tok.to_str()))
    assert runs[0] == runs[1]


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_train_file_equals_iterator(tmp_path, tie_break):
    text = "".join(TRAIN_DOCS)
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    tok_f = make_tokenizer()
    trainer_f = make_trainer(400, tie_break=tie_break)
    tok_f.train([str(path)], trainer_f)
    tok_i, trainer_i = train_wp([text], 400, tie_break=tie_break)
    assert trainer_f.merges == trainer_i.merges
    assert vocab_list(tok_f) == vocab_list(tok_i)
    # ...and both are what the naive trainer learns
    words = bert_words([text])
    assert_matches_naive(tok_f, trainer_f, words, 400, tie_break=tie_break)
    # lines as documents: the same words in the same order
    tok_l, trainer_l = train_wp(text.splitlines(keepends=True), 400, tie_break=tie_break)
    assert trainer_l.merges == trainer_i.merges


# --------------------------------------------------------------------------------------------
# outputs: vocab.txt, tokenizer.json that HF reads


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A trained BERT-style tokenizer (with post-processor and decoder), its saved
    tokenizer.json loaded by HF, and the folder."""
    tok, trainer = train_wp(TRAIN_DOCS, 300)
    assert len(vocab_list(tok)) == 300  # the corpus is rich enough to fill the vocabulary
    tok.decoder = decoders.WordPiece()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    d = tmp_path_factory.mktemp("wp")
    path = d / "tokenizer.json"
    tok.save(str(path))
    hf = tokenizers.Tokenizer.from_file(str(path))
    return tok, hf, d


def test_model_save_writes_vocab_txt(trained, tmp_path):
    tok = trained[0]
    files = tok.model.save(str(tmp_path))
    assert [Path(f) for f in files] == [tmp_path / "vocab.txt"]
    lines = (tmp_path / "vocab.txt").read_text(encoding="utf-8").split("\n")
    if lines[-1] == "":
        lines.pop()
    assert lines == vocab_list(tok)
    # HF reads it back as the same vocabulary
    hf_model = tokenizers.models.WordPiece.from_file(str(tmp_path / "vocab.txt"), unk_token="[UNK]")
    assert tokenizers.Tokenizer(hf_model).get_vocab() == tok.get_vocab()
    back = Tokenizer(models.WordPiece.from_file(str(tmp_path / "vocab.txt"), unk_token="[UNK]"))
    back.normalizer = normalizers.BertNormalizer()
    back.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    assert vocab_list(back) == vocab_list(tok)
    for text in TRAIN_DOCS[:7]:
        assert (
            back.encode(text, add_special_tokens=False).ids
            == tok.encode(text, add_special_tokens=False).ids
        )


def test_saved_json_loads_in_hf(trained):
    tok, hf, _ = trained
    assert hf.get_vocab() == tok.get_vocab()
    model = hf.model
    assert isinstance(model, tokenizers.models.WordPiece)
    assert model.unk_token == "[UNK]"
    assert model.continuing_subword_prefix == "##"


def without_surrogates(text: str) -> str:
    return "".join(c for c in text if not 0xD800 <= ord(c) <= 0xDFFF)


hf_texts = st.one_of(
    textgen.texts,
    wp_corpus.map(" ".join),
    st.text("ab", min_size=99, max_size=102),  # max_input_chars_per_word = 100
    st.sampled_from(TRAIN_DOCS[:7]),
).map(without_surrogates)


@settings(max_examples=N)
@given(text=hf_texts)
def test_hf_encodes_the_same_ids(trained, text):
    tok, hf, _ = trained
    want = hf.encode(text, add_special_tokens=False)
    got = tok.encode(text, add_special_tokens=False)
    assert got.ids == want.ids
    assert got.tokens == want.tokens


@settings(max_examples=max(25, N // 4))
@given(text=hf_texts)
def test_hf_offsets(trained, text):
    tok, hf, _ = trained
    want = hf.encode(text, add_special_tokens=False)
    got = tok.encode(text, add_special_tokens=False)
    assert got.offsets == want.offsets


@settings(max_examples=max(25, N // 4))
@given(a=hf_texts, b=hf_texts)
def test_hf_post_processing_and_decoding(trained, a, b):
    tok, hf, _ = trained
    for got, want in [(tok.encode(a), hf.encode(a)), (tok.encode(a, b), hf.encode(a, b))]:
        assert got.ids == want.ids
        assert got.type_ids == want.type_ids
        assert got.special_tokens_mask == want.special_tokens_mask
        assert tok.decode(got.ids) == hf.decode(want.ids)


# --------------------------------------------------------------------------------------------
# errors


def test_vocab_size_too_small():
    texts = ["abc cab"]  # 3 chars: 5 specials + 6 alphabet tokens = 11
    with pytest.raises(ValueError):
        train_wp(texts, 10)
    with pytest.raises(ValueError):
        train_wp(texts, 6, special_tokens=["[UNK]"])
    train_wp(texts, 7, special_tokens=["[UNK]"])
    train_wp(texts, 11)  # exactly enough


def test_bogus_tie_break():
    with pytest.raises(ValueError):
        train_wp(["abc cab"], 100, tie_break="bogus")


def test_missing_training_file(tmp_path):
    tok = make_tokenizer()
    with pytest.raises(FileNotFoundError):
        tok.train([str(tmp_path / "no_such_file.txt")], make_trainer(100))
