"""``Tokenizer.train`` / ``train_from_iterator``: feed the texts to a core counter that runs the
tokenizer's own pipeline (``rust/train/count.rs``), learn the model the trainer names in the
core (``rust/train/``), and put the new model and the trainer's special tokens in place, as HF
does. Nothing is computed here but batching."""

from __future__ import annotations

import os
from typing import Any, Iterable

from .. import _core
from . import models, trainers

# Texts per call into the core: enough for every core to have work, few enough to keep the
# batch's strings small.
BATCH = 2048

_TRAINER_OF = {
    models.BPE: trainers.BpeTrainer,
    models.WordPiece: trainers.WordPieceTrainer,
    models.WordLevel: trainers.WordLevelTrainer,
}


def _trainer_for(model: Any, trainer: Any) -> trainers.Trainer:
    wanted = _TRAINER_OF.get(type(model))
    if wanted is None:
        raise TypeError(f"a {type(model).__name__} model cannot be trained")
    if trainer is None:
        return wanted()
    if not isinstance(trainer, trainers.Trainer):
        raise TypeError(f"trainer must be a trainers.Trainer, got {type(trainer).__name__}")
    if type(trainer) is not wanted:
        raise TypeError(
            f"a {type(model).__name__} model is trained with a {wanted.__name__}, "
            f"not a {type(trainer).__name__}"
        )
    return trainer


def _counter(tokenizer: Any, trainer: trainers.Trainer):
    return _core.Trainer.for_pipeline(tokenizer._counting_core(), trainer._special_strings())


def from_iterator(tokenizer: Any, iterator: Iterable, trainer: Any, length: int | None) -> None:
    trainer = _trainer_for(tokenizer.model, trainer)
    counter = _counter(tokenizer, trainer)
    if isinstance(iterator, (str, bytes)):
        raise TypeError(
            "train_from_iterator takes an iterator of texts (or of lists of texts), "
            "not a single string: wrap it in a list"
        )
    batch: list[str] = []
    for k, item in enumerate(iterator):
        if isinstance(item, str):
            batch.append(item)
        elif isinstance(item, (list, tuple)) and all(isinstance(t, str) for t in item):
            batch.extend(item)
        else:
            raise TypeError(
                f"train_from_iterator: item {k} must be a str or a list of str, "
                f"got {type(item).__name__}"
            )
        if len(batch) >= BATCH:
            counter.feed(batch)
            batch = []
    if batch:
        counter.feed(batch)
    _finish(tokenizer, counter, trainer)


def from_files(tokenizer: Any, files: Any, trainer: Any) -> None:
    """Each line of each file (with its line ending, as HF reads them) is one text."""
    trainer = _trainer_for(tokenizer.model, trainer)
    if isinstance(files, (str, bytes, os.PathLike)):
        raise TypeError("train takes a list of file paths, not a single path: wrap it in a list")
    paths = [os.fspath(f) for f in files]
    for p in paths:
        if not os.path.isfile(p):
            raise FileNotFoundError(f"training file not found: {p}")
    counter = _counter(tokenizer, trainer)
    for p in paths:
        with open(p, encoding="utf-8") as f:
            while lines := f.readlines(1 << 20):
                counter.feed(lines)
    _finish(tokenizer, counter, trainer)


def _finish(tokenizer: Any, counter: Any, trainer: trainers.Trainer) -> None:
    old = tokenizer.model
    if isinstance(trainer, trainers.WordPieceTrainer):
        if not trainer.continuing_subword_prefix:
            raise ValueError("WordPieceTrainer needs a continuing_subword_prefix (e.g. '##')")
        unused = [
            name
            for name in ("initial_alphabet", "end_of_word_suffix", "max_token_length")
            if getattr(trainer, name)
        ]
        if unused:
            raise ValueError(
                f"subword's WordPiece trainer does not use {', '.join(unused)}: unset "
                "them (or train a BPE model with BpeTrainer, which does)"
            )
        tokens, _ = counter.finish_wordpiece(
            trainer.vocab_size,
            trainer.min_frequency,
            trainer.limit_alphabet,
            trainer.continuing_subword_prefix,
            "lexicographic",
            trainer.show_progress,
        )
        new: Any = models.WordPiece(
            {t: i for i, t in enumerate(tokens)},
            unk_token=old.unk_token,
            max_input_chars_per_word=old.max_input_chars_per_word,
            continuing_subword_prefix=trainer.continuing_subword_prefix,
        )
    elif isinstance(trainer, trainers.BpeTrainer):
        tokens, merges = counter.finish_char_bpe(
            trainer.vocab_size,
            trainer.min_frequency,
            trainer.limit_alphabet,
            trainer.initial_alphabet,
            trainer.continuing_subword_prefix or "",
            trainer.end_of_word_suffix or "",
            trainer.max_token_length,
            trainer.show_progress,
        )
        new = models.BPE(
            {t: i for i, t in enumerate(tokens)},
            merges.to_list(),
            cache_capacity=old.cache_capacity,
            dropout=old.dropout,
            unk_token=old.unk_token,
            continuing_subword_prefix=trainer.continuing_subword_prefix,
            end_of_word_suffix=trainer.end_of_word_suffix,
            fuse_unk=old.fuse_unk,
            byte_fallback=old.byte_fallback,
            ignore_merges=old.ignore_merges,
            seed=old.seed,
        )
    else:
        tokens = counter.finish_word_level(trainer.vocab_size, trainer.min_frequency)
        new = models.WordLevel({t: i for i, t in enumerate(tokens)}, unk_token=old.unk_token)
    tokenizer.model = new
    tokenizer.add_special_tokens(trainer.special_tokens)
