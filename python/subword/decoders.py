"""``subword.decoders``: HF ``tokenizers.decoders`` names."""

from __future__ import annotations

from ._value import ByValue

__all__ = ["ByteLevel", "WordPiece"]


class ByteLevel(ByValue):
    """Turns byte-level tokens back into text (invalid UTF-8 becomes U+FFFD, as in HF)."""

    def __init__(
        self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True
    ):
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex


class WordPiece(ByValue):
    """Joins WordPiece tokens: ``prefix`` glues a piece to the one before, other tokens get a
    space; ``cleanup`` undoes BERT's spaces before punctuation and contractions."""

    def __init__(self, prefix: str = "##", cleanup: bool = True):
        self.prefix = prefix
        self.cleanup = bool(cleanup)

    def _json(self) -> dict:
        return {"type": "WordPiece", "prefix": self.prefix, "cleanup": self.cleanup}
