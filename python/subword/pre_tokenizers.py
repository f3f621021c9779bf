"""``subword.pre_tokenizers``: HF ``tokenizers.pre_tokenizers`` names."""

from __future__ import annotations

from . import _core
from ._value import ByValue

__all__ = ["BertPreTokenizer", "ByteLevel", "Split", "Sequence"]


def _byte_alphabet() -> list[str]:
    keep = [b for b in range(256) if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF]
    out, extra = [], 0
    for b in range(256):
        if b in keep:
            out.append(chr(b))
        else:
            out.append(chr(256 + extra))
            extra += 1
    return out


class ByteLevel(ByValue):
    """Bytes as printable characters; with ``use_regex`` the text is first cut by GPT-2's pattern.

    ``add_prefix_space=True`` (HF's default) puts a space before the text (before each stretch
    between special tokens) when it does not start with one.
    """

    def __init__(
        self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True
    ):
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    @staticmethod
    def alphabet() -> list[str]:
        """The 256 characters that stand for the bytes."""
        return _byte_alphabet()

    def _pattern(self) -> str | None:
        return _core.GPT2_PATTERN if self.use_regex else None

    def _json(self) -> dict:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }


class Split(ByValue):
    """Cut text by a regex, keeping the matches as pieces (``behavior="isolated"`` only)."""

    def __init__(self, pattern, behavior: str = "isolated", invert: bool = False):
        pattern = getattr(pattern, "pattern", pattern)
        if not isinstance(pattern, str):
            raise TypeError("Split pattern must be a str or an object with a .pattern str")
        if behavior.lower() != "isolated" or invert:
            raise ValueError('only Split(pattern, behavior="isolated", invert=False) is supported')
        self.pattern = pattern


class Sequence(ByValue):
    """``Sequence([Split(regex), …, ByteLevel(use_regex=False)])``: one or more patterns, each
    isolating its matches within the pieces of the one before (DeepSeek-V3 has three), then
    bytes."""

    def __init__(self, pretokenizers: list):
        *splits, last = list(pretokenizers) or [None]
        if (
            not splits
            or not all(isinstance(p, Split) for p in splits)
            or not isinstance(last, ByteLevel)
            or last.use_regex
        ):
            raise ValueError(
                "only Sequence([Split(pattern), …, ByteLevel(use_regex=False)]) is supported"
            )
        self.pretokenizers = list(pretokenizers)
        self.add_prefix_space = last.add_prefix_space

    def _pattern(self) -> str | list[str]:
        """The pattern as the core takes it: one regex, or the list applied in turn."""
        patterns = [p.pattern for p in self.pretokenizers[:-1]]
        return patterns[0] if len(patterns) == 1 else patterns

    def _json(self) -> dict:
        splits = [
            {
                "type": "Split",
                "pattern": {"Regex": p.pattern},
                "behavior": "Isolated",
                "invert": False,
            }
            for p in self.pretokenizers[:-1]
        ]
        return {"type": "Sequence", "pretokenizers": [*splits, self.pretokenizers[-1]._json()]}


class BertPreTokenizer(ByValue):
    """Words split on whitespace; each punctuation character is a word of its own."""

    def _json(self) -> dict:
        return {"type": "BertPreTokenizer"}
