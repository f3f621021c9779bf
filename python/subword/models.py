"""``subword.models``: HF ``tokenizers.models`` names: byte-level BPE and WordPiece."""

from __future__ import annotations

import json
import os

from . import _core
from ._value import ByValue

__all__ = ["BPE", "WordPiece"]


class BPE(ByValue):
    """A byte-level BPE model, as ``tokenizers.models.BPE``.

    ``BPE()`` is empty (train it); ``BPE(vocab, merges)`` takes HF's byte-level forms: ``vocab``
    maps tokens like ``"Ġthe"`` to ids, ``merges`` is a list of ``("Ġ", "the")`` pairs or
    ``"Ġ the"`` strings. ``unk_token`` is accepted and unused: byte-level BPE never needs one.
    """

    def __init__(
        self,
        vocab: dict[str, int] | None = None,
        merges: list | None = None,
        cache_capacity: int | None = None,
        dropout: float | None = None,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool | None = None,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
    ):
        for name, value in [
            ("dropout", dropout),
            ("continuing_subword_prefix", continuing_subword_prefix),
            ("end_of_word_suffix", end_of_word_suffix),
        ]:
            if value is not None:
                raise ValueError(f"BPE({name}=...) is not supported by subword's byte-level BPE")
        if byte_fallback:
            raise ValueError(
                "BPE(byte_fallback=True) is not supported: byte-level BPE has all bytes"
            )
        if (vocab is None) != (merges is None):
            raise ValueError("give both vocab and merges, or neither (to train)")
        self.vocab = dict(vocab) if vocab is not None else None
        self.merges = [m.split(" ", 1) if isinstance(m, str) else list(m) for m in merges or []]
        self.unk_token = unk_token
        self.ignore_merges = ignore_merges

    @classmethod
    def from_file(cls, vocab: str, merges: str, **kwargs) -> BPE:
        """Read ``vocab.json`` and ``merges.txt`` (GPT-2's ``encoder.json`` and ``vocab.bpe``)."""
        with open(vocab, encoding="utf-8") as f:
            v = json.load(f)
        with open(merges, encoding="utf-8") as f:
            m = [line for line in f.read().splitlines() if line and not line.startswith("#version")]
        return cls(v, m, **kwargs)

    def _model_json(self) -> dict:
        return {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": self.ignore_merges,
            "vocab": self.vocab,
            "merges": self.merges,
        }


class WordPiece(ByValue):
    """A WordPiece model, as ``tokenizers.models.WordPiece``: greedy longest-match encoding.

    ``WordPiece()`` is empty (train it); ``WordPiece(vocab)`` takes a token -> id dict with ids
    0..n-1. A word with a position no piece matches, or longer than ``max_input_chars_per_word``
    characters, becomes ``unk_token`` as a whole.
    """

    def __init__(
        self,
        vocab: dict[str, int] | None = None,
        unk_token: str = "[UNK]",
        max_input_chars_per_word: int = 100,
        continuing_subword_prefix: str = "##",
    ):
        if vocab is not None and not isinstance(vocab, dict):
            raise TypeError("WordPiece(vocab): vocab must be a dict of token -> id")
        if max_input_chars_per_word < 1:
            raise ValueError("max_input_chars_per_word must be at least 1")
        self.vocab = dict(vocab) if vocab is not None else None
        self.unk_token = str(getattr(unk_token, "content", unk_token))
        self.max_input_chars_per_word = int(max_input_chars_per_word)
        self.continuing_subword_prefix = continuing_subword_prefix

    @staticmethod
    def read_file(vocab: str) -> dict[str, int]:
        """Read a ``vocab.txt`` (one token per line, line number = id)."""
        tokens = _core.WordPieceCore.read_vocab_txt(os.fspath(vocab))
        return {t: i for i, t in enumerate(tokens)}

    @classmethod
    def from_file(cls, vocab: str, **kwargs) -> WordPiece:
        return cls(cls.read_file(vocab), **kwargs)

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``vocab.txt`` (or ``{prefix}-vocab.txt``) into ``folder``, atomically."""
        if self.vocab is None:
            raise ValueError("the model has no vocabulary yet: train it or load one")
        if not os.path.isdir(folder):
            raise FileNotFoundError(f"{folder}: no such directory")
        path = os.path.join(folder, f"{prefix}-vocab.txt" if prefix else "vocab.txt")
        tokens = sorted(self.vocab, key=self.vocab.__getitem__)
        _core.WordPieceCore.write_vocab_txt(path, tokens)
        return [path]

    def _model_json(self) -> dict:
        return {
            "type": "WordPiece",
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "max_input_chars_per_word": self.max_input_chars_per_word,
            "vocab": self.vocab,
        }
