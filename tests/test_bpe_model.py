"""``subword.tokenizers.models.BPE`` (HF's merge-list BPE, ``rust/models/bpe.rs``) against HF
``tokenizers.models.BPE`` on models HF itself trained, with every option: ``Model.tokenize``
(ids, tokens, byte offsets) on hypothesis words and corpus words, whole pipelines, the files
(``save`` / ``from_file`` / ``read_file``), the JSON form, dropout's extremes and seed, errors."""

from __future__ import annotations

import itertools
import json
import pickle
import string
import tracemalloc
from pathlib import Path

import pytest
import refdata
import subword.tokenizers as ours
import test_pre_tokenizers
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st
from subword.tokenizers import models as M
from subword.tokenizers import pre_tokenizers as P

DEMO = (Path(__file__).parent.parent / "python/subword/data/demo_corpus.txt").read_text()
# Latin, Korean, Cyrillic and emoji, so that some characters stay out of a small alphabet.
EXTRA = "안녕하세요 세계 한국어 텍스트 Привет мир 👋🏽 naïve café déjà vu " * 3
CORPUS = (DEMO + EXTRA).splitlines()

OPTIONS = {
    "plain": {},
    "prefix": {"continuing_subword_prefix": "##"},
    "suffix": {"end_of_word_suffix": "</w>"},
    "prefix+suffix": {"continuing_subword_prefix": "@@", "end_of_word_suffix": "</w>"},
    "unk": {"unk_token": "[UNK]"},
    "fuse_unk": {"unk_token": "[UNK]", "fuse_unk": True},
    "byte_fallback": {"byte_fallback": True, "unk_token": "[UNK]"},
    "byte_fallback+fuse": {"byte_fallback": True, "unk_token": "[UNK]", "fuse_unk": True},
    "ignore_merges": {"ignore_merges": True},
}
# What HF's trainer must be told so that its model has the tokens the option names.
TRAIN = {"continuing_subword_prefix", "end_of_word_suffix"}


@pytest.fixture(scope="module", params=sorted(OPTIONS))
def trained(request):
    """A vocabulary and merge list HF trained with the option's prefix / suffix, on the corpus
    minus its Korean (so that Korean characters are unknown), with `<0xXX>` tokens for half the
    bytes when byte fallback is on (so that both fallback and unknowns happen)."""
    options = OPTIONS[request.param]
    trainer_opts = {k: v for k, v in options.items() if k in TRAIN}
    tok = hf.Tokenizer(hf.models.BPE(**trainer_opts))
    tok.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    special = ["[UNK]"] + [f"<0x{b:02X}>" for b in range(0, 256, 2)]
    trainer = hf.trainers.BpeTrainer(vocab_size=600, special_tokens=special, **trainer_opts)
    tok.train_from_iterator([line for line in CORPUS if "안" not in line], trainer)
    state = json.loads(tok.model.__getstate__())
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in state["merges"]]
    return request.param, state["vocab"], merges, options


def _both(trained):
    name, vocab, merges, options = trained
    return M.BPE(vocab, merges, **options), hf.models.BPE(vocab, merges, **options)


def _tokens(model, word):
    return [(t.id, t.value, t.offsets) for t in model.tokenize(word)]


words = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=20),
    st.text(min_size=1, max_size=12),
    st.sampled_from(" ".join(CORPUS).split()),
)


@settings(max_examples=150, deadline=None)
@given(word=words)
def test_tokenize_equals_hf_with_every_option(trained, word):
    mine, theirs = _both(trained)
    assert _tokens(mine, word) == _tokens(theirs, word)


def test_every_corpus_word_equals_hf(trained):
    mine, theirs = _both(trained)
    for word in sorted(set(" ".join(CORPUS).split())):
        assert _tokens(mine, word) == _tokens(theirs, word), word


@settings(max_examples=60, deadline=None)
@given(text=test_pre_tokenizers.texts)
def test_pipelines_equal_hf(trained, text):
    mine_model, theirs_model = _both(trained)
    mine, theirs = ours.Tokenizer(mine_model), hf.Tokenizer(theirs_model)
    mine.pre_tokenizer = P.Whitespace()
    theirs.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    a, b = mine.encode(text), theirs.encode(text)
    assert (a.ids, a.tokens, a.offsets, a.word_ids) == (b.ids, b.tokens, b.offsets, b.word_ids)


