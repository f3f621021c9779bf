"""``subword.tokenizers.implementations`` against HF's: each ready-made tokenizer, trained by
HF's class and saved as model files, is loaded by ours from those files with the same
arguments and must encode (ids, tokens, offsets, pairs) and decode as HF's does; ours trained
and saved, HF's class reads back to the same encodings; the wrapper passes components through;
Unigram is refused with a message that says so."""

from __future__ import annotations

import pytest
import subword.tokenizers as ours
import test_bpe_model
import textgen
import tokenizers as hf
from hypothesis import given, settings

CORPUS = test_bpe_model.CORPUS + [
    "Grüße aus Köln — naïve café, ÉCOLE",
    "한국어 문장도 똑같이 중요합니다",
    "def f(x):  return x ** 2  # fine",
]

# (class name, constructor arguments, training arguments)
CASES = {
    "byte_level": ("ByteLevelBPETokenizer", {}, {"vocab_size": 400}),
    "byte_level_prefix_lower": (
        "ByteLevelBPETokenizer",
        {"add_prefix_space": True, "lowercase": True, "trim_offsets": True},
        {"vocab_size": 400},
    ),
    "byte_level_nfkc": (
        "ByteLevelBPETokenizer",
        {"unicode_normalizer": "nfkc"},
        {"vocab_size": 400},
    ),
    "char": ("CharBPETokenizer", {}, {"vocab_size": 300}),
    "char_lower_ws": (
        "CharBPETokenizer",
        {"lowercase": True, "split_on_whitespace_only": True, "unicode_normalizer": "nfc"},
        {"vocab_size": 300},
    ),
    "sentencepiece": ("SentencePieceBPETokenizer", {}, {"vocab_size": 300}),
    "sentencepiece_no_prefix": (
        "SentencePieceBPETokenizer",
        {"add_prefix_space": False},
        {"vocab_size": 300},
    ),
    "bert": ("BertWordPieceTokenizer", {}, {"vocab_size": 300}),
    "bert_cased": (
        "BertWordPieceTokenizer",
        {"lowercase": False, "strip_accents": False},
        {"vocab_size": 300},
    ),
}


def _files(lib_tok, folder) -> list[str]:
    return lib_tok.save_model(str(folder))


def _load(lib, name, files, kwargs):
    cls = getattr(lib, name)
    if name == "BertWordPieceTokenizer":
        return cls.from_file(files[0], **kwargs)
    vocab, merges = sorted(files, key=lambda f: not f.endswith(".json"))
    return cls.from_file(vocab, merges, **kwargs)


@pytest.fixture(scope="module", params=sorted(CASES))
def pair(request, tmp_path_factory):
    """(case, ours, HF's): HF's class trained on CORPUS and saved as model files, which both
    classes then load with the same arguments."""
    name, kwargs, train = CASES[request.param]
    trained = getattr(hf, name)(**kwargs)
    trained.train_from_iterator(CORPUS, show_progress=False, min_frequency=1, **train)
    files = _files(trained, tmp_path_factory.mktemp(request.param))
    return request.param, _load(ours, name, files, kwargs), _load(hf, name, files, kwargs)


def _same(a, b, text):
    assert a.ids == b.ids, text
    assert a.tokens == b.tokens, text
    assert a.offsets == b.offsets, text


def test_corpus_lines_encode_and_decode_as_hf(pair):
    _, mine, theirs = pair
    assert mine.get_vocab() == theirs.get_vocab()
    assert mine.get_vocab_size() == theirs.get_vocab_size()
    for text in CORPUS:
        a, b = mine.encode(text), theirs.encode(text)
        _same(a, b, text)
        assert mine.decode(a.ids) == theirs.decode(b.ids), text
    first, second = CORPUS[0], CORPUS[1]
    _same(mine.encode(first, second), theirs.encode(first, second), (first, second))
    for a, b in zip(mine.encode_batch(CORPUS[:5]), theirs.encode_batch(CORPUS[:5])):
        assert a.ids == b.ids and a.offsets == b.offsets
    assert mine.num_special_tokens_to_add(True) == theirs.num_special_tokens_to_add(True)
    if theirs.normalizer is not None:  # (HF's normalize fails without one; ours is the text)
        assert mine.normalize(CORPUS[-3]) == theirs.normalize(CORPUS[-3])
    else:
        assert mine.normalize(CORPUS[-3]) == CORPUS[-3]


