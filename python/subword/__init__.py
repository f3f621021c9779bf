"""subword: exact, fast byte-level BPE tokenizers with a Rust core.

The tiktoken dialect::

    import subword
    enc = subword.get_encoding("cl100k_base")
    ids = enc.encode("hello world")
"""

from .encoding import Encoding
from .registry import RanksNotFoundError, get_encoding, list_encoding_names
from .training import train, train_from_counts, train_from_iterator

__all__ = [
    "Encoding",
    "RanksNotFoundError",
    "get_encoding",
    "list_encoding_names",
    "train",
    "train_from_counts",
    "train_from_iterator",
]
__version__ = "0.1.0"
