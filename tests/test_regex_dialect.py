"""HF's ``Regex`` patterns (Oniguruma) in ``Split`` and ``Replace`` match what HF's match, where
fancy-regex alone would not: ``\\w``/``\\W`` inside and outside bracket classes,
``atom{n,m}+``, line anchors, the ``m`` flag, ``\\h``, ``\\Z``, ``\\R``. HF ``tokenizers`` is
the oracle: every code point through each class, and hypothesis text through patterns built
from them."""

from __future__ import annotations

import pytest
import subword.tokenizers as ours
import textgen
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st
from subword import _core

CLASSES = [
    r"\w", r"[\w]", r"\W", r"[^\w]", r"[\W]", r"[\w-]", r"[^\w\s]", r"[\W\d]",
    r"\d", r"[\d]", r"\D", r"\s", r"[\s]", r"\S", r"\p{L}", r"[\p{N}]", r".",
]  # fmt: skip


@pytest.mark.parametrize("pattern", CLASSES)
def test_each_class_matches_every_code_point_as_hf(pattern):
    # Every match is one char, so "#" in place of each keeps the chars in step.
    text = "".join(c for c in textgen.every_code_point() if c != "#")
    mine = ours.normalizers.Replace(ours.Regex(pattern), "#").normalize_str(text)
    theirs = hf.normalizers.Replace(hf.Regex(pattern), "#").normalize_str(text)
    assert len(mine) == len(theirs)
    wrong = [hex(ord(t)) for m, h, t in zip(mine, theirs, text) if m != h]
    assert not wrong, wrong[:20]


PATTERNS = [
    r"\w+", r"\W+", r"[\w']+", r"\w+|[^\w\s]+", r"\d{1,3}+", r"[a-z]{2}+", r"\s*\w{2,3}+",
    r"[^\W\d_]+", r"\w(?=\W)", r"^\w", r"\w$", r"\s+$", r"^\s*\n", r"(?m:a.b)", r"(?m).\n",
    r"(?i)A\Z", r"\h+", r"[\h\s]+", r"\H", r"\R", r"a\R?b", r"(?<x>a)(?=\n)", r"[$^]",
]  # fmt: skip
# The built-in patterns, which Split runs on their hand-written scanners where Oniguruma reads
# them as written (all but cl100k's and GPT-2's, which keep the regex), plus GPT-2's as first
# published (what HF's own ByteLevel uses).
BUILT_IN = [
    _core.LLAMA3_PATTERN, _core.QWEN2_PATTERN, _core.TEKKEN_PATTERN, _core.O200K_PATTERN,
    _core.CL100K_PATTERN, _core.GPT2_PATTERN,
    r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
]  # fmt: skip
BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]

texts = st.one_of(
    textgen.texts,
    st.text(alphabet="ab1234 ²³¹¼½¾\u200c\u200d_-'é①Ⅷ\n\r\x0bAF$^", max_size=40),
)


@settings(max_examples=1600, deadline=None)
@given(
    text=texts,
    pattern=st.sampled_from(PATTERNS + BUILT_IN),
    behavior=st.sampled_from(BEHAVIORS),
    invert=st.booleans(),
)
def test_split_and_replace_match_hfs(text, pattern, behavior, invert):
    def run(lib):
        split = lib.pre_tokenizers.Split(lib.Regex(pattern), behavior, invert=invert)
        replace = lib.normalizers.Replace(lib.Regex(pattern), "<$>")
        return split.pre_tokenize_str(text), replace.normalize_str(text)

    assert run(ours) == run(hf)


def test_a_group_option_oniguruma_lacks_is_refused_as_in_hf():
    with pytest.raises(Exception, match="undefined group option"):
        hf.pre_tokenizers.Split(hf.Regex("(?s:a.b)"), "removed")
    with pytest.raises(ValueError, match="undefined group option 's'.*dot matches newline"):
        ours.pre_tokenizers.Split(ours.Regex("(?s:a.b)"), "removed")
