"""Classic BPE with an end-of-word marker (Sennrich et al., 2016): ``ClassicBPE``.

Words are split on whitespace and spelled as characters followed by ``</w>``; merges are learned
by count with the same merge loop as byte-level BPE and WordPiece, and applied lowest rank first.
Decoding turns each ``</w>`` into a space.
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Mapping

from . import _checks, _core, _files
from .training import _feed_documents, _warn_if_empty

__all__ = ["ClassicBPE"]

_FORMAT = "subword-classic-bpe/1"


class ClassicBPE:
    """A trained classic BPE model. Build it with ``train`` / ``train_from_counts`` or ``load``.

    ``merge_end_of_word=True`` (Sennrich's original) lets ``</w>`` merge, so word endings such as
    ``est</w>`` become tokens; ``False`` keeps ``</w>`` a token of its own. Ties between equally
    frequent pairs: ``"lexicographic"`` (the greatest pair of strings; independent of input
    order) or ``"first"`` (the pair seen first; the textbook's order).
    """

    def __init__(self, core):
        self._core = core

    @classmethod
    def _trained(
        cls,
        feed,
        vocab_size: int,
        *,
        min_frequency: int = 0,
        merge_end_of_word: bool = True,
        tie_break: str = "lexicographic",
        unk_token: str | None = "<unk>",
        suffix: str = "</w>",
        show_progress: bool = False,
    ) -> ClassicBPE:
        """The options every training entry point takes, with their defaults (in one place)."""
        unk_token = _checks.non_empty_token(unk_token, "unk_token", none_means="no unknown token")
        t = _core.Trainer.for_classic()
        feed(t, show_progress)
        _warn_if_empty(t, stacklevel=4, left="the unknown token and the end-of-word marker")
        tokens, merges = t.finish_classic(
            vocab_size,
            unk_token,
            suffix,
            merge_end_of_word,
            min_frequency,
            tie_break,
            show_progress,
        )
        return cls(_core.ClassicCore(tokens, merges.to_list(), suffix, unk_token))

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int, **options) -> ClassicBPE:
        """Learn from documents (an iterable of str; words are whitespace-separated).

        Options (all keyword, also for ``train_from_files`` / ``train_from_counts``):
        ``min_frequency=0``, ``merge_end_of_word=True``, ``tie_break="lexicographic"``,
        ``unk_token="<unk>"``, ``suffix="</w>"``, ``show_progress=False``.
        """
        if isinstance(texts, str):
            texts = [texts]
        return cls._trained(lambda t, show: _feed_documents(t, texts), vocab_size, **options)

    @classmethod
    def train_from_files(cls, files, vocab_size: int, **options) -> ClassicBPE:
        """Learn from text files, streamed."""
        if isinstance(files, (str, os.PathLike)):
            files = [files]

        def feed(t, show):
            for f in files:
                t.feed_file(os.fspath(f), show)

        return cls._trained(feed, vocab_size, **options)

    @classmethod
    def train_from_counts(
        cls, counts: Mapping[str, int] | Iterable[tuple[str, int]], vocab_size: int, **options
    ) -> ClassicBPE:
        """Learn from word counts; their order is the order of first appearance."""
        if isinstance(counts, Mapping):
            for word in counts:
                if not word or any(c.isspace() for c in word):
                    raise ValueError(f"word {word!r} is empty or contains whitespace")
            counts = counts.items()
        return cls._trained(lambda t, show: t.add_counts(counts), vocab_size, **options)

    # ----- use -----

    def encode(self, text: str) -> list[int]:
        if not isinstance(text, str):
            raise TypeError(f"encode expects str, got {type(text).__name__}")
        return self._core.encode(text)

    def tokenize(self, text: str) -> list[str]:
        tokens = self._core.tokens()
        return [tokens[i] for i in self.encode(text)]

    def decode(self, ids) -> str:
        return self._core.decode(list(ids))

    @property
    def merges(self) -> list[tuple[str, str]]:
        return [tuple(m) for m in self._core.merges()]

    @property
    def vocab(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self._core.tokens())}

    @property
    def vocab_size(self) -> int:
        return len(self._core.tokens())

    def __repr__(self) -> str:
        return f"ClassicBPE(vocab_size={self.vocab_size}, merges={len(self.merges)})"

    # ----- files -----

    def _doc(self) -> dict:
        return {
            "format": _FORMAT,
            "suffix": self._core.suffix(),
            "unk_token": self._core.unk_token(),
            "tokens": self._core.tokens(),
            "merges": self.merges,
        }

    @classmethod
    def _from_doc(cls, doc: dict) -> ClassicBPE:
        merges = [tuple(m) for m in doc["merges"]]
        return cls(_core.ClassicCore(doc["tokens"], merges, doc["suffix"], doc["unk_token"]))

    def to_str(self) -> str:
        """The model as the JSON ``save`` writes (tokens in id order, merges in order)."""
        return json.dumps(self._doc(), ensure_ascii=False)

    def save(self, path: str) -> None:
        """Write the model as JSON (``to_str``), atomically."""
        _files.write_atomic(path, self.to_str())

    @classmethod
    def load(cls, path: str) -> ClassicBPE:
        with open(os.fspath(path), encoding="utf-8") as f:
            try:
                doc = json.load(f)
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}: not a ClassicBPE file ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a ClassicBPE file (expected format {_FORMAT!r})")
        return cls._from_doc(doc)

    # ----- pickling and equality: by the saved form -----

    def __reduce__(self):
        return (ClassicBPE._from_doc, (self._doc(),))

    def __eq__(self, other) -> bool:
        if not isinstance(other, ClassicBPE):
            return NotImplemented
        return self._doc() == other._doc()

    __hash__ = None  # type: ignore[assignment]
