"""``subword.tokenizers.decoders``: HF ``tokenizers.decoders``, each a thin wrapper of a Rust
``CoreDecoder`` built from its typed fields (``rust/decoders/``)."""

from __future__ import annotations

from typing import Any

from .. import _core

__all__ = [
    "BPEDecoder",
    "ByteFallback",
    "ByteLevel",
    "CTC",
    "Decoder",
    "Fuse",
    "Metaspace",
    "Replace",
    "Sequence",
    "Strip",
    "WordPiece",
]


class Decoder:
    """Base class of the decoders (HF's ``tokenizers.decoders.Decoder``).

    A subclass lists its constructor arguments in ``_fields``; changing one rebuilds the core
    object on next use."""

    _fields: tuple[str, ...] = ()

    def _build(self) -> Any:
        raise NotImplementedError

    def _core_decoder(self) -> Any:
        core = self.__dict__.get("_core_cache")
        if core is None:
            core = self._build()
            object.__setattr__(self, "_core_cache", core)
        return core

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        self.__dict__.pop("_core_cache", None)

    def decode(self, tokens: list[str]) -> str:
        """The text of ``tokens`` (a list of token strings)."""
        if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
            raise TypeError("decode expects a list of token strings")
        return self._core_decoder().decode(list(tokens))

    def _args(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __reduce__(self):
        return (type(self), self._args())

    def __getstate__(self) -> bytes:
        """HF's JSON form (tokenizer.json), as HF's ``__getstate__`` gives it."""
        return self._core_decoder().to_json_str().encode()

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._args() == self._args()

    __hash__ = None  # mutable, like HF's


def _char(name: str, value: Any) -> str:
    if not isinstance(value, str) or len(value) != 1:
        raise ValueError(f"{name}: expected a string of length 1 (one character), got {value!r}")
    return value


class ByteLevel(Decoder):
    """GPT-2's byte alphabet back to text. HF's ByteLevel options are kept (its JSON form has
    them) but do not change decoding; ``type="ByteLevel"`` is accepted so that
    ``ByteLevel(**json.loads(d.__getstate__()))`` works, as in HF."""

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
        self.replacement = _char("replacement", replacement)
        if prepend_scheme not in ("always", "first", "never"):
            raise ValueError(
                f"unknown prepend_scheme {prepend_scheme!r}: use always, first or never"
            )
        self.prepend_scheme = prepend_scheme
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
        self.content = _char("content", content)
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
        from . import Regex

        if not isinstance(pattern, (str, Regex)):
            raise TypeError(
                f"Replace expects a str or a tokenizers.Regex pattern, got {type(pattern).__name__}"
            )
        self.pattern = pattern
        self.content = str(content)
        self._core_decoder()  # a bad regex fails here

    def _build(self):
        from . import Regex

        regex = isinstance(self.pattern, Regex)
        text = self.pattern.pattern if regex else self.pattern
        return _core.CoreDecoder.replace(text, self.content, regex)

    def __eq__(self, other: object) -> bool:
        def key(d):
            return (type(d.pattern).__name__, getattr(d.pattern, "pattern", d.pattern), d.content)

        return type(other) is Replace and key(other) == key(self)

    __hash__ = None


class Sequence(Decoder):
    """The decoders of ``decoders``, one after the other."""

    _fields = ("decoders",)

    def __init__(self, decoders: list[Decoder]):
        items = list(decoders)
        for k, d in enumerate(items):
            if not isinstance(d, Decoder):
                raise TypeError(
                    f"Sequence expects decoders, got {type(d).__name__} at position {k}"
                )
        self.decoders = items

    def _build(self):
        return _core.CoreDecoder.sequence([d._core_decoder() for d in self.decoders])

    def decode(self, tokens: list[str]) -> str:
        self.__dict__.pop("_core_cache", None)  # a member may have changed since
        return super().decode(tokens)

    def __len__(self) -> int:
        return len(self.decoders)

    def __getitem__(self, index: int) -> Decoder:
        return self.decoders[index]

    def __reduce__(self):
        return (Sequence, (list(self.decoders),))
