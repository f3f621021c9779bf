"""``subword.tokenizers.trainers``: HF ``tokenizers.trainers`` — the settings a
``Tokenizer.train`` / ``train_from_iterator`` call learns a model with. The words are counted by
the tokenizer's own pipeline in the core (added tokens cut out, normalizer, pre-tokenizer) and
the model is learned there too (``rust/train/``); these classes only hold and check settings.

HF's options and defaults, and where subword differs on purpose (documented in
``rust/train/char_bpe.rs``): results do not depend on a hash order (ties go to the
lexicographically greatest pair; marked forms get ids in order of first appearance), the
special tokens are cut out of the text before counting, a character left out of the alphabet
splits its word, and WordPiece is scored by likelihood (HF's ``WordPieceTrainer`` is BPE).
"""

from __future__ import annotations

import json
from typing import Any

from .. import _checks
from ._added import AddedToken, as_added

__all__ = ["BpeTrainer", "Trainer", "UnigramTrainer", "WordLevelTrainer", "WordPieceTrainer"]


def _count(name: str, value: Any, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        what = "an int >= 0" + (" or None" if optional else "")
        raise TypeError(f"{name} must be {what}, got {value!r}")
    return value


def _chars(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        raise TypeError(
            "initial_alphabet must be a list of characters, not a str: pass list(...) of it"
        )
    out = []
    for k, c in enumerate(value):
        if not isinstance(c, str) or not c:
            raise TypeError(f"initial_alphabet[{k}] must be a non-empty str, got {c!r}")
        # As HF: a longer string contributes its first character.
        out.append(c[0])
    return sorted(set(out))


def _copy(token: Any) -> Any:
    if isinstance(token, AddedToken):
        return AddedToken(**token.__getstate__())
    return token


def _marker(name: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{name} must be a str or None, got {type(value).__name__}")
    return value


def _setting(name: str, check) -> property:
    """A trainer setting: stored checked (as ``check(name, value)`` gives it back)."""
    slot = "_" + name

    def get(self):
        value = getattr(self, slot)
        return list(value) if isinstance(value, list) else value

    def set(self, value) -> None:
        setattr(self, slot, check(name, value))

    return property(get, set)


def _optional_count(name: str, value: Any) -> int | None:
    return _count(name, value, optional=True)


class Trainer:
    """Base class of the trainers (HF's ``tokenizers.trainers.Trainer``)."""

    # (attribute, HF's JSON name) in HF's order, for __getstate__.
    _state_fields: tuple[str, ...] = ()

    @property
    def special_tokens(self) -> list[AddedToken]:
        return list(self._special_tokens)

    @special_tokens.setter
    def special_tokens(self, tokens) -> None:
        _checks.special_tokens(tokens)
        # Copies made special (as HF's trainers hold them); the caller's tokens stay as given.
        self._special_tokens = [as_added(_copy(t), True) for t in tokens]

    def _special_strings(self) -> list[str]:
        return [t.content for t in self._special_tokens]

    vocab_size = _setting("vocab_size", _count)
    min_frequency = _setting("min_frequency", _count)
    show_progress = _setting("show_progress", lambda _, v: bool(v))

    def _state(self) -> dict:
        out = {}
        for name in self._state_fields:
            value = getattr(self, name)
            if name == "special_tokens":
                value = [
                    {"content": t.content, "single_word": t.single_word, "lstrip": t.lstrip,
                     "rstrip": t.rstrip, "normalized": t.normalized, "special": t.special}
                    for t in value
                ]  # fmt: skip
            out[name] = value
        return out

    # HF's pickled form nests some trainers' fields one level down (WordPiece's in its BPE
    # trainer's): the key of that level, or None.
    _nested: str | None = None

    def __getstate__(self) -> bytes:
        """HF's pickled form: the trainer as JSON (with ``words``, counted at training)."""
        body = self._state()
        body["words"] = {}
        if self._nested:
            body = {self._nested: body}
        return json.dumps({type(self).__name__: body}, separators=(",", ":")).encode()

    def __setstate__(self, state: bytes) -> None:
        doc = json.loads(state)
        (name, body), = doc.items()  # fmt: skip
        if name != type(self).__name__:
            raise ValueError(f"state of a {name}, not of a {type(self).__name__}")
        if self._nested:
            body = body[self._nested]
        body.pop("words", None)
        body.pop("progress_format", None)
        specials = [AddedToken(**t) for t in body.pop("special_tokens", [])]
        self.__init__(**body)
        self._special_tokens = specials

    def __reduce__(self):
        return (type(self), (), self.__getstate__())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._state().items())
        return f"{type(self).__name__}({args})"


class BpeTrainer(Trainer):
    """Learns a ``models.BPE``: merges of characters ranked by count, with HF's options
    (``limit_alphabet``, ``initial_alphabet``, ``continuing_subword_prefix``,
    ``end_of_word_suffix``, ``max_token_length``). ``vocab_size`` counts the special tokens,
    the alphabet and its marked forms, and the learned tokens."""

    _state_fields = (
        "min_frequency",
        "vocab_size",
        "show_progress",
        "progress_format",
        "special_tokens",
        "limit_alphabet",
        "initial_alphabet",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "max_token_length",
    )
    progress_format = "Indicatif"

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: list | None = None,
        limit_alphabet: int | None = None,
        initial_alphabet: list[str] | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
    ):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.show_progress = show_progress
        self.special_tokens = [] if special_tokens is None else special_tokens
        self.limit_alphabet = limit_alphabet
        self.initial_alphabet = initial_alphabet
        self.continuing_subword_prefix = continuing_subword_prefix
        self.end_of_word_suffix = end_of_word_suffix
        self.max_token_length = max_token_length

    limit_alphabet = _setting("limit_alphabet", _optional_count)
    initial_alphabet = _setting("initial_alphabet", lambda _, v: _chars(v))
    continuing_subword_prefix = _setting("continuing_subword_prefix", _marker)
    end_of_word_suffix = _setting("end_of_word_suffix", _marker)
    max_token_length = _setting("max_token_length", _optional_count)


class WordPieceTrainer(BpeTrainer):
    """Learns a ``models.WordPiece``: HF's options (``continuing_subword_prefix`` defaults to
    ``##``), pairs scored by likelihood, count(ab) / (count(a) · count(b)), as WordPiece is
    defined (HF's trainer ranks by count). Every kept character is in the vocabulary both as
    ``c`` and as ``##c``, so any word spelled in the alphabet encodes. ``initial_alphabet``,
    ``end_of_word_suffix`` and ``max_token_length`` are held as HF holds them, but training
    with any of them set is refused (a ValueError), not silently done without."""

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: list | None = None,
        limit_alphabet: int | None = None,
        initial_alphabet: list[str] | None = None,
        continuing_subword_prefix: str = "##",
        end_of_word_suffix: str | None = None,
        max_token_length: int | None = None,
    ):
        super().__init__(
            vocab_size,
            min_frequency,
            show_progress,
            special_tokens,
            limit_alphabet,
            initial_alphabet,
            continuing_subword_prefix,
            end_of_word_suffix,
            max_token_length,
        )

    _nested = "bpe_trainer"


class WordLevelTrainer(Trainer):
    """Learns a ``models.WordLevel``: the special tokens, then the counted words, most frequent
    first (ties in word order), those under ``min_frequency`` left out, ``vocab_size`` in all."""

    _state_fields = ("min_frequency", "vocab_size", "show_progress", "special_tokens")

    def __init__(
        self,
        vocab_size: int = 30000,
        min_frequency: int = 0,
        show_progress: bool = True,
        special_tokens: list | None = None,
    ):
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.show_progress = show_progress
        self.special_tokens = [] if special_tokens is None else special_tokens


class UnigramTrainer(Trainer):
    """HF's Unigram trainer: not in subword yet (the Unigram model is a later issue)."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError(
            "UnigramTrainer is not supported yet: subword has no Unigram model (a later "
            "issue); train a BPE, WordPiece or WordLevel model instead"
        )
