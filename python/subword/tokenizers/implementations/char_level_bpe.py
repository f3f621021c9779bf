"""The original BPE (Sennrich et al.; OpenAI's GPT): ``</w>`` marks a word's end, text is
BERT-normalized and split on whitespace and punctuation."""

from __future__ import annotations

from .. import decoders, normalizers, pre_tokenizers, trainers
from .._tokenizer import Tokenizer
from ..models import BPE
from .base_tokenizer import BaseTokenizer, chain, unicode_form
from .byte_level_bpe import _bpe


class CharBPETokenizer(BaseTokenizer):
    def __init__(
        self,
        vocab: dict[str, int] | str | None = None,
        merges: list | str | None = None,
        unk_token: str = "<unk>",
        suffix: str = "</w>",
        dropout: float | None = None,
        lowercase: bool = False,
        unicode_normalizer: str | None = None,
        bert_normalizer: bool = True,
        split_on_whitespace_only: bool = False,
    ):
        options = dict(dropout=dropout, unk_token=unk_token, end_of_word_suffix=suffix)
        tokenizer = Tokenizer(_bpe(vocab, merges, options))
        if vocab is not None and tokenizer.token_to_id(unk_token) is not None:
            tokenizer.add_special_tokens([unk_token])
        parts = [unicode_form(unicode_normalizer)] if unicode_normalizer else []
        if bert_normalizer:
            parts.append(normalizers.BertNormalizer(lowercase=False))
        if lowercase:
            parts.append(normalizers.Lowercase())
        tokenizer.normalizer = chain(parts)
        tokenizer.pre_tokenizer = (
            pre_tokenizers.WhitespaceSplit()
            if split_on_whitespace_only
            else pre_tokenizers.BertPreTokenizer()
        )
        tokenizer.decoder = decoders.BPEDecoder(suffix=suffix)
        super().__init__(
            tokenizer,
            dict(
                model="BPE",
                unk_token=unk_token,
                suffix=suffix,
                dropout=dropout,
                lowercase=lowercase,
                unicode_normalizer=unicode_normalizer,
                bert_normalizer=bert_normalizer,
                split_on_whitespace_only=split_on_whitespace_only,
            ),
        )

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs) -> CharBPETokenizer:
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return CharBPETokenizer(vocab, merges, **kwargs)

    def _trainer(
        self,
        vocab_size,
        min_frequency,
        special_tokens,
        limit_alphabet,
        initial_alphabet,
        suffix,
        show_progress,
    ):
        return trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            special_tokens=list(special_tokens),
            limit_alphabet=limit_alphabet,
            initial_alphabet=list(initial_alphabet or []),
            end_of_word_suffix=suffix,
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
        suffix: str | None = "</w>",
        show_progress: bool = True,
    ) -> None:
        special = ["<unk>"] if special_tokens is None else special_tokens
        trainer = self._trainer(
            vocab_size,
            min_frequency,
            special,
            limit_alphabet,
            initial_alphabet,
            suffix,
            show_progress,
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
        suffix: str | None = "</w>",
        show_progress: bool = True,
        length: int | None = None,
    ) -> None:
        special = ["<unk>"] if special_tokens is None else special_tokens
        trainer = self._trainer(
            vocab_size,
            min_frequency,
            special,
            limit_alphabet,
            initial_alphabet,
            suffix,
            show_progress,
        )
        self._train(trainer, iterator=iterator, length=length)
