"""``subword.tokenizers.normalizers`` against HF ``tokenizers.normalizers``: the normalized text
of every component and of sequences of them on hypothesis text, the original range of every
normalized character (through HF's own offsets), pickling and the errors."""

from __future__ import annotations

import json
import pickle

import pytest
import subword.tokenizers as ours
import textgen
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st
from spm_charsmaps import RULES, charsmap
from subword.tokenizers import normalizers as N

HN = hf.normalizers

# (ours, HF's) for each component, with a few settings.
PAIRS = [
    (lambda m: m.NFC(), "NFC"),
    (lambda m: m.NFD(), "NFD"),
    (lambda m: m.NFKC(), "NFKC"),
    (lambda m: m.NFKD(), "NFKD"),
    (lambda m: m.Lowercase(), "Lowercase"),
    (lambda m: m.StripAccents(), "StripAccents"),
    (lambda m: m.Strip(), "Strip"),
    (lambda m: m.Strip(left=False, right=True), "Strip right"),
    (lambda m: m.Strip(left=True, right=False), "Strip left"),
    (lambda m: m.Prepend("▁"), "Prepend"),
    (lambda m: m.Replace(" ", "▁"), "Replace str"),
    (lambda m: m.Replace("ab", ""), "Replace str to empty"),
    (lambda m: m.ByteLevel(), "ByteLevel"),
    (lambda m: m.Nmt(), "Nmt"),
    (lambda m: m.Precompiled(charsmap("nmt_nfkc")), "Precompiled nmt_nfkc"),
    (lambda m: m.Precompiled(charsmap("nmt_nfkc_cf")), "Precompiled nmt_nfkc_cf"),
    (lambda m: m.BertNormalizer(), "Bert"),
    (lambda m: m.BertNormalizer(lowercase=False, strip_accents=True), "Bert accents"),
    (lambda m: m.BertNormalizer(clean_text=False, handle_chinese_chars=False), "Bert plain"),
]


def _regex(m, pattern):
    return (ours.Regex if m is N else hf.Regex)(pattern)


REGEX_PAIRS = [
    (lambda m: m.Replace(_regex(m, r"\s+"), " "), "Replace regex spaces"),
    (lambda m: m.Replace(_regex(m, r"[0-9]"), "#"), "Replace regex digits"),
    (lambda m: m.Replace(_regex(m, r"é|ab"), "XY"), "Replace regex alternation"),
]

ALL = PAIRS + REGEX_PAIRS
IDS = [name for _, name in ALL]

texts = st.one_of(
    textgen.texts,
    st.text(
        alphabet="aAbB éÉe\u0301\u0308İıΣσς ﬁ①ｶÅ\u212b你好\t\n\u0000\ufffd\u200b"
        "\x01\x0b\x0c\r\x1f\x7f\x85\x8f\x9f\u1680\u2028\u2581\ufeff😀",
        max_size=40,
    ),
    # Graphemes of several chars (what Precompiled looks up whole), expansions next to removals.
    st.text(alphabet="™\x1eg \u200d👨👩👧\U0001f3fdᄀ\u1161\u11a8가ǅ\u3000ﷺ㍿e\u0301", max_size=30),
)


@pytest.mark.parametrize("make", [m for m, _ in ALL], ids=IDS)
@settings(max_examples=200)
@given(text=texts)
def test_normalize_str_equals_hf(make, text):
    assert make(N).normalize_str(text) == make(HN).normalize_str(text)


@settings(max_examples=200)
@given(
    picks=st.lists(st.sampled_from(range(len(ALL))), min_size=1, max_size=4),
    text=texts,
)
def test_sequences_equal_hf(picks, text):
    mine = N.Sequence([ALL[k][0](N) for k in picks])
    theirs = HN.Sequence([ALL[k][0](HN) for k in picks])
    assert mine.normalize_str(text) == theirs.normalize_str(text)


