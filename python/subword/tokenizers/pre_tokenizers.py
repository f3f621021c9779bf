"""``subword.tokenizers.pre_tokenizers``: HF ``tokenizers.pre_tokenizers``, each a thin wrapper of a
Rust ``CorePreTokenizer`` built from its typed fields (``rust/pre_tokenizers/``)."""

from __future__ import annotations

from typing import Any

from .. import _core

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
    "Whitespace",
    "WhitespaceSplit",
]

_BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")


def _behavior(value: str) -> str:
    if value not in _BEHAVIORS:
        raise ValueError(f"unknown split behavior {value!r}: use one of {', '.join(_BEHAVIORS)}")
    return value


class PreTokenizer:
    """Base class of the pre-tokenizers (HF's ``tokenizers.pre_tokenizers.PreTokenizer``).

    A subclass lists its constructor arguments in ``_fields``; changing one rebuilds the core
    object on next use."""

    _fields: tuple[str, ...] = ()

    def _build(self) -> Any:
        raise NotImplementedError

    def _core_pre_tokenizer(self) -> Any:
        core = self.__dict__.get("_core_cache")
        if core is None:
            core = self._build()
            object.__setattr__(self, "_core_cache", core)
        return core

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        self.__dict__.pop("_core_cache", None)

    def pre_tokenize_str(self, sequence: str) -> list[tuple[str, tuple[int, int]]]:
        """The pieces of ``sequence`` with their (start, end) character offsets."""
        if not isinstance(sequence, str):
            raise TypeError(f"pre_tokenize_str expects a str, got {type(sequence).__name__}")
        return self._core_pre_tokenizer().pre_tokenize_str(sequence)

    def _args(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __reduce__(self):
        return (type(self), self._args())

    def __getstate__(self) -> bytes:
        """HF's JSON form (tokenizer.json), as HF's ``__getstate__`` gives it."""
        return self._core_pre_tokenizer().to_json_str().encode()

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._args() == self._args()

    __hash__ = None  # mutable, like HF's


class Whitespace(PreTokenizer):
    """Runs of word characters and runs of other non-space characters (``\\w+|[^\\w\\s]+``)."""

    def _build(self):
        return _core.CorePreTokenizer.whitespace()


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
        if not isinstance(delimiter, str) or len(delimiter) != 1:
            raise ValueError(
                f"delimiter: expected a string of length 1 (one character), got {delimiter!r}"
            )
        self.delimiter = delimiter

    def _build(self):
        return _core.CorePreTokenizer.char_delimiter_split(self.delimiter)


class Split(PreTokenizer):
    """Cut at the matches of ``pattern`` (a str, matched literally, or a ``tokenizers.Regex``)
    under ``behavior``; ``invert`` swaps matches and the rest. As in HF, the pattern cannot be
    read or changed afterwards."""

    _fields = ("behavior", "invert")

    def __init__(self, pattern: Any, behavior: str, invert: bool = False):
        from . import Regex

        if not isinstance(pattern, (str, Regex)):
            raise TypeError(
                f"Split expects a str or a tokenizers.Regex pattern, got {type(pattern).__name__}"
            )
        object.__setattr__(self, "_pattern", pattern)
        self.behavior = _behavior(behavior)
        self.invert = bool(invert)
        self._core_pre_tokenizer()  # a bad regex fails here, not on first use

    @property
    def pattern(self):
        raise AttributeError("Split.pattern cannot be read; make a new Split to change it")

    @pattern.setter
    def pattern(self, value):
        raise AttributeError("Split.pattern cannot be set; make a new Split to change it")

    def _build(self):
        from . import Regex

        p = self.__dict__["_pattern"]
        regex = isinstance(p, Regex)
        return _core.CorePreTokenizer.split(
            p.pattern if regex else p, regex, self.behavior, self.invert
        )

    def _args(self) -> tuple:
        return (self.__dict__["_pattern"], self.behavior, self.invert)

    def __eq__(self, other: object) -> bool:
        def key(s):
            p = s.__dict__["_pattern"]
            return (type(p).__name__, getattr(p, "pattern", p), s.behavior, s.invert)

        return type(other) is Split and key(other) == key(self)

    __hash__ = None

    def __repr__(self) -> str:
        return (
            f"Split(pattern={self.__dict__['_pattern']!r}, behavior={self.behavior!r}, "
            f"invert={self.invert!r})"
        )


class ByteLevel(PreTokenizer):
    """GPT-2's bytes as printable characters; ``add_prefix_space`` puts a space first when the
    piece does not start with one, ``use_regex`` cuts by GPT-2's pattern first. ``trim_offsets``
    belongs to the post-processor and is kept for the JSON form."""

    _fields = ("add_prefix_space", "trim_offsets", "use_regex")

    def __init__(
        self,
        add_prefix_space: bool = True,
        trim_offsets: bool = True,
        use_regex: bool = True,
        **kwargs: Any,
    ):
        unknown = {k: v for k, v in kwargs.items() if not (k == "type" and v == "ByteLevel")}
        if unknown:
            raise TypeError(f"ByteLevel got unknown options {sorted(unknown)}")
        self.add_prefix_space = bool(add_prefix_space)
        self.trim_offsets = bool(trim_offsets)
        self.use_regex = bool(use_regex)

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
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise ValueError(
                f"replacement: expected a string of length 1 (one character), got {replacement!r}"
            )
        if prepend_scheme not in ("always", "first", "never"):
            raise ValueError(
                f"unknown prepend_scheme {prepend_scheme!r}: use always, first or never"
            )
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = bool(split)

    def _build(self):
        return _core.CorePreTokenizer.metaspace(self.replacement, self.prepend_scheme, self.split)


class Sequence(PreTokenizer):
    """The pre-tokenizers of ``pretokenizers``, one after the other."""

    _fields = ("pretokenizers",)

    def __init__(self, pretokenizers: list[PreTokenizer]):
        items = list(pretokenizers)
        for k, p in enumerate(items):
            if not isinstance(p, PreTokenizer):
                raise TypeError(
                    f"Sequence expects pre-tokenizers, got {type(p).__name__} at position {k}"
                )
        self.pretokenizers = items

    def _build(self):
        return _core.CorePreTokenizer.sequence(
            [p._core_pre_tokenizer() for p in self.pretokenizers]
        )

    def pre_tokenize_str(self, sequence: str) -> list[tuple[str, tuple[int, int]]]:
        self.__dict__.pop("_core_cache", None)  # a member may have changed since
        return super().pre_tokenize_str(sequence)

    def __len__(self) -> int:
        return len(self.pretokenizers)

    def __getitem__(self, index: int) -> PreTokenizer:
        return self.pretokenizers[index]

    def __setitem__(self, index: int, value: PreTokenizer) -> None:
        if not isinstance(value, PreTokenizer):
            raise TypeError(f"Sequence items are pre-tokenizers, got {type(value).__name__}")
        self.pretokenizers[index] = value
        self.__dict__.pop("_core_cache", None)

    def __reduce__(self):
        return (Sequence, (list(self.pretokenizers),))
