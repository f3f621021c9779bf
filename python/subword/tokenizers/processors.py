"""``subword.tokenizers.processors``: HF ``tokenizers.processors``, each a thin wrapper of a Rust
``CoreProcessor`` (``rust/processors/``; HF's template syntax is read there):
``TemplateProcessing``, ``BertProcessing``, ``RobertaProcessing``, ``ByteLevel`` and
``Sequence``."""

from __future__ import annotations

from typing import Any

from .. import _core
from ._component import Component, SequenceOf

__all__ = [
    "BertProcessing",
    "ByteLevel",
    "PostProcessor",
    "RobertaProcessing",
    "Sequence",
    "TemplateProcessing",
]


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
    """A template's pieces: a string split on whitespace, or HF's list form, one piece per item
    (so a special token's name may hold spaces)."""
    if isinstance(template, str):
        return template.split()
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
    if (
        isinstance(item, (tuple, list))
        and len(item) == 3
        and isinstance(item[0], str)
        and isinstance(item[1], list)
    ):
        # The form this class keeps (name, ids, token strings), as pickling gives it back.
        name, ids, tokens = item
        return _special({"id": name, "ids": ids, "tokens": tokens or []})
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
        self._core_object()  # a malformed template is refused here, as HF refuses it

    def _build(self) -> Any:
        return _core.CoreProcessor.template(self.single, self.pair, self.special_tokens)


class RobertaProcessing(PostProcessor):
    """``<s> $A </s>``, and ``<s> $A </s> </s> $B </s>`` for pairs, every type id 0; with
    ``trim_offsets`` the offsets lose the spaces byte-level tokens carry (the first token keeps
    a space ``add_prefix_space`` added)."""

    _fields = ("sep", "cls", "trim_offsets", "add_prefix_space")

    def __init__(
        self,
        sep: tuple[str, int],
        cls_token: tuple[str, int] | None = None,
        trim_offsets: bool = True,
        add_prefix_space: bool = True,
        cls: tuple[str, int] | None = None,
    ):
        if (cls_token is None) == (cls is None):
            raise TypeError("RobertaProcessing needs cls_token, a (token, id) pair")
        self.sep = _token_and_id("sep", sep)
        self.cls = _token_and_id("cls", cls_token if cls is None else cls)
        self.trim_offsets = bool(trim_offsets)
        self.add_prefix_space = bool(add_prefix_space)

    def _build(self) -> Any:
        return _core.CoreProcessor.roberta(
            self.sep, self.cls, self.trim_offsets, self.add_prefix_space
        )


class ByteLevel(PostProcessor):
    """Offsets trimmed of the spaces byte-level tokens carry (``trim_offsets``); adds no
    tokens."""

    _fields = ("add_prefix_space", "trim_offsets", "use_regex")

    def __init__(
        self,
        add_prefix_space: bool | None = None,
        trim_offsets: bool | None = None,
        use_regex: bool | None = None,
        **kwargs: Any,
    ):
        unknown = {k: v for k, v in kwargs.items() if not (k == "type" and v == "ByteLevel")}
        if unknown:
            raise TypeError(f"ByteLevel got unknown options {sorted(unknown)}")
        on = lambda v: True if v is None else bool(v)  # noqa: E731
        self.add_prefix_space = on(add_prefix_space)
        self.trim_offsets = on(trim_offsets)
        self.use_regex = on(use_regex)

    def _build(self) -> Any:
        return _core.CoreProcessor.byte_level(
            self.add_prefix_space, self.trim_offsets, self.use_regex
        )


class Sequence(SequenceOf, PostProcessor):
    """Post-processors applied in order, each to what the one before left."""

    _fields = ("processors",)
    _items = "processors"
    _kind = PostProcessor

    def __init__(self, processors: list):
        super().__init__(processors)

    def _build(self) -> Any:
        return _core.CoreProcessor.sequence([p._core_object() for p in self.processors])
