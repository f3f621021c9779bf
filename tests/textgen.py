"""Hypothesis strategies for text that stresses byte-level BPE pre-tokenisers.

The pieces are chosen around where the built-in patterns (r50k, cl100k, o200k) make decisions:
whitespace runs and the `\\s+(?!\\S)` give-back, the three-digit number groups, contractions in
any case, punctuation runs, letters of several scripts and case classes (o200k splits on case),
marks (\\p{M}), and multi-code-point emoji.
"""

from __future__ import annotations

import functools
import string

from hypothesis import strategies as st

WHITESPACE = [
    " ",
    "  ",
    "\t",
    "\n",
    "\n\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x85",
    "\u00a0",
    "\u1680",
    "\u2000",
    "\u2009",
    "\u200b",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u3000",
    "\ufeff",
]
CONTRACTIONS = [
    "'s",
    "'t",
    "'re",
    "'ve",
    "'m",
    "'ll",
    "'d",
    "'S",
    "'T",
    "'RE",
    "'Re",
    "'VE",
    "'vE",
    "'LL",
    "'Ll",
    "'D",
    "'M",
    "'",
    "''",
    "’s",
    "’t",
    "'x",
    "'sss",
    "'llama",
]
PUNCT = string.punctuation + "“”‘’—–…«»¡¿·•§¶†‡※、。！？「」（）：；，．"
EMOJI = [
    "😀",
    "👍",
    "👍🏽",
    "❤️",
    "✈️",
    "1️⃣",
    "#️⃣",
    "🇺🇸",
    "🇯🇵",
    "🇩🇪🇫🇷",
    "👨‍👩‍👧‍👦",
    "👩🏽‍💻",
    "🏳️‍🌈",
    "🧑‍🤝‍🧑",
    "🫠",
    "🦀",
    "🐍",
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿",
]
COMBINING = [
    chr(c)
    for c in (
        0x0300,
        0x0301,
        0x0302,
        0x0303,
        0x0308,
        0x030A,
        0x0327,
        0x0331,
        0x036F,
        0x0489,
        0x20DD,
        0xFE0F,
        0x093F,
        0x0E31,
    )
]
OTHER_DIGITS = ["٠١٢٣", "४२", "²", "½", "Ⅻ", "①", "𝟙𝟚", "໒"]


def _chars(lo: int, hi: int, min_size: int = 1, max_size: int = 8) -> st.SearchStrategy[str]:
    return st.text(
        st.characters(min_codepoint=lo, max_codepoint=hi), min_size=min_size, max_size=max_size
    )


whitespace_runs = st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=10).map("".join)
digit_runs = st.one_of(
    st.text("0123456789", min_size=1, max_size=40),
    st.sampled_from(OTHER_DIGITS),
)
latin = st.one_of(
    st.text(string.ascii_letters, min_size=1, max_size=12),
    st.text(string.ascii_lowercase, min_size=1, max_size=8),
    st.text(string.ascii_uppercase, min_size=1, max_size=8),
    st.sampled_from(["Hello", "HELLO", "hELLO", "CamelCase", "iPhone", "ÀÉÎõü", "ǅǈǋ", "ß", "ﬁ"]),
)
combining = st.tuples(
    st.sampled_from(["a", "e", "E", "o", "n", "अ", "ก", " ", "1", "!", ""]),
    st.lists(st.sampled_from(COMBINING), min_size=1, max_size=4).map("".join),
).map("".join)
cjk = _chars(0x4E00, 0x9FFF)
hangul = st.one_of(_chars(0xAC00, 0xD7A3), _chars(0x1100, 0x11FF), _chars(0x3130, 0x318F))
kana = _chars(0x3040, 0x30FF)
cyrillic = _chars(0x0400, 0x04FF)
other_scripts = st.one_of(
    _chars(0x0370, 0x03FF), _chars(0x0590, 0x06FF), _chars(0x0900, 0x097F), _chars(0x0E00, 0x0E7F)
)
emoji = st.one_of(st.sampled_from(EMOJI), _chars(0x1F300, 0x1FAFF, max_size=4))
punct = st.text(PUNCT, min_size=1, max_size=6)

fragment = st.one_of(
    whitespace_runs,
    digit_runs,
    st.sampled_from(CONTRACTIONS),
    punct,
    latin,
    combining,
    cjk,
    hangul,
    kana,
    cyrillic,
    other_scripts,
    emoji,
    st.text(max_size=8),
)

#: Concatenations of the fragments above, or any text at all.
texts = st.one_of(
    st.lists(fragment, max_size=24).map("".join),
    st.text(),
)

#: Short texts for the slow encode_with_unstable.
short_texts = st.one_of(
    st.lists(
        st.one_of(
            latin, whitespace_runs, digit_runs, st.sampled_from(CONTRACTIONS), punct, cjk, emoji
        ),
        max_size=3,
    ).map("".join),
    st.text(max_size=6),
)


@functools.cache
def _with_specials(specials: tuple[str, ...]) -> st.SearchStrategy[str]:
    near = []
    for s in specials:
        near += [s[:-1], s[1:], s[: len(s) // 2], s.upper(), s + s[:2]]
    near = [n for n in near if n and n not in specials]
    piece = st.one_of(
        fragment,
        st.sampled_from(specials),
        st.sampled_from(near) if near else st.just("<|"),
    )
    return st.lists(piece, max_size=16).map("".join)


def with_specials(specials) -> st.SearchStrategy[str]:
    """Text with the given special tokens, and near misses of them, mixed in. (Cached: build it
    once, not once per example, or hypothesis spends its time validating strategies.)"""
    return _with_specials(tuple(sorted(specials)))


@functools.cache
def _special_case(specials: tuple[str, ...]) -> st.SearchStrategy:
    return st.tuples(_with_specials(specials), st.frozensets(st.sampled_from(specials)))


def special_case(specials) -> st.SearchStrategy[tuple[str, frozenset[str]]]:
    """(text with specials, a subset of the specials to allow)."""
    return _special_case(tuple(sorted(specials)))


@functools.cache
def id_sequences(ids: tuple[int, ...], max_size: int = 12) -> st.SearchStrategy[list[int]]:
    """Lists of ids drawn from `ids`."""
    return st.lists(st.sampled_from(ids), max_size=max_size)


def every_code_point() -> list[str]:
    """Every Unicode scalar value, as one-char strings, in code point order."""
    return [chr(u) for u in range(0x110000) if not 0xD800 <= u <= 0xDFFF]
