"""``subword.trainers``: HF ``tokenizers.trainers`` names."""

from __future__ import annotations

__all__ = ["BpeTrainer"]


class BpeTrainer:
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
        self.special_tokens = [getattr(t, "content", t) for t in special_tokens or []]
        self.initial_alphabet = initial_alphabet or []
