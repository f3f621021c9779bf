"""``subword.tokenizers``: HF ``tokenizers``' module layout over subword's Rust core.

Being built component by component (issue 11); what is here behaves as HF's does, checked
against HF's package in the tests: ``normalizers``, ``pre_tokenizers``, ``decoders``,
``models`` (BPE, WordLevel, WordPiece), ``processors`` (templates, Roberta, ByteLevel,
Sequence), ``AddedToken``, ``Regex``, and ``Tokenizer`` composing them in the Rust pipeline
(``rust/pipeline/``: added tokens, truncation, padding, tokenizer.json both ways), and
``implementations`` (ByteLevelBPE, CharBPE, SentencePieceBPE, BertWordPiece). Not yet:
``Unigram``.
"""

from __future__ import annotations

from .._core import NormalizedString, PreTokenizedString
from . import (
    decoders,
    implementations,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)
from ._added import AddedToken
from ._tokenizer import Encoding, Tokenizer
from .implementations import (
    BertWordPieceTokenizer,
    ByteLevelBPETokenizer,
    CharBPETokenizer,
    SentencePieceBPETokenizer,
    SentencePieceUnigramTokenizer,
)
from .models import Token

__all__ = [
    "AddedToken",
    "BertWordPieceTokenizer",
    "ByteLevelBPETokenizer",
    "CharBPETokenizer",
    "SentencePieceBPETokenizer",
    "SentencePieceUnigramTokenizer",
    "implementations",
    "Encoding",
    "NormalizedString",
    "PreTokenizedString",
    "Regex",
    "Token",
    "Tokenizer",
    "decoders",
    "models",
    "normalizers",
    "pre_tokenizers",
    "processors",
    "trainers",
]


class Regex:
    """A pattern to be used as a regular expression (HF's ``tokenizers.Regex``), where a plain
    string would be matched literally."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: str):
        if not isinstance(pattern, str):
            raise TypeError(f"Regex expects a pattern string, got {type(pattern).__name__}")
        self.pattern = pattern

    def __repr__(self) -> str:
        return f"Regex({self.pattern!r})"

    def __reduce__(self):
        return (Regex, (self.pattern,))
