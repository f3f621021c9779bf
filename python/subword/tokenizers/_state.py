"""Wrappers of core objects read in Rust (a tokenizer.json's stages): each component class is
rebuilt from its tokenizer.json fields, handed over as Python values (``state()``), never as
JSON text; the core object read in Rust is kept as the wrapper's own, so nothing is rebuilt."""

from __future__ import annotations

import base64
import re
from types import ModuleType
from typing import Any

# Fields of a Sequence that hold members of the same kind.
_MEMBERS = ("normalizers", "pretokenizers", "decoders", "processors")
# Classes whose constructor names a field differently from the JSON form.
_RENAMED = {
    ("normalizers", "Strip"): {"strip_left": "left", "strip_right": "right"},
    ("decoders", "Strip"): {"start": "left", "stop": "right"},
}


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _template_items(items: list) -> str:
    out = []
    for item in items:
        if "SpecialToken" in item:
            s = item["SpecialToken"]
            out.append(f"{s['id']}:{s['type_id']}")
        else:
            s = item["Sequence"]
            out.append(f"${s['id']}:{s['type_id']}")
    return " ".join(out)


def from_state(state: dict, module: ModuleType) -> Any:
    """The component of ``module`` (``subword.tokenizers.normalizers`` …) whose tokenizer.json
    fields are ``state``."""
    from . import Regex

    kind = state["type"]
    cls = getattr(module, kind, None)
    if not isinstance(cls, type):
        raise ValueError(f"{module.__name__} has no {kind}")
    stage = module.__name__.rsplit(".", 1)[-1]
    if kind == "TemplateProcessing":
        return cls(
            single=_template_items(state["single"]),
            pair=_template_items(state["pair"]),
            special_tokens=list(state["special_tokens"].values()),
        )
    if kind == "BertProcessing":
        return cls(tuple(state["sep"]), tuple(state["cls"]))
    args = {}
    renamed = _RENAMED.get((stage, kind), {})
    for key, value in state.items():
        if key == "type":
            continue
        if key in _MEMBERS:
            value = [from_state(member, module) for member in value]
        elif key == "pattern" and isinstance(value, dict):
            value = Regex(value["Regex"]) if "Regex" in value else value["String"]
        elif key == "behavior":
            value = _snake(value)
        elif key == "precompiled_charsmap":
            value = base64.b64decode(value)
        elif key == "merges":
            value = [tuple(m) for m in value]
        args[renamed.get(key, key)] = value
    return cls(**args)


def wrap(core: Any, module: ModuleType) -> Any:
    """The Python component of a core object, keeping that object."""
    if core is None:
        return None
    if module.__name__.endswith(".models"):
        settings = core.settings()
        cls = getattr(module, settings.pop("type"))
        return cls._from_core(core, settings)
    obj = from_state(core.state(), module)
    # A Sequence rebuilds from its members on every use, so it keeps nothing.
    if not any(hasattr(obj, m) for m in _MEMBERS):
        object.__setattr__(obj, "_core_cache", core)
    return obj
