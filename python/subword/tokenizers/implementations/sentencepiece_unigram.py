"""SentencePiece's Unigram: not built yet (the Unigram model is a later issue). The class
exists so that code importing it fails where it is used, with a message that says so."""

from __future__ import annotations


class SentencePieceUnigramTokenizer:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "SentencePieceUnigramTokenizer needs the Unigram model, which subword does not have "
            "yet; use SentencePieceBPETokenizer, or HF tokenizers for Unigram"
        )

    @staticmethod
    def from_spm(filename: str):
        raise NotImplementedError(
            "SentencePieceUnigramTokenizer.from_spm needs the Unigram model, which subword does "
            "not have yet"
        )
