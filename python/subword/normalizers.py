"""``subword.normalizers``: HF ``tokenizers.normalizers`` names."""

from __future__ import annotations

__all__ = ["BertNormalizer"]


class BertNormalizer:
    """BERT's text clean-up, as ``tokenizers.normalizers.BertNormalizer``.

    ``clean_text`` drops control characters and turns all whitespace into spaces;
    ``handle_chinese_chars`` puts spaces around CJK ideographs; ``strip_accents`` (``None``:
    same as ``lowercase``) removes combining marks after NFD; ``lowercase`` folds case.
    """

    def __init__(
        self,
        clean_text: bool = True,
        handle_chinese_chars: bool = True,
        strip_accents: bool | None = None,
        lowercase: bool = True,
    ):
        self.clean_text = bool(clean_text)
        self.handle_chinese_chars = bool(handle_chinese_chars)
        self.strip_accents = strip_accents
        self.lowercase = bool(lowercase)

    def _json(self) -> dict:
        return {
            "type": "BertNormalizer",
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
        }

    @classmethod
    def _from_json(cls, d: dict) -> BertNormalizer:
        return cls(
            d.get("clean_text", True),
            d.get("handle_chinese_chars", True),
            d.get("strip_accents"),
            d.get("lowercase", True),
        )
