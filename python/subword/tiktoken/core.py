"""``tiktoken.core``: the ``Encoding`` class (subword's)."""

from ..encoding import Encoding

__all__ = ["Encoding"]
