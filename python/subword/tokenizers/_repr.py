"""HF's ``repr`` and ``str`` of tokenizers and components, rendered from their tokenizer.json form.

HF prints its Rust structs through serde in a Python-like syntax: a struct or a tagged enum as
``Name(field=value, …)`` (the ``type`` tag gives the name), a map as ``{"key":value, …}``, a
unit enum value bare (``behavior=Isolated``), a newtype variant as ``Name(value)``
(``pattern=String(" ")``), a tuple as ``(a, b)``, strings in double quotes as they are.
``str`` cuts lists and maps after five items (``, ...``). The JSON does not say which strings
are enum values, which arrays are tuples or which untagged objects are named structs, so those
few places are listed here by their keys.
"""

from __future__ import annotations

from typing import Any

#: Keys whose string values are enum variants, printed bare.
_ENUMS = {"behavior", "direction", "prepend_scheme", "strategy"}
#: Keys whose arrays are tuples.
_TUPLES = {"sep", "cls"}
#: Untagged objects HF prints as named structs, by their key.
_STRUCTS = {"truncation": "TruncationParams", "padding": "PaddingParams"}
#: Keys whose object is a newtype variant (one key: the variant's name).
_VARIANTS = {"pattern", "strategy"}
_SHORT = 5

#: Fields in HF's struct order, per struct; the core's JSON has its keys sorted. A struct not
#: listed keeps the JSON's order.
_ORDER = {
    "Tokenizer": [
        "version",
        "truncation",
        "padding",
        "added_tokens",
        "normalizer",
        "pre_tokenizer",
        "post_processor",
        "decoder",
        "model",
    ],
    "TruncationParams": ["direction", "max_length", "strategy", "stride"],
    "PaddingParams": [
        "strategy",
        "direction",
        "pad_to_multiple_of",
        "pad_id",
        "pad_type_id",
        "pad_token",
    ],
    "AddedToken": ["id", "content", "single_word", "lstrip", "rstrip", "normalized", "special"],
    "SpecialToken": ["id", "type_id", "ids", "tokens"],
    "Strip": ["strip_left", "strip_right", "content", "start", "stop"],
    "Replace": ["pattern", "content"],
    "BertNormalizer": ["clean_text", "handle_chinese_chars", "strip_accents", "lowercase"],
    "Metaspace": ["replacement", "prepend_scheme", "split"],
    "Split": ["pattern", "behavior", "invert"],
    "ByteLevel": ["add_prefix_space", "trim_offsets", "use_regex"],
    "CTC": ["pad_token", "word_delimiter_token", "cleanup"],
    "WordPiece": [
        "prefix",
        "cleanup",
        "unk_token",
        "continuing_subword_prefix",
        "max_input_chars_per_word",
        "vocab",
    ],
    "BertProcessing": ["sep", "cls"],
    "RobertaProcessing": ["sep", "cls", "trim_offsets", "add_prefix_space"],
    "TemplateProcessing": ["single", "pair", "special_tokens"],
    "WordLevel": ["vocab", "unk_token"],
    "BPE": [
        "dropout",
        "unk_token",
        "continuing_subword_prefix",
        "end_of_word_suffix",
        "fuse_unk",
        "byte_fallback",
        "ignore_merges",
        "vocab",
        "merges",
    ],
}


def _ordered(name: str, fields: dict) -> dict:
    order = _ORDER.get(name)
    if order is None:
        return fields
    rank = {k: i for i, k in enumerate(order)}
    return dict(sorted(fields.items(), key=lambda kv: rank.get(kv[0], len(rank))))


def render(tree: Any, name: str | None = None, short: bool = False) -> str:
    """``tree`` (a tokenizer.json object) as HF prints it; ``name`` for the root struct."""
    return _Render(short).value(tree, key=None, name=name)


class _Render:
    def __init__(self, short: bool):
        self.short = short

    def items(self, parts: list[str]) -> str:
        if self.short and len(parts) > _SHORT:
            parts = parts[:_SHORT] + ["..."]
        return ", ".join(parts)

    def struct(self, name: str, fields: dict) -> str:
        fields = _ordered(name, fields)
        inner = ", ".join(f"{k}={self.value(v, key=k)}" for k, v in fields.items())
        return f"{name}({inner})"

    def map(self, items, key: str | None) -> str:
        parts = [f'"{k}":{self.value(x, key=k)}' for k, x in items]
        return "{" + self.items(parts) + "}"

    def value(self, v: Any, key: str | None, name: str | None = None) -> str:
        if v is None:
            return "None"
        if isinstance(v, bool):
            return "True" if v else "False"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return str(int(v)) if v.is_integer() else repr(v)
        if isinstance(v, str):
            return v if key in _ENUMS else f'"{v}"'
        if isinstance(v, list):
            if key in _TUPLES:
                return "(" + ", ".join(self.value(x, key=None) for x in v) + ")"
            if key == "merges":
                return "[" + self.items([self.tuple(m) for m in v]) + "]"
            if key in ("single", "pair"):
                return "[" + self.items([self.piece(p) for p in v]) + "]"
            if key == "added_tokens":
                return "[" + self.items([self.value(x, key="added_token") for x in v]) + "]"
            return "[" + self.items([self.value(x, key=None) for x in v]) + "]"
        if isinstance(v, dict):
            if name is not None:
                return self.struct(name, v)
            if "type" in v:
                fields = {k: x for k, x in v.items() if k != "type"}
                return self.struct(v["type"], fields)
            if key in _STRUCTS:
                return self.struct(_STRUCTS[key], v)
            if key in _VARIANTS and len(v) == 1:
                ((variant, inner),) = v.items()
                return f"{variant}({self.value(inner, key=None)})"
            if key == "special_tokens":
                parts = [f'"{k}":{self.struct("SpecialToken", x)}' for k, x in v.items()]
                return "{" + self.items(parts) + "}"
            if key == "vocab":  # in id order, as HF writes it
                return self.map(sorted(v.items(), key=lambda kv: kv[1]), key)
            if key == "added_token":
                return self.map(_ordered("AddedToken", v).items(), key)
            return self.map(v.items(), key)
        return repr(v)

    def tuple(self, merge: Any) -> str:
        if isinstance(merge, str):  # the old merges form, "a b"
            merge = merge.split(" ", 1)
        return "(" + ", ".join(self.value(x, key=None) for x in merge) + ")"

    def piece(self, piece: dict) -> str:
        """A template piece: ``SpecialToken(id="[CLS]", type_id=0)`` or ``Sequence(id=A, …)``."""
        ((variant, fields),) = piece.items()
        if variant == "Sequence":
            inner = ", ".join(
                f"{k}={x}" if k == "id" else f"{k}={self.value(x, key=k)}"
                for k, x in _ordered("SpecialToken", fields).items()
            )
            return f"Sequence({inner})"
        return self.struct(variant, fields)
