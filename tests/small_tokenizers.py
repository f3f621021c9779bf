"""Small tokenizers trained on a test's own documents, for tests that need one of each dialect
(the pickling and dataset tests)."""

from __future__ import annotations

import subword
from subword import models, pre_tokenizers, trainers
from subword import tokenizers as hf


def wordpiece(docs, vocab_size: int):
    """BERT-style WordPiece (BertPreTokenizer) trained by subword."""
    tok = subword.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        docs, trainers.WordPieceTrainer(vocab_size=vocab_size, show_progress=False)
    )
    return tok


def hf_bpe(docs, vocab_size: int, special_tokens=("[UNK]",)):
    """``subword.tokenizers`` BPE over Lowercase + Whitespace."""
    tok = hf.Tokenizer(hf.models.BPE(unk_token="[UNK]"))
    tok.normalizer = hf.normalizers.Lowercase()
    tok.pre_tokenizer = hf.pre_tokenizers.Whitespace()
    tok.train_from_iterator(
        docs,
        hf.trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=list(special_tokens), show_progress=False
        ),
    )
    return tok
