"""tiktoken's public surface on subword's engine: ``import subword.tiktoken as tiktoken``.

Same names, arguments, ids and errors as tiktoken 0.14 (``get_encoding``, ``encoding_for_model``,
``encoding_name_for_model``, ``list_encoding_names``, ``Encoding``, ``load``, ``registry``,
``model``); installed ``tiktoken_ext`` plugins are honoured. tiktoken itself is not needed, except
by plugins that import it.
"""

from ..encoding import Encoding
from . import load, model, registry
from .model import encoding_for_model, encoding_name_for_model
from .registry import get_encoding, list_encoding_names

__all__ = [
    "Encoding",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load",
    "model",
    "registry",
]
