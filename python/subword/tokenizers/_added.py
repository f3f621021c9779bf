"""``AddedToken`` (HF's ``tokenizers.AddedToken``): a string cut out of the text before the
rest of the pipeline sees it, as one token. The matching is the Rust core's
(``rust/added_tokens/``); this is its settings."""

from __future__ import annotations

_FLAGS = ("single_word", "lstrip", "rstrip")


class AddedToken:
    """``content`` and how it matches: ``single_word`` (not inside a word), ``lstrip`` /
    ``rstrip`` (take the whitespace before / after it), ``normalized`` (found in the normalized
    text; by default every token but a special one is), ``special`` (skipped when decoding with
    ``skip_special_tokens``)."""

    __slots__ = ("content", "single_word", "lstrip", "rstrip", "_normalized", "special")

    def __init__(
        self,
        content: str | None = None,
        single_word: bool = False,
        lstrip: bool = False,
        rstrip: bool = False,
        normalized: bool | None = None,
        special: bool = False,
    ):
        content = "" if content is None else content
        if not isinstance(content, str):
            raise TypeError(f"AddedToken content must be a str, got {type(content).__name__}")
        self.content = content
        self.single_word, self.lstrip, self.rstrip = bool(single_word), bool(lstrip), bool(rstrip)
        self._normalized = None if normalized is None else bool(normalized)
        self.special = bool(special)

    @property
    def normalized(self) -> bool:
        # Unset, it follows `special` (HF's rule), also when `special` changes later.
        return not self.special if self._normalized is None else self._normalized

    @normalized.setter
    def normalized(self, value: bool) -> None:
        self._normalized = bool(value)

    def _tuple(self, id: int) -> tuple:
        return (id, self.content, self.single_word, self.lstrip, self.rstrip,
                self.normalized, self.special)  # fmt: skip

    @classmethod
    def _from_tuple(cls, t: tuple) -> AddedToken:
        _, content, single_word, lstrip, rstrip, normalized, special = t
        return cls(content, single_word, lstrip, rstrip, normalized, special)

    def __getstate__(self) -> dict:
        return {
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        }

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def __reduce__(self):
        return (AddedToken, (), self.__getstate__())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AddedToken):
            return NotImplemented
        return self.__getstate__() == other.__getstate__()

    def __hash__(self) -> int:
        return hash(self.content)

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        return (
            f'AddedToken("{self.content}", rstrip={self.rstrip}, lstrip={self.lstrip}, '
            f"single_word={self.single_word}, normalized={self.normalized}, "
            f"special={self.special})"
        )


def as_added(token, special: bool) -> AddedToken:
    """A str or AddedToken argument of ``add_tokens`` / ``add_special_tokens``."""
    if isinstance(token, str):
        return AddedToken(token, special=special)
    if isinstance(token, AddedToken):
        if special:
            # As HF does: the caller's token becomes special (so, unless it was told
            # otherwise, no longer normalized).
            token.special = True
        return token
    raise TypeError(f"added tokens are str or AddedToken, got {type(token).__name__}")