@settings(max_examples=60, deadline=None)
@given(text=textgen.texts)
def test_any_text_encodes_as_hf(pair, text):
    _, mine, theirs = pair
    _same(mine.encode(text), theirs.encode(text), text)


def test_trained_here_reads_back_in_hf(tmp_path):
    """Ours trained, then saved: HF's class on the same files encodes as ours does."""
    for case in ("byte_level", "char", "sentencepiece", "bert"):
        name, kwargs, train = CASES[case]
        mine = getattr(ours, name)(**kwargs)
        mine.train_from_iterator(CORPUS, show_progress=False, min_frequency=1, **train)
        (tmp_path / case).mkdir()
        files = mine.save_model(str(tmp_path / case))
        # Loaded from files, both have what a vocabulary brings (BERT's template).
        mine, theirs = _load(ours, name, files, kwargs), _load(hf, name, files, kwargs)
        for text in CORPUS:
            a, b = mine.encode(text), theirs.encode(text)
            assert (a.ids, a.tokens) == (b.ids, b.tokens), (case, text)


def test_hf_suite_examples_train_as_hf():
    """The small examples HF's own suite trains (three sentences, default options)."""
    text = ["A first sentence", "Another sentence", "And a last one"]
    for name in (
        "ByteLevelBPETokenizer",
        "CharBPETokenizer",
        "SentencePieceBPETokenizer",
        "BertWordPieceTokenizer",
    ):
        mine, theirs = getattr(ours, name)(), getattr(hf, name)()
        mine.train_from_iterator(text, show_progress=False)
        theirs.train_from_iterator(text, show_progress=False)
        assert mine.encode("A sentence").tokens == theirs.encode("A sentence").tokens, name


def test_base_tokenizer_passes_components_through():
    tok = ours.Tokenizer(ours.models.BPE())
    tok.normalizer = ours.normalizers.NFC()
    tok.pre_tokenizer = ours.pre_tokenizers.ByteLevel()
    tok.post_processor = ours.processors.BertProcessing(("A", 0), ("B", 1))
    tok.decoder = ours.decoders.ByteLevel()
    base = ours.implementations.BaseTokenizer(tok)
    assert isinstance(base.model, ours.models.BPE)
    assert isinstance(base.normalizer, ours.normalizers.NFC)
    assert isinstance(base.post_processor, ours.processors.BertProcessing)
    base.normalizer = ours.normalizers.NFD()
    base.pre_tokenizer = ours.pre_tokenizers.Whitespace()
    base.decoder = ours.decoders.WordPiece()
    assert isinstance(tok.normalizer, ours.normalizers.NFD)
    assert isinstance(tok.pre_tokenizer, ours.pre_tokenizers.Whitespace)
    assert isinstance(tok.decoder, ours.decoders.WordPiece)
    with pytest.raises(TypeError, match="wraps a subword.tokenizers.Tokenizer"):
        ours.implementations.BaseTokenizer("not a tokenizer")


def test_repr_padding_truncation_and_bad_arguments(pair):
    case, mine, theirs = pair
    assert repr(mine) == repr(theirs)
    mine.enable_truncation(4)
    theirs.enable_truncation(4)
    mine.enable_padding(length=6, pad_id=0, pad_token=mine.id_to_token(0))
    theirs.enable_padding(length=6, pad_id=0, pad_token=theirs.id_to_token(0))
    assert mine.truncation == theirs.truncation and mine.padding == theirs.padding
    _same(mine.encode(CORPUS[0]), theirs.encode(CORPUS[0]), CORPUS[0])
    mine.no_truncation(), mine.no_padding(), theirs.no_truncation(), theirs.no_padding()
    with pytest.raises(ValueError, match="unicode_normalizer='nfx'"):
        ours.ByteLevelBPETokenizer(unicode_normalizer="nfx")
    with pytest.raises(ValueError, match="both vocab and merges"):
        ours.ByteLevelBPETokenizer(vocab={"a": 0})


def test_unigram_is_refused_with_a_message():
    with pytest.raises(NotImplementedError, match="Unigram model"):
        ours.SentencePieceUnigramTokenizer()
    with pytest.raises(NotImplementedError, match="Unigram"):
        ours.implementations.SentencePieceUnigramTokenizer.from_spm("x.model")
