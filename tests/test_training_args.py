"""Arguments every training entry point checks the same way (one check each, in
``subword._checks``): ``special_tokens`` is a list of non-empty strings, never a single str that
would become one token per character; ClassicBPE's ``unk_token`` is not empty."""

from __future__ import annotations

import os

import pytest

if os.environ.get("SUBWORD_TEST_IMPL", "subword") == "tiktoken":
    pytest.skip("training is subword-only", allow_module_level=True)

import subword  # noqa: E402
from subword import ClassicBPE, Tokenizer, models, trainers  # noqa: E402

DOCS = ["hello world, hello there", "low lower lowest newer wider"] * 10


@pytest.fixture
def corpus_file(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("\n".join(DOCS), encoding="utf-8")
    return path


def _wordpiece():
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.train_from_iterator(DOCS, trainers.WordPieceTrainer(vocab_size=200, show_progress=False))
    return tok


def _bpe():
    tok = Tokenizer(models.BPE())
    tok.train_from_iterator(DOCS, trainers.BpeTrainer(vocab_size=300, show_progress=False))
    return tok


def entry_points(corpus_file):
    """Every place that takes special tokens, as ``call(tokens)``."""
    kw = {"show_progress": False}
    return {
        "train": lambda s: subword.train([corpus_file], 300, special_tokens=s, **kw),
        "train_from_iterator": lambda s: subword.train_from_iterator(
            DOCS, 300, special_tokens=s, **kw
        ),
        "train_from_counts": lambda s: subword.train_from_counts(
            {"hello": 3, " world": 2}, 300, special_tokens=s, **kw
        ),
        "BpeTrainer": lambda s: trainers.BpeTrainer(special_tokens=s),
        "WordPieceTrainer": lambda s: trainers.WordPieceTrainer(special_tokens=s),
        "Tokenizer.add_special_tokens (BPE)": lambda s: _bpe().add_special_tokens(s),
        "Tokenizer.add_tokens (BPE)": lambda s: _bpe().add_tokens(s),
        "Tokenizer.add_special_tokens (WordPiece)": lambda s: _wordpiece().add_special_tokens(s),
        "Tokenizer.add_tokens (WordPiece)": lambda s: _wordpiece().add_tokens(s),
    }


NAMES = list(entry_points("unused"))


def _arg_name(name: str) -> str:
    return "tokens" if name.startswith("Tokenizer.") else "special_tokens"


@pytest.mark.parametrize("name", NAMES)
def test_a_single_str_is_refused(name, corpus_file):
    call = entry_points(corpus_file)[name]
    with pytest.raises(TypeError) as e:
        call("abc")
    assert str(e.value) == (
        f"{_arg_name(name)} must be a list of strings, not a single str: pass ['abc'] for one token"
    )


@pytest.mark.parametrize("name", NAMES)
def test_a_non_str_element_is_refused(name, corpus_file):
    call = entry_points(corpus_file)[name]
    with pytest.raises(TypeError) as e:
        call(["<s>", 5])
    assert str(e.value) == f"{_arg_name(name)}[1] must be a str, not int (5)"


@pytest.mark.parametrize("name", NAMES)
def test_an_empty_element_is_refused(name, corpus_file):
    call = entry_points(corpus_file)[name]
    with pytest.raises(ValueError) as e:
        call(["<s>", ""])
    assert str(e.value) == (
        f"{_arg_name(name)}[1] is an empty string: a token needs at least one character"
    )


def test_lists_and_tuples_still_work(corpus_file):
    enc = subword.train_from_iterator(DOCS, 300, special_tokens=("abc",), show_progress=False)
    assert enc.special_tokens_set == {"abc"}
    enc = subword.train([corpus_file], 300, special_tokens=["abc", "<s>"], show_progress=False)
    assert enc.special_tokens_set == {"abc", "<s>"}
    assert trainers.WordPieceTrainer(special_tokens=[]).special_tokens == []


CLASSIC_ENTRY_POINTS = {
    "train": lambda **o: ClassicBPE.train(DOCS, 100, **o),
    "train_from_counts": lambda **o: ClassicBPE.train_from_counts({"low": 5, "lower": 2}, 30, **o),
}


@pytest.mark.parametrize("name", list(CLASSIC_ENTRY_POINTS) + ["train_from_files"])
def test_classic_empty_unk_token_is_refused_like_empty_suffix(name, corpus_file):
    call = CLASSIC_ENTRY_POINTS.get(name) or (
        lambda **o: ClassicBPE.train_from_files([corpus_file], 100, **o)
    )
    with pytest.raises(ValueError, match="suffix cannot be empty"):
        call(suffix="")
    with pytest.raises(ValueError) as e:
        call(unk_token="")
    assert str(e.value) == "unk_token cannot be an empty string (None means no unknown token)"
    with pytest.raises(TypeError, match="unk_token must be a str"):
        call(unk_token=0)
    assert "" not in call(unk_token=None).vocab
    assert "<unk>" in call().vocab
