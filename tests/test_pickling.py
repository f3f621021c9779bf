"""Issue 13: every object a map task needs pickles to an equal object that behaves the same, in
this process and in worker processes started by ``fork`` and by ``spawn``."""

from __future__ import annotations

import multiprocessing as mp
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest
import small_tokenizers
import subword
import subword.tiktoken as sw_tiktoken
import subword.tokenizers as hf
from pickle_jobs import round_trip_in_worker, use
from subword import ClassicBPE, models, pre_tokenizers, processors, trainers

DOCS = [
    "the quick brown fox jumps over the lazy dog",
    "안녕하세요 세계, 토크나이저를 만듭니다",
    "tokenizers split words into pieces 123 456",
] * 20


def _encoding():
    return subword.train_from_iterator(
        DOCS, vocab_size=300, special_tokens=["<|endoftext|>"], show_progress=False
    )


def _byte_level_tokenizer():
    return subword.Tokenizer.from_encoding(_encoding())


def _wordpiece_tokenizer():
    tok = small_tokenizers.wordpiece(DOCS, 120)
    tok.post_processor = processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    return tok


def _hf_tokenizer():
    return small_tokenizers.hf_bpe(DOCS, 150)


def _custom_tiktoken_encoding():
    enc = _encoding()
    return sw_tiktoken.Encoding(
        "custom",
        pat_str=enc._pat_str,
        mergeable_ranks=enc._mergeable_ranks,
        special_tokens={"<|endoftext|>": 5000},
    )


def _trained_wordpiece_trainer():
    trainer = trainers.WordPieceTrainer(vocab_size=120, show_progress=False)
    tok = subword.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(DOCS, trainer)
    assert trainer.merges  # it holds what it learned
    return trainer


MAKERS = {
    "Encoding (trained)": _encoding,
    "tiktoken.Encoding (custom)": _custom_tiktoken_encoding,
    "Tokenizer (byte-level BPE)": _byte_level_tokenizer,
    "Tokenizer (untrained)": lambda: subword.Tokenizer(models.BPE()),
    "Tokenizer (WordPiece)": _wordpiece_tokenizer,
    "tokenizers.Tokenizer": _hf_tokenizer,
    "ClassicBPE": lambda: ClassicBPE.train(DOCS, vocab_size=80, show_progress=False),
    "Encoded (byte-level)": lambda: _byte_level_tokenizer().encode("hello world"),
    "Encoded (WordPiece, pair)": lambda: _wordpiece_tokenizer().encode("hello", "tokenizers"),
    "tokenizers.Encoding": lambda: _hf_tokenizer().encode("The quick fox", "the dog"),
    "BpeTrainer": lambda: trainers.BpeTrainer(vocab_size=500, special_tokens=["<s>"]),
    "WordPieceTrainer (trained)": _trained_wordpiece_trainer,
    "tokenizers.trainers.BpeTrainer": lambda: hf.trainers.BpeTrainer(vocab_size=77),
    "models.BPE": lambda: models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]),
    "models.WordPiece": lambda: models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"),
    "pre_tokenizers.ByteLevel": lambda: pre_tokenizers.ByteLevel(add_prefix_space=False),
    "pre_tokenizers.Sequence": lambda: pre_tokenizers.Sequence(
        [pre_tokenizers.Split(r"\d+|\D+"), pre_tokenizers.ByteLevel(False, use_regex=False)]
    ),
    "processors.TemplateProcessing": lambda: processors.TemplateProcessing(
        "[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    ),
    "decoders.WordPiece": lambda: subword.decoders.WordPiece(prefix="@@", cleanup=False),
}


@pytest.fixture(scope="module", params=list(MAKERS))
def made(request):
    return MAKERS[request.param]()


def test_round_trip_is_equal_and_behaves_the_same(made):
    back = pickle.loads(pickle.dumps(made))
    if isinstance(made, (subword._core.Encoded, subword._core.EncodingColumns)):
        # A Rust result (WordPiece's is a view into its tokenizer, the pipeline's holds its
        # tokens) comes back as its columns, in the Python result class with the same
        # attributes and methods.
        assert isinstance(back, hf.Encoding) and isinstance(back, subword.Encoded)
        assert back.char_to_word(1) == made.char_to_word(1)
        assert back.word_to_tokens(0, 1) == made.word_to_tokens(0, 1)
    else:
        assert type(back) is type(made)
    assert back == made
    assert use(back) == use(made)


def test_equality_sees_a_difference():
    # Equality by content must not be vacuous.
    assert _encoding() != subword.train_from_iterator(DOCS, vocab_size=290, show_progress=False)
    assert trainers.BpeTrainer(vocab_size=500) != trainers.BpeTrainer(vocab_size=501)
    assert ClassicBPE.train(DOCS, 80, show_progress=False) != ClassicBPE.train(
        DOCS, 81, show_progress=False
    )
    a, b = _byte_level_tokenizer(), _byte_level_tokenizer()
    assert a == b
    b.add_special_tokens(["<extra>"])
    assert a != b
    assert a.encode("hello") != a.encode("world")


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_get_equal_objects(method):
    objects = {name: make() for name, make in MAKERS.items()}
    ctx = mp.get_context(method)
    with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
        futures = {
            name: pool.submit(round_trip_in_worker, pickle.dumps(o)) for name, o in objects.items()
        }
        for name, fut in futures.items():
            payload, used = fut.result(timeout=120)
            assert pickle.loads(payload) == objects[name], name
            assert used == use(objects[name]), name


def test_named_encodings_pickle_by_name(encodings):
    sw, _ = encodings("r50k_base")
    back = pickle.loads(pickle.dumps(sw))
    assert back == sw and back._core is sw._core
    # A copy re-pickles by name too (it shares the named model).
    assert len(pickle.dumps(back)) < 100
    assert use(back) == use(sw)