def test_api_vocab_files_json_and_pickle(trained, tmp_path):
    mine, theirs = _both(trained)
    # HF's models have no get_vocab; its Tokenizer has.
    assert mine.get_vocab() == hf.Tokenizer(theirs).get_vocab()
    for token in ["[UNK]", "th", "nope-not-a-token"]:
        assert mine.token_to_id(token) == theirs.token_to_id(token)
    for id in [0, 5, 599, 10**6]:
        assert mine.id_to_token(id) == theirs.id_to_token(id)
    assert json.loads(mine.__getstate__()) == json.loads(theirs.__getstate__())
    # Files written by either load into the other with the same tokens.
    (tmp_path / "ours").mkdir()
    (tmp_path / "hf").mkdir()
    ours_files = mine.save(str(tmp_path / "ours"), "m")
    hf_files = theirs.save(str(tmp_path / "hf"), "m")
    assert [Path(p).name for p in ours_files] == [Path(p).name for p in hf_files]
    assert json.loads(Path(ours_files[0]).read_text()) == json.loads(Path(hf_files[0]).read_text())
    assert Path(ours_files[1]).read_text() == Path(hf_files[1]).read_text()
    assert M.BPE.read_file(*hf_files) == hf.models.BPE.read_file(*hf_files)
    options = trained[3]
    for a, b in [
        (M.BPE.from_file(*hf_files, **options), theirs),
        (mine, hf.models.BPE.from_file(*ours_files, **options)),
    ]:
        for word in ["the", "tokenizers", "안녕", "naïve"]:
            assert _tokens(a, word) == _tokens(b, word)
    again = pickle.loads(pickle.dumps(mine))
    assert again == mine and _tokens(again, "tokenizers") == _tokens(mine, "tokenizers")


def test_a_tokenizer_json_with_bpe_loads_and_matches_hf(trained):
    mine_model, theirs_model = _both(trained)
    theirs = hf.Tokenizer(theirs_model)
    theirs.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    mine = ours.Tokenizer.from_str(theirs.to_str())
    for line in CORPUS[:50]:
        assert mine.encode(line).ids == theirs.encode(line).ids
    assert json.loads(mine.to_str())["model"] == json.loads(theirs.to_str())["model"]


def _letter_bpe():
    """HF's BPE over letters: every two-letter and three-letter string a token (18,278 tokens,
    18,252 merges), behind a Whitespace pre-tokenizer."""
    letters = string.ascii_lowercase
    vocab = {c: i for i, c in enumerate(letters)}
    pairs = [a + b for a, b in itertools.product(letters, letters)]
    merges = [(a, b) for a, b in itertools.product(letters, letters)]
    merges += [(ab, c) for ab, c in itertools.product(pairs, letters)]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    tok = hf.Tokenizer(hf.models.BPE(vocab, merges))
    tok.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    return tok, vocab, merges


