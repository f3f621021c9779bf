"""``subword.processors``: HF ``tokenizers.processors`` names (the special-token template)."""

from __future__ import annotations

from ._value import ByValue

__all__ = ["BertProcessing", "TemplateProcessing"]


def _token(t) -> tuple[str, int]:
    if not (isinstance(t, (tuple, list)) and len(t) == 2 and isinstance(t[1], int)):
        raise TypeError(f"expected a (token, id) pair, got {t!r}")
    return str(t[0]), int(t[1])


class BertProcessing(ByValue):
    """``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]`` (type ids 0 for A, 1 for B)."""

    def __init__(self, sep: tuple[str, int], cls: tuple[str, int]):
        self.sep = _token(sep)
        self.cls = _token(cls)

    def _json(self) -> dict:
        return {"type": "BertProcessing", "sep": list(self.sep), "cls": list(self.cls)}

    @classmethod
    def _from_json(cls, d: dict) -> BertProcessing:
        return cls(tuple(d["sep"]), tuple(d["cls"]))


def _pieces(template, what: str) -> list[dict]:
    items = template.split() if isinstance(template, str) else list(template)
    out = []
    for item in items:
        name, _, type_id = item.partition(":")
        if type_id and not type_id.isdigit():
            raise ValueError(f"{what} template: bad type id in {item!r} (use e.g. $B:1)")
        tid = int(type_id or 0)
        if name.startswith("$"):
            seq = name[1:] or "A"
            if seq.isdigit():
                seq, tid = "A", int(seq)
            if seq not in ("A", "B"):
                raise ValueError(f"{what} template: unknown sequence {item!r} (use $A or $B)")
            out.append({"Sequence": {"id": seq, "type_id": tid}})
        else:
            out.append({"SpecialToken": {"id": name, "type_id": tid}})
    return out


class TemplateProcessing(ByValue):
    """HF's template syntax: ``single="[CLS] $A [SEP]"``,
    ``pair="[CLS] $A [SEP] $B:1 [SEP]:1"``, ``special_tokens=[("[CLS]", 101), ("[SEP]", 102)]``.
    """

    def __init__(self, single="$A", pair=None, special_tokens=()):
        self.single = _pieces(single, "single")
        self.pair = _pieces(pair if pair is not None else "$A $B:1", "pair")
        self.special_tokens = [_token(t) for t in special_tokens]
        named = {t for t, _ in self.special_tokens}
        for p in self.single + self.pair:
            if "SpecialToken" in p and p["SpecialToken"]["id"] not in named:
                raise ValueError(
                    f"template uses {p['SpecialToken']['id']!r} but special_tokens does not "
                    "give its id"
                )
        if any(p.get("Sequence", {}).get("id") == "B" for p in self.single):
            raise ValueError("the single template cannot use $B")

        self._specials = {t: {"id": t, "ids": [i], "tokens": [t]} for t, i in self.special_tokens}

    def _json(self) -> dict:
        return {
            "type": "TemplateProcessing",
            "single": self.single,
            "pair": self.pair,
            "special_tokens": self._specials,
        }

    @classmethod
    def _from_json(cls, d: dict) -> TemplateProcessing:
        t = cls.__new__(cls)
        t.single, t.pair, t._specials = d["single"], d["pair"], d.get("special_tokens", {})
        t.special_tokens = [(name, v["ids"][0]) for name, v in t._specials.items() if v["ids"]]
        return t
