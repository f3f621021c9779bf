"""``subword.tokenizers.normalizers``: HF ``tokenizers.normalizers``, each a thin wrapper of a
Rust ``CoreNormalizer`` built from its typed fields (``rust/normalizers/``)."""

from __future__ import annotations

from typing import Any

from .. import _core
from ._component import Component, CustomComponent, SequenceOf, literal_or_regex

__all__ = [
    "BertNormalizer",
    "ByteLevel",
    "Lowercase",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Nmt",
    "Normalizer",
    "Precompiled",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
]


class Normalizer(Component):
    """Base class of the normalizers (HF's ``tokenizers.normalizers.Normalizer``)."""

    def normalize_str(self, sequence: str) -> str:
        """The normalized form of ``sequence``."""
        if not isinstance(sequence, str):
            raise TypeError(f"normalize_str expects a str, got {type(sequence).__name__}")
        return self._core_object().normalize_str(sequence)

    def normalize(self, normalized: _core.NormalizedString) -> None:
        """Normalize ``normalized`` (a ``tokenizers.NormalizedString``) in place."""
        if not isinstance(normalized, _core.NormalizedString):
            raise TypeError(
                f"normalize expects a NormalizedString, got {type(normalized).__name__}"
            )
        self._core_object().normalize(normalized)

    @staticmethod
    def custom(normalizer: Any) -> Normalizer:
        """A Python object with a ``normalize(normalized)`` method as a normalizer; it edits
        the ``NormalizedString`` it is lent, which is only valid during that call."""
        return _Custom(normalizer)


class _Custom(CustomComponent, Normalizer):
    _kind = "Normalizer"

    def _build(self):
        return _core.CoreNormalizer.custom(self.__dict__["_obj"])


def _unicode(form: str, doc: str) -> type[Normalizer]:
    def _build(self):
        return _core.CoreNormalizer.unicode(form)

    return type(form, (Normalizer,), {"__doc__": doc, "_build": _build, "__module__": __name__})


NFC = _unicode("NFC", "Unicode canonical composition (HF's tables, Unicode 9).")
NFD = _unicode("NFD", "Unicode canonical decomposition (HF's tables, Unicode 9).")
NFKC = _unicode("NFKC", "Unicode compatibility composition (HF's tables, Unicode 9).")
NFKD = _unicode("NFKD", "Unicode compatibility decomposition (HF's tables, Unicode 9).")


class Lowercase(Normalizer):
    """Each character's full lowercase mapping, character by character."""

    def _build(self):
        return _core.CoreNormalizer.lowercase()


class StripAccents(Normalizer):
    """Drops combining marks; meant to follow NFD or NFKD."""

    def _build(self):
        return _core.CoreNormalizer.strip_accents()


class ByteLevel(Normalizer):
    """Each UTF-8 byte as GPT-2's printable character (the byte-level alphabet)."""

    def _build(self):
        return _core.CoreNormalizer.byte_level()


class Nmt(Normalizer):
    """SentencePiece's NMT clean-up: control characters dropped; tabs, line breaks and a few
    invisible characters made plain spaces."""

    def _build(self):
        return _core.CoreNormalizer.nmt()


class Precompiled(Normalizer):
    """SentencePiece's compiled normalization rules: ``precompiled_charsmap`` is the bytes of a
    model's ``normalizer_spec.precompiled_charsmap`` (as in a converted tokenizer.json)."""

    def __init__(self, precompiled_charsmap: bytes | bytearray | list[int]):
        if isinstance(precompiled_charsmap, str) or not isinstance(
            precompiled_charsmap, (bytes, bytearray, list)
        ):
            raise TypeError(
                "Precompiled expects the charsmap as bytes, got "
                f"{type(precompiled_charsmap).__name__}"
            )
        object.__setattr__(self, "_charsmap", bytes(precompiled_charsmap))
        self._core_object()  # a malformed charsmap fails here, not on first use

    @property
    def precompiled_charsmap(self):
        raise AttributeError("Precompiled.precompiled_charsmap cannot be read, as in HF")

    def _build(self):
        return _core.CoreNormalizer.precompiled(self.__dict__["_charsmap"])

    def _args(self) -> tuple:
        return (self.__dict__["_charsmap"],)


