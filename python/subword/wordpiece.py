"""The HF dialect for WordPiece (BERT family): ``Tokenizer(models.WordPiece(...))`` lands here.

The tokenizer is described by the parts HF names (normalizer, pre-tokenizer, model,
post-processor, decoder, truncation, padding); they are assembled into a ``tokenizer.json``
document and the Rust core is built from it, so a saved file and the live tokenizer can never
disagree. All the work (normalizing, matching, templates, padding) happens in Rust.
"""

from __future__ import annotations

import json
from typing import Sequence

from . import _checks, _core, decoders, normalizers, pre_tokenizers, processors
from .models import WordPiece
from .tokenizer import Tokenizer
from .training import _warn_if_empty

__all__ = ["WordPieceTokenizer"]

_STRATEGIES = {
    "longest_first": "LongestFirst",
    "only_first": "OnlyFirst",
    "only_second": "OnlySecond",
}
_DIRECTIONS = {"right": "Right", "left": "Left"}


def _post_from_json(p: dict | None):
    if not p:
        return None
    if p.get("type") == "BertProcessing":
        return processors.BertProcessing._from_json(p)
    return processors.TemplateProcessing._from_json(p)


class WordPieceTokenizer(Tokenizer):
    """BERT-style tokenizer: BertNormalizer → BertPreTokenizer → WordPiece → template."""

    def __init__(self, model: WordPiece):
        if not isinstance(model, WordPiece):
            raise TypeError("model must be subword.models.WordPiece")
        self.model = model
        self._normalizer = None
        self._pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        self._post_processor = None
        self._decoder = None
        self._added: list[dict] = []
        self._truncation: dict | None = None
        self._padding: dict | None = None
        self._core = None

    # ----- parts (each change rebuilds the core on next use) -----

    def _part(name):  # noqa: N805 - a property factory used in the class body
        def get(self):
            return getattr(self, "_" + name)

        def set_(self, value):
            setattr(self, "_" + name, value)
            self._core = None

        return property(get, set_)

    @property
    def normalizer(self):
        return self._normalizer

    @normalizer.setter
    def normalizer(self, value):
        if value is not None and not isinstance(value, normalizers.BertNormalizer):
            raise ValueError(
                "the WordPiece Tokenizer takes a BertNormalizer or None, not "
                f"{type(value).__name__}: normalize the texts first, or use BertNormalizer's "
                "options"
            )
        self._normalizer = value
        self._core = None

    post_processor = _part("post_processor")
    decoder = _part("decoder")

    @property
    def pre_tokenizer(self):
        return self._pre_tokenizer

    @pre_tokenizer.setter
    def pre_tokenizer(self, value):
        if not isinstance(value, pre_tokenizers.BertPreTokenizer):
            raise ValueError(
                f"unsupported pre-tokenizer {type(value).__name__} for WordPiece: use "
                "pre_tokenizers.BertPreTokenizer()"
            )
        self._pre_tokenizer = value

    def _training_normalizer(self):
        return None  # the WordPiece trainer runs the BertNormalizer itself (_train)

    def _doc(self) -> dict:
        if self.model.vocab is None:
            raise ValueError("the model has no vocabulary yet: train it or load one")
        post = self._post_processor
        return {
            "version": "1.0",
            "truncation": self._truncation,
            "padding": self._padding,
            "added_tokens": self._added,
            "normalizer": self._normalizer._json() if self._normalizer is not None else None,
            "pre_tokenizer": self._pre_tokenizer._json(),
            "post_processor": post._json() if post is not None else None,
            "decoder": self._decoder._json() if self._decoder is not None else None,
            "model": self.model._model_json(),
        }

    def _ready(self):
        if self._core is None:
            self._core = _core.WordPieceCore.from_hf_json(json.dumps(self._doc()), "tokenizer")
        return self._core

    @classmethod
    def _from_doc(cls, doc: dict, origin: str = "tokenizer.json") -> WordPieceTokenizer:
        core = _core.WordPieceCore.from_hf_json(json.dumps(doc), origin)  # validates everything
        doc = json.loads(core.to_hf_json())
        m = doc["model"]
        tok = cls(
            WordPiece(
                m["vocab"],
                m["unk_token"],
                m["max_input_chars_per_word"],
                m["continuing_subword_prefix"],
            )
        )
        if doc["normalizer"]:
            tok._normalizer = normalizers.BertNormalizer._from_json(doc["normalizer"])
        tok._post_processor = _post_from_json(doc["post_processor"])
        if doc["decoder"]:
            tok._decoder = decoders.WordPiece(doc["decoder"]["prefix"], doc["decoder"]["cleanup"])
        tok._added = doc["added_tokens"]
        tok._truncation = doc["truncation"]
        tok._padding = doc["padding"]
        tok._core = core
        return tok

    # ----- truncation and padding -----

    def _set_settings(self, truncation: dict | None, padding: dict | None) -> None:
        # The model stays; only the post-processing settings of the core change. The core
        # checks them first, so a rejected setting changes nothing.
        if self._core is not None or self.model.vocab is not None:
            self._core = self._ready().with_settings(json.dumps(truncation), json.dumps(padding))
        self._truncation, self._padding = truncation, padding

    def enable_truncation(
        self,
        max_length: int,
        stride: int = 0,
        strategy: str = "longest_first",
        direction: str = "right",
    ) -> None:
        if strategy not in _STRATEGIES:
            raise ValueError(f"strategy must be one of {sorted(_STRATEGIES)}, not {strategy!r}")
        if direction not in _DIRECTIONS:
            raise ValueError(f'direction must be "right" or "left", not {direction!r}')
        if max_length < 0 or stride < 0:
            raise ValueError("max_length and stride must be >= 0")
        truncation = {
            "direction": _DIRECTIONS[direction],
            "max_length": int(max_length),
            "strategy": _STRATEGIES[strategy],
            "stride": int(stride),
        }
        self._set_settings(truncation, self._padding)

    def no_truncation(self) -> None:
        self._set_settings(None, self._padding)

    @property
    def truncation(self) -> dict | None:
        t = self._truncation
        if t is None:
            return None
        names = {v: k for k, v in _STRATEGIES.items()}
        return {
            "max_length": t["max_length"],
            "stride": t["stride"],
            "strategy": names[t["strategy"]],
            "direction": t["direction"].lower(),
        }

    def enable_padding(
        self,
        direction: str = "right",
        pad_id: int = 0,
        pad_type_id: int = 0,
        pad_token: str = "[PAD]",
        length: int | None = None,
        pad_to_multiple_of: int | None = None,
    ) -> None:
        if direction not in _DIRECTIONS:
            raise ValueError(f'direction must be "right" or "left", not {direction!r}')
        padding = {
            "strategy": {"Fixed": int(length)} if length is not None else "BatchLongest",
            "direction": _DIRECTIONS[direction],
            "pad_to_multiple_of": pad_to_multiple_of,
            "pad_id": int(pad_id),
            "pad_type_id": int(pad_type_id),
            "pad_token": pad_token,
        }
        self._set_settings(self._truncation, padding)

    def no_padding(self) -> None:
        self._set_settings(self._truncation, None)

    @property
    def padding(self) -> dict | None:
        p = self._padding
        if p is None:
            return None
        s = p["strategy"]
        return {
            "length": s["Fixed"] if isinstance(s, dict) else None,
            "pad_to_multiple_of": p["pad_to_multiple_of"],
            "pad_id": p["pad_id"],
            "pad_token": p["pad_token"],
            "pad_type_id": p["pad_type_id"],
            "direction": p["direction"].lower(),
        }

    # ----- encoding and decoding -----

    def encode(
        self,
        sequence: str,
        pair: str | None = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ):
        """Encode a text (or a pair): ids, tokens, offsets, type ids and masks in ``Encoded``."""
        return (self._core or self._ready()).encode(
            sequence, pair, is_pretokenized, add_special_tokens
        )

    def encode_batch(
        self, inputs: Sequence, is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> list:
        """Encode many texts or (text, pair) tuples in parallel, padded together if enabled."""
        return (self._core or self._ready()).encode_batch(
            inputs, is_pretokenized, add_special_tokens
        )

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._ready().num_special_tokens_to_add(is_pair)

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """Text of ``ids`` through the decoder; special tokens are skipped by default (as HF)."""
        return self._ready().decode(list(ids), skip_special_tokens)

    def decode_batch(
        self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True
    ) -> list[str]:
        core = self._ready()
        return [core.decode(list(ids), skip_special_tokens) for ids in sequences]

    # ----- vocabulary -----

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        return self._ready().get_vocab(with_added_tokens)

    def add_special_tokens(self, tokens: Sequence) -> int:
        return self._add(tokens, special=True)

    def add_tokens(self, tokens: Sequence) -> int:
        return self._add(tokens, special=False)

    def _add(self, tokens: Sequence, special: bool) -> int:
        tokens = _checks.special_tokens(tokens, "tokens")
        if self.model.vocab is None:
            raise ValueError("the model has no vocabulary yet: train it or load one")
        present = {a["content"] for a in self._added}
        next_id = max([len(self.model.vocab) - 1] + [a["id"] for a in self._added]) + 1
        new = 0
        for t in dict.fromkeys(tokens):
            if t in present:
                continue
            if t in self.model.vocab:
                tid = self.model.vocab[t]
            else:
                tid, next_id = next_id, next_id + 1
            self._added.append(
                {
                    "id": tid,
                    "content": t,
                    "single_word": False,
                    "lstrip": False,
                    "rstrip": False,
                    "normalized": False,
                    "special": special,
                }
            )
            new += 1
        if self._core is not None:
            # The model stays; only the added-token matcher is rebuilt.
            self._core = self._core.with_added(
                [(a["content"], a["id"], a["special"]) for a in self._added]
            )
        return new

    # ----- files -----

    def to_str(self, pretty: bool = False) -> str:
        text = self._ready().to_hf_json()
        return text if pretty else json.dumps(json.loads(text), ensure_ascii=False)

    # ----- training -----

    def _train(self, feed, trainer) -> None:
        from .trainers import WordPieceTrainer

        trainer = trainer if trainer is not None else WordPieceTrainer()
        if not isinstance(trainer, WordPieceTrainer):
            raise TypeError("a WordPiece model trains with trainers.WordPieceTrainer")
        norm = self._normalizer._json() if self._normalizer is not None else None
        t = _core.Trainer.for_wordpiece(json.dumps(norm), list(trainer.special_tokens))
        feed(t, trainer.show_progress)
        _warn_if_empty(t, stacklevel=4, left="the special tokens")
        tokens, merges = t.finish_wordpiece(
            trainer.vocab_size,
            trainer.min_frequency,
            trainer.limit_alphabet,
            trainer.continuing_subword_prefix,
            trainer.tie_break,
            trainer.show_progress,
        )
        trainer._merges = merges  # made into a list of str pairs when first read
        self.model.vocab = {tok: i for i, tok in enumerate(tokens)}
        self.model.continuing_subword_prefix = trainer.continuing_subword_prefix
        if self.model.unk_token not in self.model.vocab:
            raise ValueError(
                f"unk_token {self.model.unk_token!r} is not among the trainer's special_tokens "
                f"{trainer.special_tokens}: add it there"
            )
        self._added = []
        self._add(trainer.special_tokens, special=True)

    # ----- not for WordPiece -----

    def to_encoding(self, name: str = "tokenizer"):
        raise ValueError(
            "to_encoding is for byte-level BPE; a WordPiece tokenizer has no tiktoken form"
        )

    def encode_iterable(self, iterable):
        raise ValueError(
            "encode_iterable is for byte-level BPE (ids of a text streamed in pieces); encode a "
            "WordPiece tokenizer's texts one by one, or with encode_batch"
        )

    def post_process(self, encoding, pair=None, add_special_tokens: bool = True):
        raise NotImplementedError(
            "post_process is not available on subword's WordPiece Tokenizer; the HF drop-in has "
            "it: subword.tokenizers.Tokenizer.from_str(tok.to_str()).post_process(...)"
        )
