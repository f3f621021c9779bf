"""``subword.tokenizers.trainers`` and ``Tokenizer.train`` / ``train_from_iterator``: the
words counted by the tokenizer's own pipeline (HF's normalizers and pre-tokenizers are the
oracle for that), BPE learned as the naive reference trainer in ``naive_trainers.py`` learns it
(every HF option: limit and initial alphabet, prefix, suffix, max_token_length,
min_frequency), WordLevel equal to HF's trainer, WordPiece equal to the naive likelihood
trainer, files read as HF reads them, the trained tokenizer written to a tokenizer.json that HF
reads to the same encodings; and the trainers' API (attributes, HF's pickled form, errors)
against HF's trainers."""

from __future__ import annotations

import copy
import json
import pickle
import re

import naive_trainers as naive
import pytest
import subword.tokenizers as ours
import test_bpe_model
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st

CORPUS = test_bpe_model.CORPUS


def _stages(lib, kind):
    if kind == "whitespace":
        return lib.normalizers.Lowercase(), lib.pre_tokenizers.Whitespace()
    if kind == "byte_level":
        return None, lib.pre_tokenizers.ByteLevel(add_prefix_space=True)
    return lib.normalizers.NFKC(), lib.pre_tokenizers.Metaspace()


def _words(kind, texts, specials=()):
    """The words HF's stages give, counted, in order of first appearance; specials cut out."""
    norm, pre = _stages(hf, kind)
    cut = re.compile("|".join(re.escape(t) for t in sorted(specials, key=len, reverse=True)))
    counts: dict[str, int] = {}
    for text in texts:
        for part in cut.split(text) if specials else [text]:
            if not part:
                continue
            normalized = norm.normalize_str(part) if norm else part
            for w, _ in pre.pre_tokenize_str(normalized):
                counts[w] = counts.get(w, 0) + 1
    return counts


def _tokenizer(kind, model):
    tok = ours.Tokenizer(model)
    tok.normalizer, tok.pre_tokenizer = _stages(ours, kind)
    return tok


def _model_state(tok):
    m = tok.model
    return {t: i for t, i in m.vocab.items()}, [tuple(x) for x in getattr(m, "merges", [])]


BPE_OPTIONS = {
    "plain": {},
    "prefix": {"continuing_subword_prefix": "##"},
    "suffix": {"end_of_word_suffix": "</w>"},
    "both": {"continuing_subword_prefix": "@@", "end_of_word_suffix": "</w>"},
    "alphabet": {"limit_alphabet": 30, "initial_alphabet": ["q", "ж", "😀"]},
    "max_length": {"max_token_length": 3, "min_frequency": 2},
}


@pytest.mark.parametrize("kind", ["whitespace", "byte_level", "metaspace"])
@pytest.mark.parametrize("option", sorted(BPE_OPTIONS))
def test_bpe_learns_what_the_naive_trainer_learns(kind, option):
    opts = BPE_OPTIONS[option]
    specials = ["[UNK]", "<|eot|>"]
    texts = [line + " <|eot|>" for line in CORPUS]
    tok = _tokenizer(kind, ours.models.BPE(unk_token="[UNK]"))
    trainer = ours.trainers.BpeTrainer(
        vocab_size=400, special_tokens=specials, show_progress=False, **opts
    )
    tok.train_from_iterator(texts, trainer)
    vocab, merges = naive.naive_char_bpe(
        _words(kind, texts, specials), 400, special_tokens=specials, **opts
    )
    got_vocab, got_merges = _model_state(tok)
    assert got_merges == merges
    assert got_vocab == {t: i for i, t in enumerate(vocab)}
    # The specials became added tokens; the text round-trips through the new model.
    assert tok.encode("<|eot|>").tokens == ["<|eot|>"]
    assert tok.get_added_tokens_decoder()[1].content == "<|eot|>"


