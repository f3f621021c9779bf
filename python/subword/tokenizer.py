"""The HF dialect: ``Tokenizer``, a subset of ``tokenizers.Tokenizer`` for byte-level BPE.

The same Rust model serves ``subword.Encoding``; ``to_encoding`` / ``from_encoding`` convert.
Encoding runs the core's pipeline (``rust/pipeline``) over the model's tokenizer.json form, so
results, offsets and pairs are what HF gives on the saved file. A result is HF's ``Encoding``
(``subword.tokenizers.Encoding``); ``subword.Encoded`` is the name every subword result type
answers to in ``isinstance`` (``subword.Encoding`` being the tiktoken-style tokenizer class).
"""

from __future__ import annotations

import json
import os
from abc import ABCMeta
from typing import Iterable, Iterator, Sequence

from . import _checks, _core, _files, decoders, pre_tokenizers
from .encoding import (
    Encoding,
    _pattern_of,
    _stream_ids,
    _without_lone_surrogates,
)
from .models import BPE
from .tokenizers._tokenizer import Encoding as _HFEncoding
from .tokenizers._tokenizer import Tokenizer as _HFTokenizer

__all__ = ["Tokenizer", "Encoded"]


class Encoded(metaclass=ABCMeta):  # noqa: B024 - an ABC only so the result classes can register
    """The result of ``Tokenizer.encode``: HF's ``Encoding`` (ids, tokens, character offsets,
    type ids, masks, word and sequence ids, overflowing). The byte-level tokenizer returns
    ``subword.tokenizers.Encoding`` (the pipeline's result), WordPiece the Rust class
    ``subword._core.Encoded``; ``isinstance(x, Encoded)`` holds for both."""

    __slots__ = ()


Encoded.register(_core.Encoded)
# What an unpickled Rust result comes back as (subword.tokenizers' result class).
Encoded.register(_HFEncoding)


def _nfc_normalizer():
    from .tokenizers.normalizers import NFC

    return NFC()