class Strip(Normalizer):
    """Drops leading (``left``) and trailing (``right``) whitespace."""

    _fields = ("left", "right")

    def __init__(self, left: bool = True, right: bool = True):
        self.left = bool(left)
        self.right = bool(right)

    def _build(self):
        return _core.CoreNormalizer.strip(self.left, self.right)


class Prepend(Normalizer):
    """Puts ``prepend`` before a non-empty text."""

    _fields = ("prepend",)

    def __init__(self, prepend: str):
        if not isinstance(prepend, str):
            raise TypeError(f"Prepend expects a str, got {type(prepend).__name__}")
        self.prepend = prepend

    def _build(self):
        return _core.CoreNormalizer.prepend(self.prepend)


class Replace(Normalizer):
    """Every match of ``pattern`` (a str, matched literally, or a ``tokenizers.Regex``) becomes
    ``content``. As in HF, the pattern cannot be read or changed afterwards."""

    _fields = ("content",)

    def __init__(self, pattern: Any, content: str):
        object.__setattr__(self, "_pattern", literal_or_regex("Replace", pattern))
        if not isinstance(content, str):
            raise TypeError(f"Replace expects a str content, got {type(content).__name__}")
        self.content = content
        self._core_object()  # a bad regex fails here, not on first use

    @property
    def pattern(self):
        raise AttributeError("Replace.pattern cannot be read; make a new Replace to change it")

    @pattern.setter
    def pattern(self, value):
        raise AttributeError("Replace.pattern cannot be set; make a new Replace to change it")

    def _build(self):
        text, regex = self.__dict__["_pattern"]
        return _core.CoreNormalizer.replace(text, self.content, regex)

    def _args(self) -> tuple:
        from . import Regex

        text, regex = self.__dict__["_pattern"]
        return (Regex(text) if regex else text, self.content)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is Replace
            and other.__dict__["_pattern"] == self.__dict__["_pattern"]
            and other.content == self.content
        )

    __hash__ = None


class BertNormalizer(Normalizer):
    """BERT's clean-up: ``clean_text`` drops control characters and makes whitespace spaces;
    ``handle_chinese_chars`` puts spaces around CJK ideographs; ``strip_accents`` (``None``:
    as ``lowercase``) drops accents after NFD; ``lowercase`` folds case."""

    _fields = ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase")

    def __init__(
        self,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
    ):
        self.clean_text = bool(clean_text)
        self.handle_chinese_chars = bool(handle_chinese_chars)
        self.strip_accents = None if strip_accents is None else bool(strip_accents)
        self.lowercase = bool(lowercase)

    def _build(self):
        return _core.CoreNormalizer.bert(
            self.clean_text, self.handle_chinese_chars, self.strip_accents, self.lowercase
        )

    # The WordPiece pipeline still takes its parts as tokenizer.json (until issue 11 moves the
    # whole pipeline into the core).
    def _json(self) -> dict:
        return {"type": "BertNormalizer", **{f: getattr(self, f) for f in self._fields}}

    @classmethod
    def _from_json(cls, d: dict) -> BertNormalizer:
        return cls(
            d.get("clean_text", True),
            d.get("handle_chinese_chars", True),
            d.get("strip_accents"),
            d.get("lowercase", True),
        )


class Sequence(SequenceOf, Normalizer):
    """The normalizers of ``normalizers``, one after the other."""

    _fields = ("normalizers",)
    _items = "normalizers"
    _kind = Normalizer

    def __init__(self, normalizers: list[Normalizer]):
        super().__init__(normalizers)

    def _build(self):
        return _core.CoreNormalizer.sequence([n._core_object() for n in self.normalizers])
