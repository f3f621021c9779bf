"""SentencePiece's BPE: NFKC, spaces as ``▁`` (one put first), unknown characters as
``unk_token``."""

from __future__ import annotations

from .. import decoders, normalizers, pre_tokenizers, trainers
from .._tokenizer import Tokenizer
from ..models import BPE
from .base_tokenizer import BaseTokenizer
from .byte_level_bpe import _bpe


class SentencePieceBPETokenizer(BaseTokenizer):
    def __init__(
        self,
        vocab: dict[str, int] | str | None = None,
        merges: list | str | None = None,
        unk_token: str = "<unk>",
        replacement: str = "▁",
        add_prefix_space: bool = True,
        dropout: float | None = None,
        fuse_unk: bool | None = False,
    ):
        model = _bpe(vocab, merges, dict(dropout=dropout, unk_token=unk_token, fuse_unk=fuse_unk))
        tokenizer = Tokenizer(model)
        if vocab is not None and tokenizer.token_to_id(unk_token) is not None:
            tokenizer.add_special_tokens([unk_token])
        tokenizer.normalizer = normalizers.NFKC()
        scheme = "always" if add_prefix_space else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement=replacement, prepend_scheme=scheme
        )
        tokenizer.decoder = decoders.Metaspace(replacement=replacement, prepend_scheme=scheme)
        super().__init__(
            tokenizer,
            dict(
                model="SentencePieceBPE",
                unk_token=unk_token,
                replacement=replacement,
                add_prefix_space=add_prefix_space,
                dropout=dropout,
            ),
        )

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs) -> SentencePieceBPETokenizer:
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return SentencePieceBPETokenizer(vocab, merges, **kwargs)

    @staticmethod
    def _trainer(
        vocab_size, min_frequency, special_tokens, limit_alphabet, initial_alphabet, show_progress
    ):
        return trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=list(special_tokens),
            limit_alphabet=limit_alphabet,
            initial_alphabet=list(initial_alphabet or []),
            show_progress=show_progress,
        )

    def train(
        self,
        files,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        special_tokens: list | None = None,
        limit_alphabet: int = 1000,
        initial_alphabet: list[str] | None = None,
        show_progress: bool = True,
    ) -> None:
        special = ["<unk>"] if special_tokens is None else special_tokens
        trainer = self._trainer(
            vocab_size, min_frequency, special, limit_alphabet, initial_alphabet, show_progress
        )
        self._train(trainer, files=files)

    def train_from_iterator(
        self,
        iterator,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        special_tokens: list | None = None,
        limit_alphabet: int = 1000,
        initial_alphabet: list[str] | None = None,
        show_progress: bool = True,
        length: int | None = None,
    ) -> None:
        special = ["<unk>"] if special_tokens is None else special_tokens
        trainer = self._trainer(
            vocab_size, min_frequency, special, limit_alphabet, initial_alphabet, show_progress
        )
        self._train(trainer, iterator=iterator, length=length)
