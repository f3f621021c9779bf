"""``subword.tokenizers.pre_tokenizers``: HF ``tokenizers.pre_tokenizers``, each a thin wrapper of a
Rust ``CorePreTokenizer`` built from its typed fields (``rust/pre_tokenizers/``)."""

from __future__ import annotations

from typing import Any

from .. import _core
from ._component import (
    ByteLevelOptions,
    Component,
    CustomComponent,
    SequenceOf,
    literal_or_regex,
    one_char,
)
from ._component import (
    prepend_scheme as prepend_scheme_of,
)

__all__ = [
    "BertPreTokenizer",
    "ByteLevel",
    "CharDelimiterSplit",
    "Digits",
    "FixedLength",
    "Metaspace",
    "PreTokenizer",
    "Punctuation",
    "Sequence",
    "Split",
    "UnicodeScripts",
    "Whitespace",
    "WhitespaceSplit",
]

_BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


def _behavior(value: str) -> str:
    if value not in _BEHAVIORS:
        raise ValueError(f"unknown split behavior {value!r}: use one of {', '.join(_BEHAVIORS)}")
    return value


class PreTokenizer(Component):
    """Base class of the pre-tokenizers (HF's ``tokenizers.pre_tokenizers.PreTokenizer``)."""

    def pre_tokenize_str(self, sequence: str) -> list[tuple[str, tuple[int, int]]]:
        """The pieces of ``sequence`` with their (start, end) character offsets."""
        if not isinstance(sequence, str):
            raise TypeError(f"pre_tokenize_str expects a str, got {type(sequence).__name__}")
        return self._core_object().pre_tokenize_str(sequence)

    def pre_tokenize(self, pretok: _core.PreTokenizedString) -> None:
        """Cut the splits of ``pretok`` (a ``tokenizers.PreTokenizedString``) in place."""
        if not isinstance(pretok, _core.PreTokenizedString):
            raise TypeError(
                f"pre_tokenize expects a PreTokenizedString, got {type(pretok).__name__}"
            )
        self._core_object().pre_tokenize(pretok)

    @staticmethod
    def custom(pre_tokenizer: Any) -> PreTokenizer:
        """A Python object with a ``pre_tokenize(pretok)`` method as a pre-tokenizer; it cuts
        the ``PreTokenizedString`` it is lent (``pretok.split(func)``), valid only during that
        call."""
        return _Custom(pre_tokenizer)


class _Custom(CustomComponent, PreTokenizer):
    _kind = "PreTokenizer"

    def _build(self):
        return _core.CorePreTokenizer.custom(self.__dict__["_obj"])


class Whitespace(PreTokenizer):
    """Runs of word characters and runs of other non-space characters (``\\w+|[^\\w\\s]+``)."""

    def _build(self):
        return _core.CorePreTokenizer.whitespace()


class UnicodeScripts(PreTokenizer):
    """A cut wherever the Unicode script changes (Hiragana and Katakana count as Han; spaces
    join the run they stand in), as SentencePiece groups characters."""

    def _build(self):
        return _core.CorePreTokenizer.unicode_scripts()


class WhitespaceSplit(PreTokenizer):
    """Cut at whitespace, which is dropped."""

    def _build(self):
        return _core.CorePreTokenizer.whitespace_split()


class BertPreTokenizer(PreTokenizer):
    """Cut at whitespace (dropped), then each punctuation character on its own."""

    def _build(self):
        return _core.CorePreTokenizer.bert()


class FixedLength(PreTokenizer):
    """Pieces of ``length`` characters (the last may be shorter)."""

    _fields = ("length",)

    def __init__(self, length: int = 5):
        if not isinstance(length, int) or isinstance(length, bool) or length < 1:
            raise ValueError(f"FixedLength needs a length of at least 1, got {length!r}")
        self.length = length

    def _build(self):
        return _core.CorePreTokenizer.fixed_length(self.length)