def _hf_char_ranges(normalizer, text):
    """HF's original range (char offsets) of each normalized character: a tokenizer that makes
    every normalized char a token, offsets mapped back through HF's alignments."""
    tok = hf.Tokenizer(hf.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = hf.pre_tokenizers.Split(hf.Regex(r"[\s\S]"), "isolated")
    return tok.encode(text).offsets


def _our_char_ranges(normalizer, text):
    normalized, align = normalizer._core_object().normalize_aligned(text)
    byte_to_char = {}
    pos = 0
    for k, c in enumerate(text):
        byte_to_char[pos] = k
        pos += len(c.encode())
    byte_to_char[pos] = len(text)
    out, at = [], 0
    for c in normalized:
        start, end = align[at]
        out.append((byte_to_char[start], byte_to_char[end]))
        at += len(c.encode())
    return out


@pytest.mark.parametrize("make", [m for m, _ in ALL], ids=IDS)
@settings(max_examples=100)
@given(text=texts)
def test_alignments_give_hfs_offsets(make, text):
    assert _our_char_ranges(make(N), text) == _hf_char_ranges(make(HN), text)


@settings(max_examples=100)
@given(picks=st.lists(st.sampled_from(range(len(ALL))), min_size=2, max_size=3), text=texts)
def test_sequence_alignments_give_hfs_offsets(picks, text):
    mine = N.Sequence([ALL[k][0](N) for k in picks])
    theirs = HN.Sequence([ALL[k][0](HN) for k in picks])
    assert _our_char_ranges(mine, text) == _hf_char_ranges(theirs, text)


@pytest.mark.parametrize("make", [m for m, _ in ALL], ids=IDS)
def test_getstate_is_hfs_json(make):
    import json

    assert json.loads(make(N).__getstate__()) == json.loads(make(HN).__getstate__())


@pytest.mark.parametrize("make", [m for m, _ in ALL], ids=IDS)
def test_pickle_and_equality(make):
    n = make(N)
    back = pickle.loads(pickle.dumps(n))
    assert type(back) is type(n) and back == n
    assert back.normalize_str("  Héllo WÖRLD 12 ") == n.normalize_str("  Héllo WÖRLD 12 ")
    assert isinstance(n, N.Normalizer)


def test_fields_can_be_changed_and_sequences_indexed():
    seq = N.Sequence([N.BertNormalizer(lowercase=True), N.Strip(), N.Prepend("_")])
    assert seq.normalize_str("  HÉ  ") == "_he"
    seq[0].lowercase = False
    seq[0].strip_accents = False
    seq[2].prepend = "-"
    assert seq.normalize_str("  HÉ  ") == "-HÉ"
    seq[1] = N.Lowercase()
    assert seq.normalize_str(" HÉ ") == HN.Sequence(
        [HN.BertNormalizer(lowercase=False, strip_accents=False), HN.Lowercase(), HN.Prepend("-")]
    ).normalize_str(" HÉ ")
    with pytest.raises(IndexError):
        seq.__getitem__(3)
    r = N.Replace("a", "b")
    with pytest.raises(AttributeError):
        _ = r.pattern
    with pytest.raises(AttributeError):
        r.pattern = "c"
    r.content = "c"
    assert r.normalize_str("aa") == "cc"


def test_bad_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="str"):
        N.Prepend(3)
    with pytest.raises(TypeError, match="Regex"):
        N.Replace(3, "x")
    with pytest.raises(ValueError, match="invalid regex"):
        N.Replace(ours.Regex("("), "x")
    with pytest.raises(ValueError, match="non-empty"):
        N.Replace("", "x")
    with pytest.raises(TypeError, match="position 1"):
        N.Sequence([N.NFC(), "NFD"])
    with pytest.raises(TypeError, match="str"):
        N.NFC().normalize_str(b"bytes")


@pytest.mark.parametrize("rule", RULES)
def test_precompiled_maps_every_code_point_as_hf(rule):
    blob = charsmap(rule)
    text = "".join(textgen.every_code_point())
    assert N.Precompiled(blob).normalize_str(text) == HN.Precompiled(blob).normalize_str(text)


def test_precompiled_round_trips_through_tokenizer_json():
    import json

    blob = charsmap("nmt_nfkc")
    state = json.loads(N.Precompiled(blob).__getstate__())
    assert state == json.loads(HN.Precompiled(blob).__getstate__())
    tok = ours.Tokenizer(ours.models.WordLevel({"a": 0}, unk_token="a"))
    tok.normalizer = N.Precompiled(blob)
    back = ours.Tokenizer.from_str(tok.to_str())
    assert isinstance(back.normalizer, N.Precompiled)
    assert back.normalizer.normalize_str("ﬁ①ｶ") == HN.Precompiled(blob).normalize_str("ﬁ①ｶ")


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_a_damaged_charsmap_is_refused_or_works_never_crashes(data):
    # Cut short, or bytes of the trie changed: reading checks the whole trie, so each either
    # fails with a ValueError or normalizes without reading outside the blob.
    blob = bytearray(charsmap("nmt_nfkc"))
    if data.draw(st.booleans()):
        blob = blob[: data.draw(st.integers(0, len(blob)))]
    else:
        trie_end = 4 + int.from_bytes(blob[:4], "little")
        for _ in range(data.draw(st.integers(1, 8))):
            at = data.draw(st.integers(0, trie_end + 16))
            blob[at] = data.draw(st.integers(0, 255))
    try:
        n = N.Precompiled(bytes(blob))
    except ValueError as e:
        assert "charsmap" in str(e)
        return
    n.normalize_str("ﬁ①ｶ Å\u212b 你好 e\u0301 \x01™ 😀")


def test_precompiled_refuses_what_is_not_a_charsmap():
    for blob in (b"", b"\x00\x00\x00\x00", b"\xff\xff\xff\xff" + b"x" * 8, b"abcdefgh"):
        with pytest.raises(ValueError, match="charsmap"):
            N.Precompiled(blob)
    with pytest.raises(TypeError, match="bytes"):
        N.Precompiled("not bytes")
    bad = {"type": "Precompiled", "precompiled_charsmap": "!!not base64"}
    tok = json.loads(ours.Tokenizer(ours.models.WordLevel({"a": 0}, unk_token="a")).to_str())
    tok["normalizer"] = bad
    with pytest.raises(ValueError, match="normalizer.precompiled_charsmap"):
        ours.Tokenizer.from_str(json.dumps(tok))
