"""Training byte-level BPE: ``train``, ``train_from_iterator``, ``train_from_counts``.

Defaults and why:
- ``pattern="gpt2"``: GPT-2's pre-tokenizer, the common baseline; ``None`` lets merges cross spaces.
- ``min_frequency=2``: a pair seen once would only memorize one string; such a token never helps
  compression on other text. Training stops early when no pair reaches it.
- ``tie_break="lexicographic"``: results independent of file order, chunking and thread count.
"""

from __future__ import annotations

import os
import warnings
from typing import Iterable, Mapping, Sequence

from . import _checks, _core
from .encoding import Encoding, _retry_batch_without_surrogates

__all__ = ["train", "train_from_iterator", "train_from_counts", "count_pretokens"]


def _warn_if_empty(
    trainer, stacklevel: int = 3, left: str = "the 256 byte tokens and the special tokens"
) -> None:
    skipped = trainer.skipped_bytes()
    if skipped is not None and skipped[1] > 0:
        return  # there was text; a pattern that matched none of it is an error in finish
    if trainer.n_distinct() == 0:
        warnings.warn(
            f"the training corpus is empty: the tokenizer has only {left}",
            stacklevel=stacklevel + 1,
        )


def _finish(trainer, name, vocab_size, min_frequency, tie_break, show_progress) -> Encoding:
    _warn_if_empty(trainer, stacklevel=4)
    core = trainer.finish(vocab_size, min_frequency, tie_break, show_progress)
    return Encoding._from_core(name, core.pattern(), core)


def _feed(trainer, batch: list[str]) -> None:
    # Lone surrogates: handled as ``Encoding.encode`` does (pairs joined, the rest U+FFFD).
    _retry_batch_without_surrogates(trainer.feed, batch)


def _feed_documents(trainer, documents: Iterable[str], batch_size: int = 1000) -> None:
    """Feed documents in batches; each str is one document, held only in its batch."""
    batch: list[str] = []
    for doc in documents:
        if not isinstance(doc, str):
            raise TypeError(f"documents must be str, got {type(doc).__name__}")
        batch.append(doc)
        if len(batch) >= batch_size:
            _feed(trainer, batch)
            batch = []
    if batch:
        _feed(trainer, batch)


def _trainer(pattern, special_tokens, num_threads):
    return _core.Trainer(pattern, _checks.special_tokens(special_tokens), num_threads)


def train(
    files: str | os.PathLike | Sequence[str | os.PathLike],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str | None = "gpt2",
    min_frequency: int = 2,
    show_progress: bool = True,
    *,
    tie_break: str = "lexicographic",
    num_threads: int = 0,
    name: str = "trained",
) -> Encoding:
    """Train on UTF-8 text files (streamed; memory grows with distinct pre-tokens, not file size).

    ``vocab_size`` counts the 256 byte tokens, the learned tokens and ``special_tokens``.

    >>> enc = subword.train(["corpus.txt"], vocab_size=1000)   # doctest: +SKIP
    """
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    trainer = _trainer(pattern, special_tokens, num_threads)
    for f in files:
        trainer.feed_file(os.fspath(f), show_progress)
    return _finish(trainer, name, vocab_size, min_frequency, tie_break, show_progress)


def train_from_iterator(
    iterator: Iterable[str],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str | None = "gpt2",
    min_frequency: int = 2,
    show_progress: bool = True,
    *,
    tie_break: str = "lexicographic",
    num_threads: int = 0,
    batch_size: int = 1000,
    name: str = "trained",
) -> Encoding:
    """Train on an iterable of documents (each str is one document, held only in its batch)."""
    trainer = _trainer(pattern, special_tokens, num_threads)
    _feed_documents(trainer, iterator, batch_size)
    return _finish(trainer, name, vocab_size, min_frequency, tie_break, show_progress)


def train_from_counts(
    counts: Mapping[str | bytes, int] | Iterable[tuple[str | bytes, int]],
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    pattern: str | None = "gpt2",
    min_frequency: int = 2,
    show_progress: bool = True,
    *,
    tie_break: str = "lexicographic",
    name: str = "trained",
) -> Encoding:
    """Learn merges from pre-tokens counted elsewhere (e.g. by Spark, Dask or multiprocessing).

    Keys are pre-tokens (already split by ``pattern``; the pattern is kept for encoding later);
    their order is the order of first appearance for ``tie_break="first"``.
    """
    items = counts.items() if isinstance(counts, Mapping) else counts
    trainer = _trainer(pattern, special_tokens, 0)
    trainer.add_counts(items)
    return _finish(trainer, name, vocab_size, min_frequency, tie_break, show_progress)


def count_pretokens(
    texts: Iterable[str],
    pattern: str | None = "gpt2",
    special_tokens: Sequence[str] = (),
    *,
    num_threads: int = 0,
) -> dict[str, int]:
    """Count the pre-tokens of ``texts`` (documents) as ``train`` would: the map step of training
    on a cluster.

    Counts from several tasks merge by addition (``collections.Counter`` sums them);
    ``train_from_counts(total, …)`` with the same ``pattern`` and ``special_tokens`` then learns
    exactly the merges ``train_from_iterator`` learns on all the documents (and ``train`` on
    files, when each file is one document). Special tokens are cut out and not counted. Keys
    come in order of first appearance; with the default ``tie_break="lexicographic"`` the order
    of the merged counts does not matter.
    """
    if isinstance(texts, (str, bytes)):
        raise TypeError(
            "count_pretokens takes an iterable of documents, not a single "
            f"{type(texts).__name__}: wrap it in a list"
        )
    trainer = _trainer(pattern, special_tokens, num_threads)
    _feed_documents(trainer, texts)
    return trainer.take_pretoken_counts()