def test_a_model_read_from_a_file_keeps_its_tables_in_the_core_until_asked():
    theirs, vocab, merges = _letter_bpe()
    text = theirs.to_str()
    tracemalloc.start()
    try:
        mine = ours.Tokenizer.from_str(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A Python object per token and merge took 7 MB here (18 times the file's size).
    assert peak < len(text), f"loading made {peak} bytes of Python objects"
    words = "the quick brown fox jumps over the lazy dog abcdefgh"
    assert mine.encode(words).ids == theirs.encode(words).ids
    model = mine.model
    assert model.vocab == vocab and model.merges == merges
    # An option changed rebuilds the model from the same tables.
    fresh = ours.Tokenizer.from_str(text)
    fresh.model.dropout = 0.0
    assert fresh.encode(words).ids == theirs.encode(words).ids
    assert fresh.model.merges == merges
    # Pickling carries them too, before they were ever read.
    again = pickle.loads(pickle.dumps(ours.Tokenizer.from_str(text)))
    assert again.encode(words).ids == theirs.encode(words).ids
    assert again.model.vocab == vocab
    copied = pickle.loads(pickle.dumps(ours.Tokenizer.from_str(text).model))
    assert copied.vocab == vocab and copied.merges == merges


def test_merge_order_and_duplicate_pairs_follow_hf():
    # Ranks are list positions, not ids: a later merge with a smaller id still waits its turn;
    # a pair listed twice takes its last entry, as in HF's map.
    vocab = {"a": 0, "b": 1, "c": 2, "bc": 3, "ab": 4, "abc": 5}
    for merges in (
        [("a", "b"), ("b", "c"), ("ab", "c")],
        [("b", "c"), ("a", "b"), ("ab", "c")],
        [("b", "c"), ("a", "b"), ("b", "c")],
    ):
        mine, theirs = M.BPE(vocab, merges), hf.models.BPE(vocab, merges)
        for word in ["abc", "abcabc", "bcab", "aabbcc", "cba"]:
            assert _tokens(mine, word) == _tokens(theirs, word), (merges, word)


def test_dropout_extremes_and_seed():
    vocab = {"a": 0, "b": 1, "ab": 2, "abab": 3}
    merges = [("a", "b"), ("ab", "ab")]
    word = "abab" * 5
    whole = M.BPE(vocab, merges, dropout=0.0)
    assert _tokens(whole, word) == _tokens(hf.models.BPE(vocab, merges, dropout=0.0), word)
    # Every merge dropped: characters, as HF gives.
    none = M.BPE(vocab, merges, dropout=1.0)
    assert _tokens(none, word) == _tokens(hf.models.BPE(vocab, merges, dropout=1.0), word)
    # With dropout HF skips ignore_merges' whole-word lookup (its cached path), even for a
    # word that is a token.
    for p in (1.0, 0.0):
        mine = M.BPE(vocab, merges, dropout=p, ignore_merges=True)
        theirs = hf.models.BPE(vocab, merges, dropout=p, ignore_merges=True)
        for w in ("abab", word):
            assert _tokens(mine, w) == _tokens(theirs, w), (p, w)
    # In between: a valid segmentation (tokens spell the word), reproducible with a seed, and
    # not always the same one.
    runs = []
    for _ in range(2):
        m = M.BPE(vocab, merges, dropout=0.5, seed=7)
        runs.append([tuple(t.value for t in m.tokenize(word)) for _ in range(30)])
    assert runs[0] == runs[1]
    assert all("".join(r) == word for r in runs[0])
    assert len(set(runs[0])) > 1


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="not in the vocabulary"):
        M.BPE({"a": 0}, [("a", "b")])._core_object()
    with pytest.raises(ValueError, match="between 0 and 1"):
        M.BPE({"a": 0}, [], dropout=1.5)._core_object()
    with pytest.raises(ValueError, match="no space"):
        M.BPE({"a": 0}, ["ab"])
    with pytest.raises(TypeError, match="pairs of str"):
        M.BPE({"a": 0}, [("a", 1)])
    with pytest.raises(TypeError, match="from_file"):
        M.BPE("vocab.json", "merges.txt")
    with pytest.raises(ValueError, match="unknown token"):
        M.BPE({"a": 0}, [], unk_token="<unk>").tokenize("b")
    with pytest.raises(ValueError, match="distinct"):
        M.BPE({"a": 0, "b": 0}, [])._core_object()


@pytest.fixture(scope="module", params=["roberta", "byte_level"])
def byte_level_files(request):
    return _byte_level_shaped(request.param)


def _byte_level_shaped(kind: str) -> hf.Tokenizer:
    """A GPT-2/RoBERTa-shaped tokenizer.json HF trained: ByteLevel pre-tokenizer and decoder,
    byte-level BPE, and a RobertaProcessing or ByteLevel post-processor (trim_offsets)."""
    tok = hf.Tokenizer(hf.models.BPE())
    tok.pre_tokenizer = hf.pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = hf.decoders.ByteLevel()
    trainer = hf.trainers.BpeTrainer(
        vocab_size=800,
        special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(CORPUS, trainer)
    if kind == "roberta":
        tok.post_processor = hf.processors.RobertaProcessing(("</s>", 1), ("<s>", 0))
    else:
        tok.post_processor = hf.processors.ByteLevel(trim_offsets=True)
    return tok


def _full_view(e):
    return (e.ids, e.tokens, e.offsets, e.word_ids, e.sequence_ids, e.type_ids,
            e.special_tokens_mask)  # fmt: skip


def _corpus_lines(per_file: int = 150) -> list[str]:
    # The shared corpora when present (the test runs on the built-in lines without them).
    out = []
    for path in refdata.corpora_files():
        lines = [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        out += lines[:per_file]
    return out


def test_byte_level_bpe_files_equal_hf_on_every_line(byte_level_files):
    theirs = byte_level_files
    corpus_lines = _corpus_lines()
    mine = ours.Tokenizer.from_str(theirs.to_str())
    assert json.loads(mine.to_str()) == json.loads(theirs.to_str())
    lines = CORPUS + corpus_lines
    for a, b in zip(lines, lines[1:] + lines[:1]):
        assert _full_view(mine.encode(a)) == _full_view(theirs.encode(a)), a
        assert _full_view(mine.encode(a, b)) == _full_view(theirs.encode(a, b)), (a, b)
    want = [_full_view(e) for e in theirs.encode_batch(lines[:200])]
    assert [_full_view(e) for e in mine.encode_batch(lines[:200])] == want
    ids = theirs.encode(" ".join(lines[:20])).ids
    for skip in (True, False):
        assert mine.decode(ids, skip_special_tokens=skip) == theirs.decode(ids, skip)


@settings(max_examples=150, deadline=None)
@given(text=test_pre_tokenizers.texts, pair=st.none() | test_pre_tokenizers.texts)
def test_byte_level_bpe_files_equal_hf_on_hypothesis_text(byte_level_files, text, pair):
    theirs = byte_level_files
    mine = ours.Tokenizer.from_str(theirs.to_str())
    assert _full_view(mine.encode(text, pair)) == _full_view(theirs.encode(text, pair))


def _llama2_shaped(kind: str) -> hf.Tokenizer:
    """A Llama-2/Mistral-shaped tokenizer.json trained by HF: BPE with byte_fallback, fuse_unk
    and `<unk>`, the `<0xXX>` byte tokens in the vocabulary, `<s> $A` around the text, and
    either the Prepend/Replace normalizers with Replace/ByteFallback/Fuse/Strip decoders
    (Llama 2) or a Metaspace pre-tokenizer and decoder (Mistral's later files)."""
    tok = hf.Tokenizer(hf.models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    D, N, P = hf.decoders, hf.normalizers, hf.pre_tokenizers
    if kind == "prepend":
        tok.normalizer = N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")])
        tok.decoder = D.Sequence(
            [D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]
        )
    else:
        tok.pre_tokenizer = P.Metaspace(replacement="▁", prepend_scheme="first", split=False)
        tok.decoder = D.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    trainer = hf.trainers.BpeTrainer(vocab_size=700, special_tokens=["<unk>", "<s>", "</s>"])
    # Without Korean, so that its characters fall back to bytes.
    tok.train_from_iterator([line for line in CORPUS if "안" not in line], trainer)
    doc = json.loads(tok.to_str())
    vocab = doc["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    doc["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<s>", "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}},
    }  # fmt: skip
    return hf.Tokenizer.from_str(json.dumps(doc))


@pytest.fixture(scope="module", params=["prepend", "metaspace"])
def llama2_shaped(request):
    theirs = _llama2_shaped(request.param)
    return ours.Tokenizer.from_str(theirs.to_str()), theirs


def test_llama2_shaped_files_equal_hf_on_every_line(llama2_shaped):
    mine, theirs = llama2_shaped
    lines = CORPUS + _corpus_lines(100) + ["안녕 👋🏽 <s>x</s>", "  two  spaces ", ""]
    for a, b in zip(lines, lines[1:] + lines[:1]):
        assert _full_view(mine.encode(a)) == _full_view(theirs.encode(a)), a
        assert _full_view(mine.encode(a, b)) == _full_view(theirs.encode(a, b)), (a, b)
        ids = theirs.encode(a).ids
        for skip in (True, False):
            assert mine.decode(ids, skip_special_tokens=skip) == theirs.decode(ids, skip), a
    assert json.loads(mine.to_str()) == json.loads(theirs.to_str())


@settings(max_examples=150, deadline=None)
@given(text=test_pre_tokenizers.texts)
def test_llama2_shaped_files_equal_hf_on_hypothesis_text(llama2_shaped, text):
    mine, theirs = llama2_shaped
    assert _full_view(mine.encode(text)) == _full_view(theirs.encode(text))
    ids = theirs.encode(text).ids
    assert mine.decode(ids) == theirs.decode(ids)
