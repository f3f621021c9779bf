"""``subword.tokenizers.models``: HF ``tokenizers.models``, each a thin wrapper of a Rust
``CoreModel`` (``rust/models/``): ``BPE``, ``WordLevel`` and ``WordPiece``; ``Unigram`` is
not implemented yet."""

from __future__ import annotations

import json
import os
from typing import Any

from .. import _core
from ._component import Component

__all__ = ["BPE", "Model", "Token", "Unigram", "WordLevel", "WordPiece"]


class Token:
    """One token a model made (HF's ``tokenizers.Token``): id, string, byte range."""

    __slots__ = ("id", "value", "offsets")

    def __init__(self, id: int, value: str, offsets: tuple[int, int]):
        self.id, self.value, self.offsets = id, value, tuple(offsets)

    def as_tuple(self) -> tuple[int, str, tuple[int, int]]:
        return (self.id, self.value, self.offsets)

    def __repr__(self) -> str:
        return f"Token(id={self.id}, value={self.value!r}, offsets={self.offsets})"


class Model(Component):
    """Base class of the models (HF's ``tokenizers.models.Model``).

    A model read from a tokenizer.json keeps its vocabulary (and a BPE its merges) in the core
    only: the fields ``vocab`` and ``merges`` are read from it when first asked for. As Python
    objects a Llama 3 model's took ~100 MB that most programs never look at."""

    # Fields read from the core object on first use (see ``_from_core``).
    _lazy: tuple[str, ...] = ("vocab",)

    @classmethod
    def _from_core(cls, core: Any, settings: dict) -> Model:
        """The model of ``core`` (whose tokenizer.json form, without the lazy fields, is
        ``settings``), keeping ``core`` as its own."""
        obj = cls(**settings)
        for name in cls._lazy:
            obj.__dict__.pop(name, None)
        obj.__dict__["_lazy_source"] = core
        obj.__dict__["_core_cache"] = core
        return obj

    def __getattr__(self, name: str) -> Any:
        # Only reached for a missing attribute: a lazy field not read yet.
        source = self.__dict__.get("_lazy_source")
        if source is None or name not in type(self)._lazy:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        value = dict(source.vocab_items()) if name == "vocab" else source.merges()
        self.__dict__[name] = value  # not through __setattr__: the core still holds it
        return value

    def tokenize(self, sequence: str) -> list[Token]:
        """The tokens of one pre-token."""
        if not isinstance(sequence, str):
            raise TypeError(f"tokenize expects a str, got {type(sequence).__name__}")
        return [Token(*t) for t in self._core_object().tokenize(sequence)]

    def token_to_id(self, token: str) -> int | None:
        return self._core_object().token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        return self._core_object().id_to_token(id)

    def get_vocab(self) -> dict[str, int]:
        return self._core_object().get_vocab()

    def get_vocab_size(self) -> int:
        return self._core_object().get_vocab_size()


def _check_vocab(vocab) -> None:
    for token, id in vocab.items():
        if not isinstance(token, str) or isinstance(id, bool) or not isinstance(id, int):
            raise TypeError(f"vocab entries are str: int, got {token!r}: {id!r}")
        if not 0 <= id < 2**32:
            raise ValueError(f"vocab id of {token!r} must be in 0..2**32, got {id}")


def _vocab_arg(owner: str, vocab) -> dict:
    if isinstance(vocab, (str, os.PathLike)):
        raise TypeError(f"{owner}(vocab) takes a dict; use {owner}.from_file for a path")
    if vocab is not None and not isinstance(vocab, dict):
        raise TypeError(f"vocab must be a dict of token: id, got {type(vocab).__name__}")
    return dict(vocab or {})