@settings(max_examples=25, deadline=None)
@given(
    texts=st.lists(st.text(alphabet="abcab cdé\n", max_size=30), max_size=20),
    vocab_size=st.integers(min_value=0, max_value=60),
    option=st.sampled_from(sorted(BPE_OPTIONS)),
)
def test_bpe_on_hypothesis_corpora(texts, vocab_size, option):
    opts = BPE_OPTIONS[option]
    tok = _tokenizer("whitespace", ours.models.BPE())
    trainer = ours.trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, **opts)
    tok.train_from_iterator(texts, trainer)
    vocab, merges = naive.naive_char_bpe(_words("whitespace", texts), vocab_size, **opts)
    assert _model_state(tok) == ({t: i for i, t in enumerate(vocab)}, merges)


def test_a_trained_bpe_tokenizer_json_reads_the_same_in_hf():
    tok = _tokenizer("byte_level", ours.models.BPE())
    tok.decoder = ours.decoders.ByteLevel()
    tok.train_from_iterator(
        [CORPUS[:100], CORPUS[100:]],  # batches of texts, as HF takes them
        ours.trainers.BpeTrainer(vocab_size=500, special_tokens=["<s>"], show_progress=False),
    )
    theirs = hf.Tokenizer.from_str(tok.to_str())
    for line in CORPUS + ["<s>unseen wörds 👋🏽</s>"]:
        a, b = tok.encode(line), theirs.encode(line)
        assert (a.ids, a.tokens, a.offsets) == (b.ids, b.tokens, b.offsets), line
        assert tok.decode(a.ids) == theirs.decode(b.ids)


def test_word_level_equals_hf():
    texts = CORPUS + ["x y z x y x"]
    mine = _tokenizer("whitespace", ours.models.WordLevel(unk_token="[UNK]"))
    theirs = hf.Tokenizer(hf.models.WordLevel(unk_token="[UNK]"))
    theirs.normalizer, theirs.pre_tokenizer = _stages(hf, "whitespace")
    for vocab_size, min_frequency in ((60, 0), (10_000, 2), (5, 0)):
        args = dict(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=False)
        mine.train_from_iterator(
            texts, ours.trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]"], **args)
        )
        theirs.train_from_iterator(
            texts, hf.trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]"], **args)
        )
        assert mine.model.vocab == theirs.get_vocab(with_added_tokens=False)
        for line in texts[:50]:
            assert mine.encode(line).ids == theirs.encode(line).ids


def test_word_piece_learns_what_the_naive_trainer_learns():
    mine = ours.Tokenizer(ours.models.WordPiece(unk_token="[UNK]"))
    mine.normalizer = ours.normalizers.BertNormalizer()
    mine.pre_tokenizer = ours.pre_tokenizers.BertPreTokenizer()
    trainer = ours.trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=naive.BERT_SPECIALS, show_progress=False
    )
    mine.train_from_iterator(CORPUS, trainer)
    vocab, _ = naive.naive_wordpiece(naive.bert_words(CORPUS), 300)
    assert mine.model.vocab == {t: i for i, t in enumerate(vocab)}
    assert mine.encode("[CLS] hello").tokens[0] == "[CLS]"


