"""subword: exact, fast subword tokenizers (byte-level BPE, WordPiece) with a Rust core.

The tiktoken dialect::

    import subword
    enc = subword.get_encoding("cl100k_base")
    ids = enc.encode("hello world")
"""

from . import decoders, models, normalizers, pre_tokenizers, processors, trainers
from ._core import get_num_threads, set_num_threads
from .classic import ClassicBPE
from .encoding import Encoding
from .registry import RanksNotFoundError, get_encoding, list_encoding_names
from .shards import encode_files, read_shards
from .tokenizer import Encoded, Tokenizer
from .training import count_pretokens, train, train_from_counts, train_from_iterator

__all__ = [
    "ClassicBPE",
    "Encoded",
    "Encoding",
    "Tokenizer",
    "decoders",
    "models",
    "normalizers",
    "pre_tokenizers",
    "processors",
    "trainers",
    "RanksNotFoundError",
    "get_encoding",
    "get_num_threads",
    "set_num_threads",
    "list_encoding_names",
    "train",
    "train_from_counts",
    "train_from_iterator",
    "count_pretokens",
    "encode_files",
    "read_shards",
]
__version__ = "0.1.0"


def _threads_from_environment() -> None:
    """``SUBWORD_NUM_THREADS``: the process-wide thread count for one long text, checked here so
    that a mistyped value is an error, not ignored."""
    import os

    value = os.environ.get("SUBWORD_NUM_THREADS")
    if value is None:
        return
    try:
        n = int(value)
    except ValueError:
        raise ValueError(
            f"SUBWORD_NUM_THREADS={value!r} is not an integer: give a thread count "
            "(0 = every core, 1 = never parallel) or unset it"
        ) from None
    set_num_threads(n)


_threads_from_environment()
