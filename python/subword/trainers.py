"""``subword.trainers``: HF ``tokenizers.trainers`` names."""

from __future__ import annotations

from . import _checks
from ._value import ByValue

__all__ = ["BpeTrainer", "WordPieceTrainer"]


class BpeTrainer(ByValue):
    """Settings for training a byte-level BPE, as ``tokenizers.trainers.BpeTrainer``.

    Differences that make it correct by default: all 256 bytes are always in the vocabulary
    (``initial_alphabet`` is not needed, so unseen bytes never vanish), and special tokens are cut
    out of the text before counting, so no token ever contains one. ``vocab_size`` counts the
    bytes, the learned tokens and the special tokens. Ties are broken lexicographically.
    """

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
        if continuing_subword_prefix is not None or end_of_word_suffix is not None:
            raise ValueError(
                "continuing_subword_prefix and end_of_word_suffix are not supported "
                "(byte-level BPE)"
            )
        if limit_alphabet is not None:
            raise ValueError("limit_alphabet is not supported: byte-level BPE keeps all 256 bytes")
        if max_token_length is not None:
            raise ValueError("max_token_length is not supported")
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.show_progress = show_progress
        self.special_tokens = _checks.special_tokens(
            [] if special_tokens is None else special_tokens
        )
        self.initial_alphabet = initial_alphabet or []


BERT_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


class WordPieceTrainer(ByValue):
    """Settings for training WordPiece, as ``tokenizers.trainers.WordPieceTrainer``, with the
    real WordPiece score: pairs are ranked by count(ab) / (count(a) * count(b)), not by count
    (HF's trainer is BPE under the hood).

    Ties on score go to the more frequent pair, then by ``tie_break``: ``"lexicographic"``
    (the greatest pair of token strings) or ``"first"`` (the pair seen first in the corpus).
    ``limit_alphabet`` keeps the most frequent characters; a dropped character splits its word.
    Every kept character is in the vocabulary both as ``c`` and as ``##c``, so any word spelled
    in the alphabet can be encoded. After training, ``merges`` lists the learned pairs in order.
    """

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
        tie_break: str = "lexicographic",
    ):
        if initial_alphabet:
            raise ValueError("initial_alphabet is not supported by WordPieceTrainer")
        if end_of_word_suffix is not None:
            raise ValueError("end_of_word_suffix is not used by WordPiece (see ClassicBPE)")
        if tie_break not in ("lexicographic", "first"):
            raise ValueError(f'tie_break must be "lexicographic" or "first", not {tie_break!r}')
        if limit_alphabet is not None and limit_alphabet < 0:
            raise ValueError("limit_alphabet must be >= 0")
        if not continuing_subword_prefix:
            raise ValueError("continuing_subword_prefix must be a non-empty string")
        self.vocab_size = int(vocab_size)
        self.min_frequency = int(min_frequency)
        self.show_progress = show_progress
        self.special_tokens = _checks.special_tokens(
            BERT_SPECIAL_TOKENS if special_tokens is None else special_tokens
        )
        self.limit_alphabet = limit_alphabet
        self.continuing_subword_prefix = continuing_subword_prefix
        self.tie_break = tie_break
        self._merges = []

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The pairs the last training merged, in order (empty before training)."""
        if not isinstance(self._merges, list):
            self._merges = [tuple(m) for m in self._merges.to_list()]
        return self._merges

    def _state(self):
        return {**vars(self), "_merges": self.merges}

    def __getstate__(self):
        return self._state()