class WordLevel(Model):
    """Each pre-token is one token; what the vocabulary lacks is ``unk_token``."""

    _fields = ("vocab", "unk_token")

    def __init__(self, vocab: dict[str, int] | str | None = None, unk_token: str | None = None):
        self.vocab = _vocab_arg("WordLevel", vocab)
        self.unk_token = "<unk>" if unk_token is None else unk_token

    def _build(self) -> Any:
        _check_vocab(self.vocab)
        if not isinstance(self.unk_token, str):
            raise TypeError(f"unk_token must be a str, got {type(self.unk_token).__name__}")
        return _core.CoreModel.word_level(self.vocab, self.unk_token)

    @staticmethod
    def read_file(vocab: str) -> dict[str, int]:
        """The vocabulary of a ``vocab.json`` file."""
        with open(vocab, encoding="utf-8") as f:
            v = json.load(f)
        if not isinstance(v, dict):
            raise ValueError(f"{vocab}: expected a JSON object of token: id")
        return v

    @classmethod
    def from_file(cls, vocab: str, unk_token: str | None = None) -> WordLevel:
        return cls(cls.read_file(vocab), unk_token)

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``[prefix-]vocab.json`` into ``folder`` (atomically); returns its path."""
        from .._files import write_atomic

        name = f"{prefix}-vocab.json" if prefix else "vocab.json"
        path = os.path.join(folder, name)
        ordered = dict(sorted(self.vocab.items(), key=lambda kv: (kv[1], kv[0])))
        write_atomic(path, json.dumps(ordered, ensure_ascii=False))
        return [path]


class WordPiece(Model):
    """Greedy longest match: the longest word-initial token, then the longest continuation
    (``continuing_subword_prefix`` + piece), and so on; a word with no match somewhere, or longer
    than ``max_input_chars_per_word`` characters, is ``unk_token`` whole. Ids must be
    ``0..len(vocab)``."""

    _fields = ("vocab", "unk_token", "max_input_chars_per_word", "continuing_subword_prefix")

    def __init__(
        self,
        vocab: dict[str, int] | None = None,
        unk_token: str = "[UNK]",
        max_input_chars_per_word: int = 100,
        continuing_subword_prefix: str = "##",
    ):
        self.vocab = _vocab_arg("WordPiece", vocab)
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.continuing_subword_prefix = continuing_subword_prefix

    def _build(self) -> Any:
        _check_vocab(self.vocab)
        for name in ("unk_token", "continuing_subword_prefix"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a str, got {type(getattr(self, name)).__name__}")
        n = self.max_input_chars_per_word
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"max_input_chars_per_word must be an int >= 0, got {n!r}")
        return _core.CoreModel.word_piece(
            self.vocab, self.unk_token, self.continuing_subword_prefix, n
        )

    @staticmethod
    def read_file(vocab: str) -> dict[str, int]:
        """The vocabulary of a ``vocab.txt`` file: one token per line, ids in line order."""
        with open(vocab, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        return {token: id for id, token in enumerate(lines)}

    @classmethod
    def from_file(cls, vocab: str, **kwargs: Any) -> WordPiece:
        return cls(cls.read_file(vocab), **kwargs)

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``[prefix-]vocab.txt`` into ``folder`` (atomically); returns its path."""
        from .._files import write_atomic

        name = f"{prefix}-vocab.txt" if prefix else "vocab.txt"
        path = os.path.join(folder, name)
        by_id = sorted(self.vocab.items(), key=lambda kv: kv[1])
        write_atomic(path, "".join(f"{token}\n" for token, _ in by_id))
        return [path]


def _merges_arg(merges) -> list[tuple[str, str]]:
    if merges is None:
        return []
    if isinstance(merges, (str, os.PathLike)):
        raise TypeError("BPE(merges) takes a list of pairs; use BPE.from_file for paths")
    out = []
    for k, m in enumerate(merges):
        if isinstance(m, str):
            a, sep, b = m.partition(" ")
            if not sep:
                raise ValueError(f"merge {k} {m!r} has no space between its two tokens")
            m = (a, b)
        pair = isinstance(m, (tuple, list)) and len(m) == 2
        if not (pair and all(isinstance(x, str) for x in m)):
            raise TypeError(f"merges are pairs of str, got {m!r} at position {k}")
        out.append((m[0], m[1]))
    return out


def _optional_str(name: str, value) -> None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {type(value).__name__}")


