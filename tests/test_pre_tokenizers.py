"""``subword.tokenizers.pre_tokenizers`` against HF ``tokenizers.pre_tokenizers``: the pieces and
their character offsets from ``pre_tokenize_str`` for every component, behavior and random
sequences on hypothesis text; pickling and the errors."""

from __future__ import annotations

import pickle

import pytest
import subword.tokenizers as ours
import textgen
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st
from subword.tokenizers import pre_tokenizers as P

HP = hf.pre_tokenizers
BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]


def _regex(m, pattern):
    return (ours.Regex if m is P else hf.Regex)(pattern)


ALL = [
    (lambda m: m.ByteLevel(), "ByteLevel"),
    (lambda m: m.ByteLevel(add_prefix_space=False), "ByteLevel no prefix"),
    (lambda m: m.ByteLevel(use_regex=False), "ByteLevel no regex"),
    (lambda m: m.Metaspace(), "Metaspace"),
    (lambda m: m.Metaspace(prepend_scheme="first"), "Metaspace first"),
    (lambda m: m.Metaspace(prepend_scheme="never", split=False), "Metaspace never unsplit"),
    (lambda m: m.Metaspace(replacement="_"), "Metaspace _"),
    (lambda m: m.FixedLength(), "FixedLength"),
    (lambda m: m.FixedLength(2), "FixedLength 2"),
    (lambda m: m.Whitespace(), "Whitespace"),
    (lambda m: m.WhitespaceSplit(), "WhitespaceSplit"),
    (lambda m: m.BertPreTokenizer(), "BertPreTokenizer"),
    (lambda m: m.Digits(), "Digits runs"),
    (lambda m: m.Digits(individual_digits=True), "Digits individual"),
    (lambda m: m.CharDelimiterSplit("x"), "CharDelimiterSplit"),
    (lambda m: m.UnicodeScripts(), "UnicodeScripts"),
    *[(lambda m, b=b: m.Punctuation(b), f"Punctuation {b}") for b in BEHAVIORS],
    *[(lambda m, b=b: m.Split(" ", b), f"Split str {b}") for b in BEHAVIORS],
    *[(lambda m, b=b: m.Split(" ", b, invert=True), f"Split str inverted {b}") for b in BEHAVIORS],
    *[(lambda m, b=b: m.Split(_regex(m, r"\s+"), b), f"Split regex {b}") for b in BEHAVIORS],
    *[
        (lambda m, b=b: m.Split(_regex(m, r"[0-9]+|ab"), b, invert=True), f"Split regex inv {b}")
        for b in BEHAVIORS
    ],
]
IDS = [name for _, name in ALL]

texts = st.one_of(
    textgen.texts,
    st.text(alphabet="ab x1 2,.!?-'\t\n日本。²½é", max_size=40),
    st.text(alphabet="a -1ελжاש日本ーカひ한\u0301\u0953\u0589\U0001f600\U00011d00", max_size=40),
)


@pytest.mark.parametrize("make", [m for m, _ in ALL], ids=IDS)
@settings(max_examples=200)
@given(text=texts)
def test_pieces_and_offsets_equal_hf(make, text):
    assert make(P).pre_tokenize_str(text) == make(HP).pre_tokenize_str(text)


@settings(max_examples=200)
@given(picks=st.lists(st.sampled_from(range(len(ALL))), min_size=1, max_size=3), text=texts)
def test_sequences_equal_hf(picks, text):
    mine = P.Sequence([ALL[k][0](P) for k in picks])
    theirs = HP.Sequence([ALL[k][0](HP) for k in picks])
    assert mine.pre_tokenize_str(text) == theirs.pre_tokenize_str(text)


@pytest.mark.parametrize("make", [m for m, _ in ALL], ids=IDS)
def test_getstate_is_hfs_json(make):
    import json

    assert json.loads(make(P).__getstate__()) == json.loads(make(HP).__getstate__())


@pytest.mark.parametrize("make", [m for m, _ in ALL], ids=IDS)
def test_pickle_and_equality(make):
    p = make(P)
    back = pickle.loads(pickle.dumps(p))
    assert type(back) is type(p) and back == p
    sample = "Hello, wörld!! 12 3x4  ab"
    assert back.pre_tokenize_str(sample) == p.pre_tokenize_str(sample)
    assert isinstance(p, P.PreTokenizer)


def test_sequences_index_and_fields_change():
    seq = P.Sequence([P.WhitespaceSplit(), P.Digits(individual_digits=False)])
    want = HP.Sequence([HP.WhitespaceSplit(), HP.Digits(individual_digits=False)])
    assert seq.pre_tokenize_str("ab12 c3") == want.pre_tokenize_str("ab12 c3")
    seq[1].individual_digits = True
    assert seq.pre_tokenize_str("a12") == HP.Sequence(
        [HP.WhitespaceSplit(), HP.Digits(individual_digits=True)]
    ).pre_tokenize_str("a12")
    seq[0] = P.Punctuation()
    assert len(seq) == 2 and isinstance(seq[0], P.Punctuation)


@pytest.mark.parametrize("glue", ["", "a", "α"], ids=["in order", "between latin", "between greek"])
def test_unicode_scripts_groups_every_code_point_as_hf(glue):
    # In code point order a char whose script differs from HF's shows as a cut beside the
    # rest of its block; glued between Latin and between Greek letters, a char HF takes as
    # "Any" (joining both) is told apart from every real script.
    text = glue.join(textgen.every_code_point())
    ours_pieces = P.UnicodeScripts().pre_tokenize_str(text)
    hf_pieces = HP.UnicodeScripts().pre_tokenize_str(text)
    assert len(ours_pieces) == len(hf_pieces)
    for mine, theirs in zip(ours_pieces, hf_pieces):
        assert mine == theirs


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="behavior"):
        P.Punctuation("sideways")
    with pytest.raises(ValueError, match="behavior"):
        P.Split(" ", "Up")
    with pytest.raises(ValueError, match="one character"):
        P.CharDelimiterSplit("ab")
    with pytest.raises(ValueError, match="invalid regex"):
        P.Split(ours.Regex("("), "removed")
    with pytest.raises(TypeError, match="Regex"):
        P.Split(3, "removed")
    with pytest.raises(TypeError, match="position 0"):
        P.Sequence(["x"])
    with pytest.raises(ValueError, match="length 1"):
        P.Metaspace(replacement="")
    with pytest.raises(ValueError, match="at least 1"):
        P.FixedLength(0)
    with pytest.raises(ValueError, match="prepend_scheme"):
        P.Metaspace(prepend_scheme="twice")
    with pytest.raises(TypeError, match="unknown options"):
        P.ByteLevel(prefix=True)
    assert sorted(P.ByteLevel.alphabet()) == sorted(HP.ByteLevel.alphabet())
