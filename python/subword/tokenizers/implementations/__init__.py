"""HF's ready-made tokenizers (``tokenizers.implementations``) over subword's components: each
is a :class:`BaseTokenizer` holding a ``subword.tokenizers.Tokenizer`` built the way its name
says, with HF's constructor arguments and training defaults. SentencePiece's Unigram is not
built yet: its class says so when made."""

from .base_tokenizer import BaseTokenizer
from .bert_wordpiece import BertWordPieceTokenizer
from .byte_level_bpe import ByteLevelBPETokenizer
from .char_level_bpe import CharBPETokenizer
from .sentencepiece_bpe import SentencePieceBPETokenizer
from .sentencepiece_unigram import SentencePieceUnigramTokenizer

__all__ = [
    "BaseTokenizer",
    "BertWordPieceTokenizer",
    "ByteLevelBPETokenizer",
    "CharBPETokenizer",
    "SentencePieceBPETokenizer",
    "SentencePieceUnigramTokenizer",
]