def test_train_reads_each_line_with_its_ending(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("\n".join(CORPUS[:120]) + "\n", encoding="utf-8")
    b.write_text("\n".join(CORPUS[120:]), encoding="utf-8")
    trainer = lambda: ours.trainers.BpeTrainer(vocab_size=400, show_progress=False)  # noqa: E731
    from_files = _tokenizer("byte_level", ours.models.BPE())
    from_files.train([str(a), b], trainer())
    lines = a.read_text().splitlines(keepends=True) + b.read_text().splitlines(keepends=True)
    from_lines = _tokenizer("byte_level", ours.models.BPE())
    from_lines.train_from_iterator(lines, trainer())
    assert _model_state(from_files) == _model_state(from_lines)
    # HF reads files the same way: its merges differ by tie-breaks, its words do not.
    assert "Ċ" in from_files.model.vocab


def test_the_default_trainer_is_the_models_own():
    tok = _tokenizer("whitespace", ours.models.WordLevel())
    tok.train_from_iterator(["a b a"])
    assert tok.model.vocab == {"a": 0, "b": 1}


def test_bad_training_calls_are_clear_errors(tmp_path):
    tok = _tokenizer("whitespace", ours.models.BPE())
    with pytest.raises(TypeError, match="BpeTrainer"):
        tok.train_from_iterator(["a"], ours.trainers.WordLevelTrainer())
    with pytest.raises(TypeError, match="single string"):
        tok.train_from_iterator("some text")
    with pytest.raises(TypeError, match="item 1"):
        tok.train_from_iterator(["a", 3])
    with pytest.raises(TypeError, match="single path"):
        tok.train(str(tmp_path / "x.txt"))
    with pytest.raises(FileNotFoundError, match="x.txt"):
        tok.train([str(tmp_path / "x.txt")])
    wp = ours.Tokenizer(ours.models.WordPiece())
    for setting in ({"end_of_word_suffix": "</w>"}, {"initial_alphabet": ["a"]}):
        with pytest.raises(ValueError, match=next(iter(setting))):
            wp.train_from_iterator(["a b"], ours.trainers.WordPieceTrainer(**setting))
    with pytest.raises(NotImplementedError, match="Unigram"):
        ours.trainers.UnigramTrainer()
    with pytest.raises(NotImplementedError, match="no Unigram model"):
        ours.models.Unigram([("a", -1.0)])
    with pytest.raises(TypeError, match="vocab_size"):
        ours.trainers.BpeTrainer(vocab_size=-1)
    with pytest.raises(TypeError, match="initial_alphabet"):
        ours.trainers.BpeTrainer(initial_alphabet="abc")
    with pytest.raises(TypeError, match="special_tokens"):
        ours.trainers.BpeTrainer(special_tokens="<s>")


def _sorted_state(trainer):
    doc = json.loads(trainer.__getstate__())
    body = next(iter(doc.values()))
    body = body.get("bpe_trainer", body)
    if "initial_alphabet" in body:
        body["initial_alphabet"] = sorted(body["initial_alphabet"])
    return doc


FULL = dict(
    vocab_size=12345,
    min_frequency=12,
    show_progress=False,
    special_tokens=["1", "2"],
    limit_alphabet=13,
    initial_alphabet=["c", "a", "b"],
    continuing_subword_prefix="pref",
    end_of_word_suffix="suf",
    max_token_length=7,
)


@pytest.mark.parametrize("name", ["BpeTrainer", "WordPieceTrainer", "WordLevelTrainer"])
@pytest.mark.parametrize("full", [False, True])
def test_trainer_attributes_and_pickled_form_equal_hf(name, full):
    kwargs = FULL if full else {"min_frequency": 3}
    if name == "WordLevelTrainer" and full:
        kwargs = {k: FULL[k] for k in ("vocab_size", "min_frequency", "show_progress",
                                       "special_tokens")}  # fmt: skip
    if name == "WordPieceTrainer":
        kwargs = {k: v for k, v in kwargs.items() if k != "max_token_length"}
    mine, theirs = getattr(ours.trainers, name)(**kwargs), getattr(hf.trainers, name)(**kwargs)
    # HF's initial alphabet is in its hash set's order: compared sorted.
    assert _sorted_state(mine) == _sorted_state(theirs)
    for attr in kwargs:
        got, want = getattr(mine, attr), getattr(theirs, attr)
        if attr == "special_tokens":
            got, want = (
                [(t.content, t.special) for t in got],
                [(t.content, t.special) for t in want],
            )
        if attr == "initial_alphabet":
            got, want = sorted(got), sorted(want)
        assert got == want, attr
    for back in (pickle.loads(pickle.dumps(mine)), copy.deepcopy(mine)):
        assert type(back) is type(mine) and back.__getstate__() == mine.__getstate__()
    mine.vocab_size = 20000
    mine.special_tokens = []
    assert (mine.vocab_size, mine.special_tokens) == (20000, [])
