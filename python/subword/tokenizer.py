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
from .tokenizers import models as _hf_models
from .tokenizers import processors as _hf_processors
from .tokenizers._tokenizer import Encoding as _HFEncoding
from .tokenizers._tokenizer import Tokenizer as _HFTokenizer
from .tokenizers.normalizers import NFC as _NFC
from .training import _feed_documents

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


def _is_nfc(normalizer) -> bool:
    return type(normalizer) is _NFC


def _as_hf_processor(value):
    """``subword.processors``' classes as their equal in ``subword.tokenizers.processors``."""
    from . import processors

    if isinstance(value, processors.BertProcessing):
        return _hf_processors.BertProcessing(value.sep, value.cls)
    if isinstance(value, processors.TemplateProcessing):

        def pieces(template):
            out = []
            for p in template:
                ((kind, body),) = p.items()
                out.append(("$" if kind == "Sequence" else "") + f"{body['id']}:{body['type_id']}")
            return out

        return _hf_processors.TemplateProcessing(
            pieces(value.single), pieces(value.pair), list(value._specials.values())
        )
    return value


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
        self._decoder = decoders.ByteLevel()
        # The stages around the model that the rank encoder does not run (a normalizer, a
        # post-processor, truncation, padding) are kept by a drop-in tokenizer, which checks
        # them as HF does; encoding (``_hf``) runs them in the pipeline. Invariant: the rank
        # encoder puts texts in NFC exactly when this normalizer is ``NFC()``, so what
        # ``to_encoding`` gives normalizes as this tokenizer does.
        self._parts = _HFTokenizer(_hf_models.BPE())
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
        """Any ``subword.tokenizers.normalizers`` normalizer (HF's), or None."""
        return self._parts.normalizer

    @normalizer.setter
    def normalizer(self, value):
        self._parts.normalizer = value  # a TypeError for anything else, as in HF
        core = self._core
        if core is not None and _is_nfc(value) != (core.normalize() == "NFC"):
            doc = json.loads(core.to_hf_json(self._prefix_space()))
            doc["normalizer"] = {"type": "NFC"} if _is_nfc(value) else None
            self._load_doc(doc)
        self._pass_parts()

    @property
    def decoder(self):
        return self._decoder

    @decoder.setter
    def decoder(self, value):
        # decode() turns byte-level tokens back into their bytes, which is what ByteLevel does
        # (and None: the ids' bytes are the text); another decoder would be ignored, so it is
        # refused.
        from .tokenizers import decoders as hf_decoders

        if value is not None and not isinstance(value, (decoders.ByteLevel, hf_decoders.ByteLevel)):
            raise ValueError(
                f"the byte-level BPE Tokenizer decodes with ByteLevel; a {type(value).__name__} "
                "decoder would be ignored. Use decoders.ByteLevel(), or subword.tokenizers."
                "Tokenizer.from_str(tok.to_str()) with the decoder you need"
            )
        self._decoder = value

    @property
    def post_processor(self):
        """A ``subword.tokenizers.processors`` post-processor (``subword.processors``' are
        taken as their equal there), or None."""
        return self._parts.post_processor

    @post_processor.setter
    def post_processor(self, value):
        self._parts.post_processor = _as_hf_processor(value)
        self._pass_parts()

    # ----- truncation and padding (HF's, run by the pipeline) -----

    def enable_truncation(self, max_length, stride=0, strategy="longest_first", direction="right"):
        self._parts.enable_truncation(max_length, stride, strategy, direction)
        self._pass_parts()

    def no_truncation(self) -> None:
        self._parts.no_truncation()
        self._pass_parts()

    @property
    def truncation(self) -> dict | None:
        return self._parts.truncation

    def enable_padding(
        self,
        direction="right",
        pad_id=0,
        pad_type_id=0,
        pad_token="[PAD]",
        length=None,
        pad_to_multiple_of=None,
    ) -> None:
        self._parts.enable_padding(
            direction, pad_id, pad_type_id, pad_token, length, pad_to_multiple_of
        )
        self._pass_parts()

    def no_padding(self) -> None:
        self._parts.no_padding()
        self._pass_parts()

    @property
    def padding(self) -> dict | None:
        return self._parts.padding

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._parts.num_special_tokens_to_add(is_pair)

    def post_process(self, encoding, pair=None, add_special_tokens: bool = True):
        """HF's ``post_process``: truncation, the post-processor and padding on results of
        ``encode(..., add_special_tokens=False)``."""
        return self._hf().post_process(encoding, pair, add_special_tokens)

    def _pass_parts(self) -> None:
        made = self.__dict__.get("_hf_of")
        if made is not None:
            made[2]._take_parts(self._parts)

    def _beyond_ranks(self) -> list[str]:
        """The parts set here that a rank encoder (``subword.Encoding``) cannot run."""
        parts, beyond = self._parts, []
        if parts.normalizer is not None and not _is_nfc(parts.normalizer):
            beyond.append(f"a {type(parts.normalizer).__name__} normalizer")
        if parts.post_processor is not None:
            beyond.append("a post-processor")
        if parts.truncation is not None:
            beyond.append("truncation")
        if parts.padding is not None:
            beyond.append("padding")
        return beyond

    def _rank_encoder_for(self, what: str):
        beyond = self._beyond_ranks()
        if beyond:
            raise ValueError(
                f"{what} runs the rank encoder, which has no {', '.join(beyond)}; this "
                "tokenizer would give other ids. Unset them first (normalizer = None, "
                "post_processor = None, no_truncation(), no_padding()), or use encode()"
            )
        return self._ready()

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
                "normalizer": {"type": "NFC"} if _is_nfc(self._parts.normalizer) else None,
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

    def _training_normalizer(self):
        # As HF, the merges are learned from normalized text (the rank encoder's trainer
        # counts what it is given).
        n = self._parts.normalizer
        return None if n is None else n.normalize_str

    def train(self, files: Sequence[str], trainer=None) -> None:
        """Train on text files (each file is one document), normalized first if a normalizer is
        set."""
        if isinstance(files, (str, os.PathLike)):
            files = [files]

        normalize = self._training_normalizer()

        def feed(t, show):
            for f in files:
                if normalize is None:
                    t.feed_file(os.fspath(f), show)
                else:  # the file is one document, normalized as a whole (held in memory)
                    with open(os.fspath(f), encoding="utf-8") as text:
                        _feed_documents(t, [normalize(text.read())])

        self._train(feed, trainer)

    def train_from_iterator(
        self, iterator: Iterable[str], trainer=None, length: int | None = None
    ) -> None:
        """Train on an iterable of str (or of lists of str); each str is one document."""

        normalize = self._training_normalizer()

        def documents():
            for item in iterator:
                for doc in [item] if isinstance(item, str) else item:
                    yield doc if normalize is None or not isinstance(doc, str) else normalize(doc)

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
        try:
            return hf.encode(sequence, pair, is_pretokenized, add_special_tokens)
        except ValueError as e:
            if not isinstance(e.__cause__, UnicodeEncodeError):
                raise
            return hf.encode(
                _cleaned(sequence), _cleaned(pair), is_pretokenized, add_special_tokens
            )

    def _hf(self):
        # HF's Tokenizer (subword.tokenizers) over this tokenizer's model, its pipeline built in
        # the core from the model's tokenizer.json form, made on first use and again when the
        # model or the prefix space changes: encoding is what HF does on the saved file. Read
        # on every call, so the check is written out.
        made = self.__dict__.get("_hf_of")
        core = self._core
        if (
            made is not None
            and core is not None
            and made[0] is core
            and made[1] == bool(self._pre_tokenizer.add_prefix_space)
        ):
            return made[2]
        core, prefix = self._ready(), self._prefix_space()
        pipeline = _core.CorePipeline.of_core_bpe(core, prefix)
        made = (core, prefix, _HFTokenizer._from_core(pipeline))
        made[2]._take_parts(self._parts)
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
        stream = self._rank_encoder_for("encode_iterable").stream("all", ())
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
        """HF's tokenizer.json of every part, written in Rust."""
        return self._hf().to_str(pretty)

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
        around = {k: doc.get(k) for k in ("normalizer", "post_processor", "truncation", "padding")}
        nfc = around["normalizer"] == {"type": "NFC"}
        if nfc:
            del around["normalizer"]
        if any(v is not None for v in around.values()):
            # The parts the rank encoder does not run are read as HF reads them (the drop-in
            # checks each); the rank encoder is made from the rest.
            tok._parts._take_parts(_HFTokenizer.from_str(json_str))
            doc = {**doc, **dict.fromkeys(around)}
        elif nfc:
            tok._parts.normalizer = _NFC()
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
        core = self._rank_encoder_for("to_encoding")
        return Encoding._from_core(name, _pattern_of(core), core)

    @classmethod
    def from_encoding(cls, enc: Encoding, add_prefix_space: bool = False) -> Tokenizer:
        """A tokenizer over ``enc``'s model (shared, not copied)."""
        tok = cls(BPE())
        tok._core = enc._core
        if enc._core.normalize() == "NFC":
            tok._parts.normalizer = _NFC()
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
