"""BERT's tokenizer: BertNormalizer, BertPreTokenizer, WordPiece, ``[CLS] A [SEP] B [SEP]``."""

from __future__ import annotations

from .. import decoders, normalizers, pre_tokenizers, processors, trainers
from .._tokenizer import Tokenizer
from ..models import WordPiece
from .base_tokenizer import BaseTokenizer


class BertWordPieceTokenizer(BaseTokenizer):
    def __init__(
        self,
        vocab: dict[str, int] | str | None = None,
        unk_token: str = "[UNK]",
        sep_token: str = "[SEP]",
        cls_token: str = "[CLS]",
        pad_token: str = "[PAD]",
        mask_token: str = "[MASK]",
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
        wordpieces_prefix: str = "##",
    ):
        if isinstance(vocab, str):
            vocab = WordPiece.read_file(vocab)
        model = (
            WordPiece(vocab, unk_token=unk_token, continuing_subword_prefix=wordpieces_prefix)
            if vocab is not None
            else WordPiece(unk_token=unk_token, continuing_subword_prefix=wordpieces_prefix)
        )
        tokenizer = Tokenizer(model)
        # The special tokens the vocabulary has are added (as HF does), so they are never split.
        # (An empty model has none, and cannot be asked before training.)
        for token in (unk_token, sep_token, cls_token, pad_token, mask_token) if vocab else ():
            if tokenizer.token_to_id(token) is not None:
                tokenizer.add_special_tokens([token])
        tokenizer.normalizer = normalizers.BertNormalizer(
            clean_text=clean_text,
            handle_chinese_chars=handle_chinese_chars,
            strip_accents=strip_accents,
            lowercase=lowercase,
        )
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        if vocab is not None:
            sep_id, cls_id = tokenizer.token_to_id(sep_token), tokenizer.token_to_id(cls_token)
            if sep_id is None:
                raise TypeError(f"sep_token {sep_token!r} is not in the vocabulary")
            if cls_id is None:
                raise TypeError(f"cls_token {cls_token!r} is not in the vocabulary")
            tokenizer.post_processor = processors.BertProcessing(
                (sep_token, sep_id), (cls_token, cls_id)
            )
        tokenizer.decoder = decoders.WordPiece(prefix=wordpieces_prefix)
        super().__init__(
            tokenizer,
            dict(
                model="BertWordPiece",
                unk_token=unk_token,
                sep_token=sep_token,
                cls_token=cls_token,
                pad_token=pad_token,
                mask_token=mask_token,
                clean_text=clean_text,
                handle_chinese_chars=handle_chinese_chars,
                strip_accents=strip_accents,
                lowercase=lowercase,
                wordpieces_prefix=wordpieces_prefix,
            ),
        )

    @staticmethod
    def from_file(vocab: str, **kwargs) -> BertWordPieceTokenizer:
        return BertWordPieceTokenizer(WordPiece.read_file(vocab), **kwargs)

    @staticmethod
    def _trainer(
        vocab_size,
        min_frequency,
        limit_alphabet,
        initial_alphabet,
        special_tokens,
        show_progress,
        wordpieces_prefix,
    ):
        return trainers.WordPieceTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            limit_alphabet=limit_alphabet,
            initial_alphabet=list(initial_alphabet or []),
            special_tokens=list(special_tokens),
            show_progress=show_progress,
            continuing_subword_prefix=wordpieces_prefix,
        )

    def train(
        self,
        files,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        limit_alphabet: int = 1000,
        initial_alphabet: list[str] | None = None,
        special_tokens: list | None = None,
        show_progress: bool = True,
        wordpieces_prefix: str = "##",
    ) -> None:
        special = _BERT_SPECIALS if special_tokens is None else special_tokens
        trainer = self._trainer(
            vocab_size,
            min_frequency,
            limit_alphabet,
            initial_alphabet,
            special,
            show_progress,
            wordpieces_prefix,
        )
        self._train(trainer, files=files)

    def train_from_iterator(
        self,
        iterator,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        limit_alphabet: int = 1000,
        initial_alphabet: list[str] | None = None,
        special_tokens: list | None = None,
        show_progress: bool = True,
        wordpieces_prefix: str = "##",
        length: int | None = None,
    ) -> None:
        special = _BERT_SPECIALS if special_tokens is None else special_tokens
        trainer = self._trainer(
            vocab_size,
            min_frequency,
            limit_alphabet,
            initial_alphabet,
            special,
            show_progress,
            wordpieces_prefix,
        )
        self._train(trainer, iterator=iterator, length=length)


_BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