class BPE(Model):
    """Byte-pair encoding with HF's merge-list semantics: a pre-token's characters merge pair by
    pair, lowest merge rank first. Options as HF has them: ``dropout`` (each merge skipped with
    that probability; ``seed`` makes the draws reproducible, a subword extension),
    ``unk_token`` and ``fuse_unk``, ``continuing_subword_prefix``, ``end_of_word_suffix``,
    ``byte_fallback`` (``<0xXX>`` tokens for characters the vocabulary lacks), ``ignore_merges``
    (a pre-token that is a token is taken whole)."""

    _lazy = ("vocab", "merges")
    _fields = (
        "vocab",
        "merges",
        "cache_capacity",
        "dropout",
        "unk_token",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "fuse_unk",
        "byte_fallback",
        "ignore_merges",
        "seed",
    )

    def __init__(
        self,
        vocab: dict[str, int] | None = None,
        merges: list[tuple[str, str]] | None = None,
        cache_capacity: int | None = None,
        dropout: float | None = None,
        unk_token: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        fuse_unk: bool | None = None,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
        seed: int | None = None,
    ):
        self.vocab = _vocab_arg("BPE", vocab)
        self.merges = _merges_arg(merges)
        self.cache_capacity = 10_000 if cache_capacity is None else cache_capacity
        self.dropout = dropout
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.fuse_unk = bool(fuse_unk)
        self.byte_fallback = bool(byte_fallback)
        self.ignore_merges = bool(ignore_merges)
        self.seed = seed

    def _build(self) -> Any:
        _check_vocab(self.vocab)
        for name in ("unk_token", "continuing_subword_prefix", "end_of_word_suffix"):
            _optional_str(name, getattr(self, name))
        d = self.dropout
        if d is not None and (isinstance(d, bool) or not isinstance(d, (int, float))):
            raise TypeError(f"dropout must be a float or None, got {type(d).__name__}")
        for name in ("cache_capacity", "seed"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise ValueError(f"{name} must be an int >= 0, got {v!r}")
        if self.seed is not None and self.seed >= 2**64:
            raise ValueError(f"seed must be below 2**64, got {self.seed}")
        return _core.CoreModel.bpe(
            self.vocab,
            self.merges,
            None if d is None else float(d),
            self.unk_token,
            self.continuing_subword_prefix,
            self.end_of_word_suffix,
            bool(self.fuse_unk),
            bool(self.byte_fallback),
            bool(self.ignore_merges),
            self.cache_capacity,
            self.seed,
        )

    def clear_cache(self) -> None:
        """Forget the words cached so far."""
        self._core_object().clear_cache()

    def resize_cache(self, capacity: int) -> None:
        """Keep at most ``capacity`` words in the cache (0: no cache); the cache starts empty."""
        self.cache_capacity = capacity

    @staticmethod
    def read_file(vocab: str, merges: str) -> tuple[dict[str, int], list[tuple[str, str]]]:
        """The vocabulary of a ``vocab.json`` and the merges of a ``merges.txt`` (one ``a b``
        per line; a first line starting ``#version`` is skipped)."""
        v = WordLevel.read_file(vocab)
        out = []
        with open(merges, encoding="utf-8") as f:
            for n, line in enumerate(f.read().split("\n"), 1):
                if not line or (n == 1 and line.startswith("#version")):
                    continue
                a, sep, b = line.partition(" ")
                if not sep:
                    raise ValueError(
                        f"{merges}: line {n}: expected two tokens and a space, got {line!r}"
                    )
                out.append((a, b))
        return v, out

    @classmethod
    def from_file(cls, vocab: str, merges: str, **kwargs: Any) -> BPE:
        v, m = cls.read_file(vocab, merges)
        return cls(v, m, **kwargs)

    def save(self, folder: str, prefix: str | None = None) -> list[str]:
        """Write ``[prefix-]vocab.json`` and ``[prefix-]merges.txt`` into ``folder``
        (atomically); returns their paths."""
        from .._files import write_atomic

        (vocab_path,) = WordLevel(self.vocab).save(folder, prefix)
        path = os.path.join(folder, f"{prefix}-merges.txt" if prefix else "merges.txt")
        write_atomic(path, "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in self.merges))
        return [vocab_path, path]


class Unigram(Model):
    """HF's Unigram model: not in subword yet (a later issue). The name is here so that code
    importing it runs; making one says so."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError(
            "Unigram is not supported yet: subword has no Unigram model (a later issue); use "
            "a BPE, WordPiece or WordLevel model instead"
        )
