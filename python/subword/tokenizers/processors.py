"""``subword.tokenizers.processors``: HF ``tokenizers.processors``, each a thin wrapper of a Rust
``CoreProcessor`` (``rust/processors/``; HF's template syntax is read there). So far the
template processors: ``TemplateProcessing`` and ``BertProcessing``."""

from __future__ import annotations

from typing import Any

from .. import _core
from ._component import Component

__all__ = ["BertProcessing", "PostProcessor", "TemplateProcessing"]


class PostProcessor(Component):
    """Base class of the post-processors (HF's ``tokenizers.processors.PostProcessor``)."""

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self._core_object().num_special_tokens_to_add(bool(is_pair))


def _token_and_id(what: str, value: Any) -> tuple[str, int]:
    if isinstance(value, (tuple, list)) and len(value) == 2:
        a, b = value
        if isinstance(a, str) and isinstance(b, int) and not isinstance(b, bool):
            return a, b
        if isinstance(b, str) and isinstance(a, int) and not isinstance(a, bool):
            return b, a
    raise TypeError(f"{what}: expected a (token, id) pair, got {value!r}")


class BertProcessing(PostProcessor):
    """``[CLS] $A [SEP]``, and ``[CLS] $A [SEP] $B:1 [SEP]:1`` for pairs."""

    _fields = ("sep", "cls")

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]):
        self.sep = _token_and_id("sep", sep)
        self.cls = _token_and_id("cls", cls)

    def _build(self) -> Any:
        return _core.CoreProcessor.bert(self.sep, self.cls)


def _items(what: str, template: Any) -> list[str]:
    if isinstance(template, str):
        return [template]
    if isinstance(template, (list, tuple)) and all(isinstance(t, str) for t in template):
        return list(template)
    raise TypeError(f"{what}: expected a template string or a list of strings, got {template!r}")


def _special(item: Any) -> tuple[str, list[int], list[str]]:
    """(name, ids, token strings); no strings means the name for each id."""
    if isinstance(item, dict):
        ids, tokens = item.get("ids"), item.get("tokens", [])
        if not isinstance(item.get("id"), str) or not isinstance(ids, list):
            raise TypeError(f"special token {item!r}: expected {{'id': str, 'ids': [int, ...]}}")
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"special token {item!r}: 'tokens' must be a list of str")
        return item["id"], [int(i) for i in ids], list(tokens)
    name, id = _token_and_id("special_tokens", item)
    return name, [id], []


class TemplateProcessing(PostProcessor):
    """HF's templates: ``single="[CLS] $A [SEP]"``, ``pair="[CLS] $A [SEP] $B:1 [SEP]:1"``,
    ``special_tokens=[("[CLS]", 1), ("[SEP]", 0)]`` (or HF's ``{"id", "ids", "tokens"}``)."""

    _fields = ("single", "pair", "special_tokens")

    def __init__(self, single: Any = None, pair: Any = None, special_tokens: Any = None):
        self.single = _items("single", "$0" if single is None else single)
        self.pair = _items("pair", "$A:0 $B:1" if pair is None else pair)
        self.special_tokens = [_special(t) for t in (special_tokens or [])]

    def _build(self) -> Any:
        return _core.CoreProcessor.template(self.single, self.pair, self.special_tokens)
