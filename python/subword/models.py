"""``subword.models``: HF ``tokenizers.models`` names: byte-level BPE (the rank encoder's
model) and WordPiece (the pipeline's, ``subword.tokenizers.models.WordPiece``)."""

from __future__ import annotations

import json

from ._value import ByValue
from .tokenizers.models import WordPiece

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
