"""GPT-2 / RoBERTa's tokenizer: byte-level BPE, optionally lowercased or Unicode-normalized."""

from __future__ import annotations

from .. import decoders, normalizers, pre_tokenizers, processors, trainers
from .._tokenizer import Tokenizer
from ..models import BPE
from .base_tokenizer import BaseTokenizer, chain, unicode_form


class ByteLevelBPETokenizer(BaseTokenizer):
    def __init__(
        self,
        vocab: dict[str, int] | str | None = None,
        merges: list | str | None = None,
        add_prefix_space: bool = False,
        lowercase: bool = False,
        dropout: float | None = None,
        unicode_normalizer: str | None = None,
        continuing_subword_prefix: str | None = None,
        end_of_word_suffix: str | None = None,
        trim_offsets: bool = False,
    ):
        options = dict(
            dropout=dropout,
            continuing_subword_prefix=continuing_subword_prefix or "",
            end_of_word_suffix=end_of_word_suffix or "",
        )
        tokenizer = Tokenizer(_bpe(vocab, merges, options))
        parts = [unicode_form(unicode_normalizer)] if unicode_normalizer else []
        if lowercase:
            parts.append(normalizers.Lowercase())
        tokenizer.normalizer = chain(parts)
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
        tokenizer.decoder = decoders.ByteLevel()
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=trim_offsets)
        super().__init__(
            tokenizer,
            dict(
                model="ByteLevelBPE",
                add_prefix_space=add_prefix_space,
                lowercase=lowercase,
                dropout=dropout,
                unicode_normalizer=unicode_normalizer,
                continuing_subword_prefix=continuing_subword_prefix,
                end_of_word_suffix=end_of_word_suffix,
                trim_offsets=trim_offsets,
            ),
        )

    @staticmethod
    def from_file(vocab_filename: str, merges_filename: str, **kwargs) -> ByteLevelBPETokenizer:
        vocab, merges = BPE.read_file(vocab_filename, merges_filename)
        return ByteLevelBPETokenizer(vocab, merges, **kwargs)

    def _trainer(self, vocab_size, min_frequency, show_progress, special_tokens):
        return trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            show_progress=show_progress,
            special_tokens=list(special_tokens or []),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        )

    def train(
        self,
        files,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        show_progress: bool = True,
        special_tokens: list | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, show_progress, special_tokens)
        self._train(trainer, files=files)

    def train_from_iterator(
        self,
        iterator,
        vocab_size: int = 30000,
        min_frequency: int = 2,
        show_progress: bool = True,
        special_tokens: list | None = None,
        length: int | None = None,
    ) -> None:
        trainer = self._trainer(vocab_size, min_frequency, show_progress, special_tokens)
        self._train(trainer, iterator=iterator, length=length)


def _bpe(vocab, merges, options: dict) -> BPE:
    """A BPE of ``vocab`` and ``merges`` (dicts and lists, or file paths), or an empty one to
    train; one of the two alone is an error, not an empty model."""
    if vocab is None and merges is None:
        return BPE(**options)
    if vocab is None or merges is None:
        raise ValueError("give both vocab and merges (or neither, to train the model)")
    if isinstance(vocab, str) or isinstance(merges, str):
        if not (isinstance(vocab, str) and isinstance(merges, str)):
            raise TypeError("vocab and merges must both be file paths, or a dict and a list")
        vocab, merges = BPE.read_file(vocab, merges)
    return BPE(vocab, merges, **options)