class Tokenizer:
    """Byte-level BPE with HF's workflow::

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train(["corpus.txt"], trainers.BpeTrainer(vocab_size=8000, special_tokens=["<|eot|>"]))
    tok.encode("hello").ids
    tok.save("tokenizer.json")
    """

    def __new__(cls, model=None, *args, **kwargs):
        from .models import WordPiece

        if cls is Tokenizer and isinstance(model, WordPiece):
            from .wordpiece import WordPieceTokenizer

            return super().__new__(WordPieceTokenizer)
        return super().__new__(cls)

    def __init__(self, model: BPE):
        if not isinstance(model, BPE):
            raise TypeError("Tokenizer(model): model must be subword.models.BPE or WordPiece")
        self.model = model
        self._pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        self.decoder = decoders.ByteLevel()
        self._normalizer = None
        self._post_processor = None
        self._core = None
        self._added: list[str] = []
        # Added tokens that are not in the model's vocabulary (HF's get_vocab(False) omits them).
        self._outside_model: set[str] = set()

    # ----- configuration -----

    @property
    def pre_tokenizer(self):
        return self._pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, value):
        if not isinstance(value, (pre_tokenizers.ByteLevel, pre_tokenizers.Sequence)):
            raise ValueError(
                f"unsupported pre-tokenizer {type(value).__name__}: use pre_tokenizers.ByteLevel "
                "or Sequence([Split(pattern), ByteLevel(use_regex=False)])"
            )
        if self._core is not None:
            # Keep the vocabulary, change how text is cut.
            doc = json.loads(self._core.to_hf_json(self._prefix_space()))
            doc["pre_tokenizer"] = value._json()
            self._pre_tokenizer = value
            self._load_doc(doc)
        else:
            self._pre_tokenizer = value

    @property
    def normalizer(self):
        """``NFC()`` when texts are put in NFC first (Qwen's files), else None."""
        if self._core is not None:
            return _nfc_normalizer() if self._core.normalize() == "NFC" else None
        return self._normalizer

    @normalizer.setter
    def normalizer(self, value):
        # Anything this tokenizer cannot apply is refused: ignoring it would give other ids
        # than HF's without a word (the full normalizer stage is issue 11's pipeline).
        from .tokenizers.normalizers import NFC

        if value is not None and not isinstance(value, NFC):
            raise ValueError(
                f"the byte-level BPE Tokenizer cannot apply a {type(value).__name__} normalizer "
                "yet (only subword.tokenizers.normalizers.NFC or None); normalize the texts "
                "before encoding, e.g. with subword.tokenizers.normalizers"
            )
        self._normalizer = value
        if self._core is not None:
            doc = json.loads(self._core.to_hf_json(self._prefix_space()))
            doc["normalizer"] = None if value is None else {"type": "NFC"}
            self._load_doc(doc)

    @property
    def post_processor(self):
        return self._post_processor

    @post_processor.setter
    def post_processor(self, value):
        if value is not None:
            raise ValueError(
                f"the byte-level BPE Tokenizer cannot apply a {type(value).__name__} "
                "post-processor yet; it would be silently ignored. Add the special tokens to the "
                "ids yourself, or use the WordPiece Tokenizer, whose post-processors are supported"
            )
        self._post_processor = None

    def _prefix_space(self) -> bool:
        return bool(self._pre_tokenizer.add_prefix_space)

    def _load_doc(self, doc: dict) -> None:
        core, prefix = _core.CoreBPE.from_hf_json(json.dumps(doc), "tokenizer.json")
        self._core = core
        model_vocab = (doc.get("model") or {}).get("vocab") or {}
        self._outside_model = {
            a["content"] for a in doc.get("added_tokens") or [] if a["content"] not in model_vocab
        }
        self._pre_tokenizer = _pre_tokenizer_from_json(doc.get("pre_tokenizer"), prefix)

    def _ready(self):
        if self._core is None:
            if self.model.vocab is None:
                raise ValueError("the model has no vocabulary yet: train it or load one")
            doc = {
                "version": "1.0",
                "added_tokens": [
                    {"id": self.model.vocab[t], "content": t, "special": True}
                    for t in self._added
                    if t in self.model.vocab
                ],
                "normalizer": None if self._normalizer is None else {"type": "NFC"},
                "pre_tokenizer": self._pre_tokenizer._json(),
                "post_processor": None,
                "decoder": {"type": "ByteLevel"},
                "model": self.model._model_json(),
            }
            self._load_doc(doc)
        return self._core

    # ----- training -----

    def _train(self, feed, trainer) -> None:
        from .training import _warn_if_empty

        trainer = trainer or _default_trainer()
        pattern = self._pre_tokenizer._pattern()
        if not isinstance(pattern, str):
            raise ValueError(
                "training with several Split pre-tokenizers in a Sequence is not supported: "
                "train with one Split (or ByteLevel), then set the pre-tokenizer"
            )
        t = _core.Trainer(
            pattern,
            list(dict.fromkeys(self._added + trainer.special_tokens)),
            0,
            self._prefix_space(),
        )
        feed(t, trainer.show_progress)
        _warn_if_empty(t, stacklevel=4)
        self._core = t.finish(
            trainer.vocab_size, trainer.min_frequency, "lexicographic", trainer.show_progress
        )
        self._added = [s for s, _ in self._core.special_tokens()]

    def train(self, files: Sequence[str], trainer=None) -> None:
        """Train on text files (each file is one document)."""
        if isinstance(files, (str, os.PathLike)):
            files = [files]

        def feed(t, show):
            for f in files:
                t.feed_file(os.fspath(f), show)

        self._train(feed, trainer)

    def train_from_iterator(
        self, iterator: Iterable[str], trainer=None, length: int | None = None
    ) -> None:
        """Train on an iterable of str (or of lists of str); each str is one document."""

        from .training import _feed_documents

        def documents():
            for item in iterator:
                yield from [item] if isinstance(item, str) else item

        def feed(t, show):
            _feed_documents(t, documents())

        self._train(feed, trainer)

    # ----- encoding -----

    def encode(
        self,
        sequence,
        pair=None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoded:
        """The tokens of ``sequence`` (and ``pair``), as HF's ``encode``: a str, or with
        ``is_pretokenized`` a list of words; every special token in the text becomes its id."""
        hf = self._hf()
        args = (sequence, pair, is_pretokenized, add_special_tokens)
        try:
            return hf.encode(*args)
        except ValueError as e:
            if not isinstance(e.__cause__, UnicodeEncodeError):
                raise
            return hf.encode(_cleaned(sequence), _cleaned(pair), *args[2:])

    def _hf(self):
        # HF's Tokenizer (subword.tokenizers) over this tokenizer's model, its pipeline built in
        # the core from the model's tokenizer.json form, made on first use and again when the
        # model or the prefix space changes: encoding is what HF does on the saved file.
        core, prefix = self._ready(), self._prefix_space()
        made = self.__dict__.get("_hf_of")
        if made is None or made[0] is not core or made[1] != prefix:
            pipeline = _core.CorePipeline.of_core_bpe(core, prefix)
            made = (core, prefix, _HFTokenizer._from_core(pipeline))
            self._hf_of = made
        return made[2]

    def encode_iterable(self, iterable: Iterable[str]) -> Iterator[int]:
        """The ids of the concatenation of the strings ``iterable`` yields, as soon as no later
        string can change them: ``encode("".join(iterable)).ids``, in bounded memory (see
        ``Encoding.encode_iterable``). Not with ``add_prefix_space``, whose space goes before each
        stretch between specials (encode each text instead)."""
        if self._prefix_space():
            raise ValueError(
                "encode_iterable does not support ByteLevel(add_prefix_space=True): the space goes "
                "before each stretch of text between specials; encode the texts one by one, or "
                "set add_prefix_space=False"
            )
        stream = self._ready().stream("all", ())
        return _stream_ids(stream, iter(iterable))

    def encode_batch(
        self, inputs: Sequence, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list[Encoded]:
        """``encode`` of each item (a sequence or a (sequence, pair) tuple), in parallel in
        Rust without the GIL, as HF's ``encode_batch``."""
        hf = self._hf()
        if not isinstance(inputs, (str, bytes, list)):
            inputs = list(inputs)  # read once: a retry below reads it again
        try:
            return hf.encode_batch(inputs, is_pretokenized, add_special_tokens)
        except ValueError as e:
            if not isinstance(e.__cause__, UnicodeEncodeError):
                raise
            cleaned = [_cleaned(x) for x in inputs]
            return hf.encode_batch(cleaned, is_pretokenized, add_special_tokens)

    # ----- decoding -----

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        """Text of ``ids``; unlike HF, specials are kept by default, so decoding is lossless."""
        core = self._ready()
        if skip_special_tokens:
            ids = [i for i in ids if not core.is_special(i)]
        return core.decode_bytes(ids).decode("utf-8", errors="replace")

    def decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = False
    ) -> list[str]:
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # ----- vocabulary -----

    def token_to_id(self, token: str) -> int | None:
        return self._ready().token_to_id(token)

    def id_to_token(self, id: int) -> str | None:
        return self._ready().id_to_token(id)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        core = self._ready()
        vocab = core.get_vocab()
        if not with_added_tokens:
            for t in self._outside_model:
                vocab.pop(t, None)
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return len(self.get_vocab(with_added_tokens))

    def add_special_tokens(self, tokens: Sequence) -> int:
        """Add special tokens (new ids after the current ones); returns how many were new."""
        tokens = _checks.special_tokens(tokens, "tokens")
        if self._core is None and self.model.vocab is None:
            new = [t for t in tokens if t not in self._added]
            self._added.extend(new)
            return len(new)
        core = self._ready()
        doc = json.loads(core.to_hf_json(self._prefix_space()))
        present = {a["content"] for a in doc["added_tokens"]}
        new = [t for t in dict.fromkeys(tokens) if t not in present]
        next_id = core.max_token_value() + 1
        for k, t in enumerate(new):
            doc["added_tokens"].append(
                {
                    "id": next_id + k,
                    "content": t,
                    "single_word": False,
                    "lstrip": False,
                    "rstrip": False,
                    "normalized": False,
                    "special": True,
                }
            )
        if new:
            # As in HF, tokens added after training stay outside the model's vocabulary.
            outside = self._outside_model | set(new)
            self._load_doc(doc)
            self._outside_model = outside
        return len(new)

    def add_tokens(self, tokens: Sequence) -> int:
        """Like ``add_special_tokens`` (added tokens are matched before pre-tokenization)."""
        return self.add_special_tokens(tokens)

    # ----- files -----

    def to_str(self, pretty: bool = False) -> str:
        text = self._ready().to_hf_json(self._prefix_space())
        return text if pretty else json.dumps(json.loads(text), ensure_ascii=False)

    def save(self, path: str, pretty: bool = True) -> None:
        """Write ``tokenizer.json`` atomically; HF ``Tokenizer.from_file`` reads it."""
        _files.write_atomic(path, self.to_str(pretty))

    @classmethod
    def from_str(cls, json_str: str) -> Tokenizer:
        try:
            doc = json.loads(json_str)
        except json.JSONDecodeError as e:
            raise ValueError(f"tokenizer.json is not valid JSON: {e}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
            raise ValueError('tokenizer.json: expected an object with a "model" object')
        if doc["model"].get("type") == "WordPiece":
            from .wordpiece import WordPieceTokenizer

            return WordPieceTokenizer._from_doc(doc)
        tok = cls(BPE())
        tok._load_doc(doc)
        return tok

    @classmethod
    def from_file(cls, path: str) -> Tokenizer:
        with open(os.fspath(path), encoding="utf-8") as f:
            return cls.from_str(f.read())

    # ----- pickling and equality -----

    def __reduce__(self):
        # A tokenizer with a model pickles as its tokenizer.json (what HF pickles); one not yet
        # trained as its settings.
        if self._core is None and self.model.vocab is None:
            return (_restore, (type(self), dict(vars(self))))
        return (Tokenizer.from_str, (self.to_str(),))

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__reduce__()[1] == other.__reduce__()[1]

    __hash__ = None  # type: ignore[assignment]  # mutable, as HF's

    # ----- the tiktoken dialect -----

    def to_encoding(self, name: str = "tokenizer") -> Encoding:
        """The same model as a ``subword.Encoding`` (tiktoken API). Its ``encode`` adds no prefix
        space, even when this tokenizer's ByteLevel does."""
        core = self._ready()
        return Encoding._from_core(name, _pattern_of(core), core)

    @classmethod
    def from_encoding(cls, enc: Encoding, add_prefix_space: bool = False) -> Tokenizer:
        """A tokenizer over ``enc``'s model (shared, not copied)."""
        tok = cls(BPE())
        tok._core = enc._core
        pattern = enc._core.pattern()
        chain = enc._core.pattern_chain()
        if chain is None and pattern in ("", _core.GPT2_PATTERN):
            tok._pre_tokenizer = pre_tokenizers.ByteLevel(
                add_prefix_space=add_prefix_space, use_regex=bool(pattern)
            )
        else:
            tok._pre_tokenizer = pre_tokenizers.Sequence(
                [
                    *(pre_tokenizers.Split(p) for p in (chain or [pattern])),
                    pre_tokenizers.ByteLevel(add_prefix_space, use_regex=False),
                ]
            )
        return tok


def _cleaned(value):
    """An input with lone surrogates replaced (as ``subword.Encoding`` replaces them, following
    tiktoken): a str, a list or tuple of them (words, a pair), or None."""
    if isinstance(value, str):
        return _without_lone_surrogates(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_cleaned(v) for v in value)
    return value


def _restore(cls, state: dict) -> Tokenizer:
    tok = object.__new__(cls)
    tok.__dict__.update(state)
    return tok


def _pre_tokenizer_from_json(pre: dict | None, prefix: bool):
    if pre and pre.get("type") == "Sequence":
        *splits, _ = pre["pretokenizers"]  # the core accepted it: Splits, then ByteLevel
        return pre_tokenizers.Sequence(
            [
                *(pre_tokenizers.Split(split["pattern"]["Regex"]) for split in splits),
                pre_tokenizers.ByteLevel(add_prefix_space=prefix, use_regex=False),
            ]
        )
    use_regex = bool(pre and pre.get("use_regex", True))
    return pre_tokenizers.ByteLevel(add_prefix_space=prefix, use_regex=use_regex)


def _default_trainer():
    from .trainers import BpeTrainer

    return BpeTrainer()
