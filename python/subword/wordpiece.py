"""``subword.Tokenizer(models.WordPiece(...))`` lands here: the pipeline tokenizer of
``subword.tokenizers`` (``rust/pipeline/``) with subword's defaults.

Everything HF's ``Tokenizer`` does comes from ``subword.tokenizers.Tokenizer``; what differs is
only what ``subword.Tokenizer`` promises for WordPiece: a BERT pre-tokenizer unless told
otherwise, a single path accepted by ``train``, and ``subword.trainers.WordPieceTrainer`` (the
likelihood score with a chosen tie break, BERT's special tokens by default, ``merges`` kept).
HF's own trainers work too, as in ``subword.tokenizers``.
"""

from __future__ import annotations

import os
from typing import Iterable

from . import _core
from .tokenizer import Tokenizer
from .tokenizers import Tokenizer as PipelineTokenizer
from .tokenizers import pre_tokenizers
from .tokenizers.trainers import Trainer as PipelineTrainer
from .trainers import WordPieceTrainer
from .training import _feed_documents, _warn_if_empty

__all__ = ["WordPieceTokenizer"]


class WordPieceTokenizer(PipelineTokenizer, Tokenizer):
    """BERT-style tokenizer: (normalizer) → BertPreTokenizer → WordPiece → (post-processor)."""

    def __init__(self, model):
        PipelineTokenizer.__init__(self, model)
        self._pre_tokenizer = pre_tokenizers.BertPreTokenizer()

    # ----- training -----

    def train(self, files, trainer=None) -> None:
        """Train on text files (a path or a list of paths)."""
        if isinstance(files, (str, os.PathLike)):
            files = [files]
        if isinstance(trainer, PipelineTrainer):
            return PipelineTokenizer.train(self, files, trainer)
        paths = [os.fspath(f) for f in files]
        for p in paths:
            if not os.path.isfile(p):
                raise FileNotFoundError(f"training file not found: {p}")
        trainer = self._subword_trainer(trainer)
        counter = self._counter(trainer)
        for p in paths:
            counter.feed_file(p, trainer.show_progress)
        self._learn(counter, trainer)

    def train_from_iterator(self, iterator: Iterable, trainer=None, length: int | None = None):
        """Train on an iterable of str (or of lists of str); each str is one document."""
        if isinstance(trainer, PipelineTrainer):
            return PipelineTokenizer.train_from_iterator(self, iterator, trainer, length)
        trainer = self._subword_trainer(trainer)
        counter = self._counter(trainer)

        def documents():
            for item in iterator:
                yield from [item] if isinstance(item, str) else item

        _feed_documents(counter, documents())
        self._learn(counter, trainer)

    @staticmethod
    def _subword_trainer(trainer) -> WordPieceTrainer:
        trainer = trainer if trainer is not None else WordPieceTrainer()
        if not isinstance(trainer, WordPieceTrainer):
            raise TypeError(
                "a WordPiece model trains with subword.trainers.WordPieceTrainer (or "
                f"subword.tokenizers.trainers.WordPieceTrainer), not {type(trainer).__name__}"
            )
        return trainer

    def _counter(self, trainer: WordPieceTrainer):
        return _core.Trainer.for_pipeline(self._counting_core(), list(trainer.special_tokens))

    def _learn(self, counter, trainer: WordPieceTrainer) -> None:
        _warn_if_empty(counter, stacklevel=4, left="the special tokens")
        tokens, merges = counter.finish_wordpiece(
            trainer.vocab_size,
            trainer.min_frequency,
            trainer.limit_alphabet,
            trainer.continuing_subword_prefix,
            trainer.tie_break,
            trainer.show_progress,
        )
        trainer._merges = merges  # made into a list of str pairs when first read
        vocab = {tok: i for i, tok in enumerate(tokens)}
        if self.model.unk_token not in vocab:
            raise ValueError(
                f"unk_token {self.model.unk_token!r} is not among the trainer's special_tokens "
                f"{trainer.special_tokens}: add it there"
            )
        # In place, as HF's trained model is the object the caller holds.
        self.model.vocab = vocab
        self.model.continuing_subword_prefix = trainer.continuing_subword_prefix
        self._added = []
        self.add_special_tokens(trainer.special_tokens)

    # ----- decoding -----

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """As HF's, except that an id with no token is a ValueError (HF leaves it out)."""
        return self._core().decode(list(ids), bool(skip_special_tokens), False)

    def decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        core = self._core()
        return [core.decode(list(ids), bool(skip_special_tokens), False) for ids in sequences]

    # ----- what only byte-level BPE has -----

    def encode_iterable(self, iterable):
        raise ValueError(
            "encode_iterable is for byte-level BPE; a WordPiece tokenizer encodes texts: "
            "use encode or encode_batch"
        )

    def to_encoding(self, name: str = "tokenizer"):
        raise ValueError(
            "to_encoding is for byte-level BPE; a WordPiece tokenizer has no tiktoken form"
        )

    @classmethod
    def from_encoding(cls, enc, add_prefix_space: bool = False):
        raise ValueError(
            "from_encoding makes a byte-level BPE: call subword.Tokenizer.from_encoding"
        )

    # ----- pickling and equality -----

    def __reduce__(self):
        # A trained tokenizer pickles as its tokenizer.json (what HF pickles); one not yet
        # trained as its parts (the core refuses a WordPiece without its unknown token).
        if self.model.unk_token not in self.model.vocab:
            state = {k: v for k, v in vars(self).items() if k != "_built"}
            return (_restore, (type(self), state))
        return (type(self).from_str, (self.to_str(),))

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.__reduce__()[1] == other.__reduce__()[1]

    __hash__ = None  # type: ignore[assignment]  # mutable, as HF's


def _restore(cls, state: dict) -> WordPieceTokenizer:
    tok = object.__new__(cls)
    tok.__dict__.update(state)
    tok._built = None
    return tok
