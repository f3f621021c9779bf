"""``subword.tokenizers.decoders``: HF ``tokenizers.decoders``, each a thin wrapper of a Rust
``CoreDecoder`` built from its typed fields (``rust/decoders/``)."""

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
from ._component import prepend_scheme as prepend_scheme_of

__all__ = [
    "BPEDecoder",
    "ByteFallback",
    "ByteLevel",
    "CTC",
    "DecodeStream",
    "Decoder",
    "Fuse",
    "Metaspace",
    "Replace",
    "Sequence",
    "Strip",
    "WordPiece",
]


class Decoder(Component):
    """Base class of the decoders (HF's ``tokenizers.decoders.Decoder``)."""

    def decode(self, tokens: list[str]) -> str:
        """The text of ``tokens`` (a list of token strings)."""
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            raise TypeError("decode expects a list of token strings")
        return self._core_object().decode(list(tokens))

    @staticmethod
    def custom(decoder: Any) -> Decoder:
        """A Python object with a ``decode_chain(tokens) -> list[str]`` method as a decoder;
        as in HF, its pieces are joined (its own ``decode``, if any, is not called)."""
        return _Custom(decoder)


class _Custom(CustomComponent, Decoder):
    _kind = "Decoder"

    def _build(self):
        return _core.CoreDecoder.custom(self.__dict__["_obj"])


class ByteLevel(ByteLevelOptions, Decoder):
    """GPT-2's byte alphabet back to text. HF's ByteLevel options are kept (its JSON form has
    them) but do not change decoding; ``type="ByteLevel"`` is accepted so that
    ``ByteLevel(**json.loads(d.__getstate__()))`` works, as in HF."""

    def _build(self):
        return _core.CoreDecoder.byte_level(
            self.add_prefix_space, self.trim_offsets, self.use_regex
        )


class ByteFallback(Decoder):
    """``<0xAB>`` byte tokens back to text; invalid UTF-8 becomes U+FFFD per byte."""

    def _build(self):
        return _core.CoreDecoder.byte_fallback()


class Fuse(Decoder):
    """All tokens into one."""

    def _build(self):
        return _core.CoreDecoder.fuse()


class WordPiece(Decoder):
    """``prefix`` marks continuations; ``cleanup`` tidies spaces before punctuation."""

    _fields = ("prefix", "cleanup")

    def __init__(self, prefix: str = "##", cleanup: bool = True):
        self.prefix = str(prefix)
        self.cleanup = bool(cleanup)

    def _build(self):
        return _core.CoreDecoder.wordpiece(self.prefix, self.cleanup)


class Metaspace(Decoder):
    """``replacement`` back to spaces, dropped in the first token unless ``prepend_scheme`` is
    ``"never"``."""

    _fields = ("replacement", "prepend_scheme", "split")

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True):
        self.replacement = one_char("replacement", replacement)
        self.prepend_scheme = prepend_scheme_of(prepend_scheme)
        self.split = bool(split)

    def _build(self):
        return _core.CoreDecoder.metaspace(self.replacement, self.prepend_scheme, self.split)


class BPEDecoder(Decoder):
    """``suffix`` ends a word (a space, except at the very end)."""

    _fields = ("suffix",)

    def __init__(self, suffix: str = "</w>"):
        self.suffix = str(suffix)

    def _build(self):
        return _core.CoreDecoder.bpe(self.suffix)


class CTC(Decoder):
    """CTC output: repeats merged, ``pad_token`` dropped, ``word_delimiter_token`` a space."""

    _fields = ("pad_token", "word_delimiter_token", "cleanup")

    def __init__(
        self, pad_token: str = "<pad>", word_delimiter_token: str = "|", cleanup: bool = True
    ):
        self.pad_token = str(pad_token)
        self.word_delimiter_token = str(word_delimiter_token)
        self.cleanup = bool(cleanup)

    def _build(self):
        return _core.CoreDecoder.ctc(self.pad_token, self.word_delimiter_token, self.cleanup)


class Strip(Decoder):
    """Up to ``left`` leading and ``right`` trailing ``content`` characters off each token."""

    _fields = ("content", "left", "right")

    def __init__(self, content: str = " ", left: int = 0, right: int = 0):
        self.content = one_char("content", content)
        if not (isinstance(left, int) and isinstance(right, int)) or left < 0 or right < 0:
            raise ValueError(f"left and right must be counts (ints >= 0), got {left!r}, {right!r}")
        self.left, self.right = left, right

    def _build(self):
        return _core.CoreDecoder.strip(self.content, self.left, self.right)


class Replace(Decoder):
    """Every match of ``pattern`` (a str, matched literally, or a ``tokenizers.Regex``) in each
    token becomes ``content``."""

    _fields = ("pattern", "content")

    def __init__(self, pattern: Any, content: str):
        literal_or_regex("Replace", pattern)
        self.pattern = pattern
        self.content = str(content)
        self._core_object()  # a bad regex fails here

    def _build(self):
        text, regex = literal_or_regex("Replace", self.pattern)
        return _core.CoreDecoder.replace(text, self.content, regex)

    def __eq__(self, other: object) -> bool:
        def key(d):
            return (type(d.pattern).__name__, getattr(d.pattern, "pattern", d.pattern), d.content)

        return type(other) is Replace and key(other) == key(self)

    __hash__ = None


class Sequence(SequenceOf, Decoder):
    """The decoders of ``decoders``, one after the other."""

    _fields = ("decoders",)
    _items = "decoders"
    _kind = Decoder

    def __init__(self, decoders: list[Decoder]):
        super().__init__(decoders)

    def _build(self):
        return _core.CoreDecoder.sequence([d._core_object() for d in self.decoders])


def _stream_ids(ids: Any) -> list[int]:
    if isinstance(ids, int) and not isinstance(ids, bool):
        return [ids]
    if isinstance(ids, (list, tuple)) and all(
        isinstance(i, int) and not isinstance(i, bool) for i in ids
    ):
        return list(ids)
    raise TypeError(
        f"DecodeStream.step takes an id (int) or a list of ids, got {type(ids).__name__}"
    )


class DecodeStream:
    """HF's ``tokenizers.decoders.DecodeStream``: ids decoded as they arrive, each ``step``
    returning the text they add, or None while it ends inside a character (the algorithm is
    in ``rust/pipeline/decode_stream.rs``). ``ids`` are context already shown."""

    __slots__ = ("_inner",)

    def __init__(self, ids: list[int] | None = None, skip_special_tokens: bool = False):
        self._inner = _core.CoreDecodeStream(
            [] if ids is None else _stream_ids(ids), bool(skip_special_tokens)
        )

    def step(self, tokenizer, id: int | list[int]) -> str | None:  # noqa: A002 (HF's name)
        core = getattr(tokenizer, "_core", None)
        if core is None:
            raise TypeError(
                "DecodeStream.step takes a subword.tokenizers.Tokenizer, "
                f"got {type(tokenizer).__name__}"
            )
        return self._inner.step(core(), _stream_ids(id))

    def __copy__(self) -> DecodeStream:
        other = DecodeStream.__new__(DecodeStream)
        other._inner = self._inner.copy()
        return other

    def __deepcopy__(self, memo) -> DecodeStream:
        return self.__copy__()