class Punctuation(PreTokenizer):
    """Each punctuation character, under ``behavior`` (default ``"isolated"``)."""

    _fields = ("behavior",)

    def __init__(self, behavior: str = "isolated"):
        self.behavior = _behavior(behavior)

    def _build(self):
        return _core.CorePreTokenizer.punctuation(self.behavior)


class Digits(PreTokenizer):
    """Numeric characters apart from the rest: each on its own (``individual_digits``) or in
    runs."""

    _fields = ("individual_digits",)

    def __init__(self, individual_digits: bool = False):
        self.individual_digits = bool(individual_digits)

    def _build(self):
        return _core.CorePreTokenizer.digits(self.individual_digits)


class CharDelimiterSplit(PreTokenizer):
    """Cut at ``delimiter`` (one character), which is dropped."""

    _fields = ("delimiter",)

    def __init__(self, delimiter: str):
        self.delimiter = one_char("delimiter", delimiter)

    def _build(self):
        return _core.CorePreTokenizer.char_delimiter_split(self.delimiter)


class Split(PreTokenizer):
    """Cut at the matches of ``pattern`` (a str, matched literally, or a ``tokenizers.Regex``)
    under ``behavior``; ``invert`` swaps matches and the rest. As in HF, the pattern cannot be
    read or changed afterwards."""

    _fields = ("behavior", "invert")

    def __init__(self, pattern: Any, behavior: str, invert: bool = False):
        literal_or_regex("Split", pattern)
        object.__setattr__(self, "_pattern", pattern)
        self.behavior = _behavior(behavior)
        self.invert = bool(invert)
        self._core_object()  # a bad regex fails here, not on first use

    @property
    def pattern(self):
        raise AttributeError("Split.pattern cannot be read; make a new Split to change it")

    @pattern.setter
    def pattern(self, value):
        raise AttributeError("Split.pattern cannot be set; make a new Split to change it")

    def _build(self):
        text, regex = literal_or_regex("Split", self.__dict__["_pattern"])
        return _core.CorePreTokenizer.split(text, regex, self.behavior, self.invert)

    def _args(self) -> tuple:
        return (self.__dict__["_pattern"], self.behavior, self.invert)

    def __eq__(self, other: object) -> bool:
        def key(s):
            p = s.__dict__["_pattern"]
            return (type(p).__name__, getattr(p, "pattern", p), s.behavior, s.invert)

        return type(other) is Split and key(other) == key(self)

    __hash__ = None


class ByteLevel(ByteLevelOptions, PreTokenizer):
    """GPT-2's bytes as printable characters; ``add_prefix_space`` puts a space first when the
    piece does not start with one, ``use_regex`` cuts by GPT-2's pattern first. ``trim_offsets``
    belongs to the post-processor and is kept for the JSON form."""

    @staticmethod
    def alphabet() -> list[str]:
        """The 256 characters that stand for the bytes."""
        from ..pre_tokenizers import ByteLevel as _Old

        return _Old.alphabet()

    def _build(self):
        return _core.CorePreTokenizer.byte_level(
            self.add_prefix_space, self.trim_offsets, self.use_regex
        )


class Metaspace(PreTokenizer):
    """Spaces as ``replacement`` (``▁``), one put first as ``prepend_scheme`` says (``always``,
    ``first``: only at the start of the text, ``never``), and with ``split`` a piece per word."""

    _fields = ("replacement", "prepend_scheme", "split")

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True):
        self.replacement = one_char("replacement", replacement)
        self.prepend_scheme = prepend_scheme_of(prepend_scheme)
        self.split = bool(split)

    def _build(self):
        return _core.CorePreTokenizer.metaspace(self.replacement, self.prepend_scheme, self.split)


class Sequence(SequenceOf, PreTokenizer):
    """The pre-tokenizers of ``pretokenizers``, one after the other."""

    _fields = ("pretokenizers",)
    _items = "pretokenizers"
    _kind = PreTokenizer

    def __init__(self, pretokenizers: list[PreTokenizer]):
        super().__init__(pretokenizers)

    def _build(self):
        return _core.CorePreTokenizer.sequence([p._core_object() for p in self.pretokenizers])
