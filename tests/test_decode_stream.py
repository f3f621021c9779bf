"""``subword.tokenizers.decoders.DecodeStream`` (``rust/pipeline/decode_stream.rs``) against HF's
``DecodeStream`` on tokenizers HF trained: byte-level BPE (a character split over several ids),
Llama-2-shaped BPE with byte fallback (``<0xXX>`` ids joined into characters) and Metaspace
(the first token's space dropped), and BERT's WordPiece. Every step's output, ``None`` included,
must equal HF's for hypothesis text cut into random steps, with context ids given up front,
with and without skipping special tokens, and for copies taken mid-stream."""

from __future__ import annotations

import copy

import pytest
import refdata
import subword.tokenizers as ours
import test_bpe_model
import test_pre_tokenizers
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st

KINDS = ["roberta", "prepend", "metaspace", "bert"]


def _build(kind: str) -> hf.Tokenizer:
    if kind == "roberta":
        return test_bpe_model._byte_level_shaped("roberta")
    if kind == "bert":
        return hf.Tokenizer.from_file(str(refdata.bert_uncased() / "tokenizer.json"))
    return test_bpe_model._llama2_shaped(kind)


@pytest.fixture(scope="module", params=KINDS)
def pair(request):
    theirs = _build(request.param)
    return ours.Tokenizer.from_str(theirs.to_str()), theirs


def _run(tokenizer, steps, stream):
    """Each step's output, or the exception type where the step failed (then it stops)."""
    out = []
    for step in steps:
        try:
            out.append(stream.step(tokenizer, step))
        except Exception:  # noqa: BLE001 (HF raises a bare Exception; only failing is compared)
            out.append("failed")
            break
    return out


def _cut(ids, cuts):
    """`ids` cut at `cuts` into steps: a single id as an int, longer steps as lists."""
    bounds = sorted({c % (len(ids) + 1) for c in cuts} | {0, len(ids)})
    steps = [ids[a:b] for a, b in zip(bounds, bounds[1:])]
    return [s[0] if len(s) == 1 else s for s in steps]


@settings(max_examples=120, deadline=None)
@given(
    text=test_pre_tokenizers.texts,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=40),
    prefill=st.integers(min_value=0, max_value=6),
    skip=st.booleans(),
)
def test_every_step_equals_hf(pair, text, cuts, prefill, skip):
    mine, theirs = pair
    ids = theirs.encode(text).ids
    if not ids:
        return
    prefill = min(prefill, len(ids) - 1)
    context, rest = ids[:prefill], ids[prefill:]
    steps = _cut(rest, cuts) if cuts else rest
    want = _run(theirs, steps, hf.decoders.DecodeStream(context, skip))
    got = _run(mine, steps, ours.decoders.DecodeStream(context, skip))
    assert got == want, (text, steps)


def test_one_id_at_a_time_spells_the_text(pair):
    # Over whole corpus lines: what the steps return adds up to HF's stream, and the stream
    # joined equals decoding everything at once wherever HF's does.
    mine, theirs = pair
    for line in test_bpe_model.CORPUS[:60] + ["안녕 👋🏽 naïve", "  two  spaces "]:
        ids = theirs.encode(line).ids
        a, b = ours.decoders.DecodeStream(), hf.decoders.DecodeStream()
        got = [a.step(mine, i) for i in ids]
        assert got == [b.step(theirs, i) for i in ids], line
        if "".join(x for x in got if x) == theirs.decode(ids, skip_special_tokens=False):
            assert "".join(x for x in got if x) == mine.decode(ids, skip_special_tokens=False)


def test_a_copy_continues_on_its_own(pair):
    mine, theirs = pair
    ids = theirs.encode("naïve café 👋🏽 안녕하세요 the end").ids
    half = len(ids) // 2
    for lib, tok in ((ours, mine), (hf, theirs)):
        s = lib.decoders.DecodeStream()
        first = [s.step(tok, i) for i in ids[:half]]
        c = copy.copy(s)
        d = copy.deepcopy(s)
        rest = [s.step(tok, i) for i in ids[half:]]
        assert [c.step(tok, i) for i in ids[half:]] == rest
        assert [d.step(tok, i) for i in ids[half:]] == rest
        if lib is ours:
            mine_out = first + rest
        else:
            assert mine_out == first + rest


def test_a_character_split_over_ids_comes_out_once_whole():
    # Byte-level: the four bytes of 👋 as four single-byte ids.
    theirs = test_bpe_model._byte_level_shaped("byte_level")
    mine = ours.Tokenizer.from_str(theirs.to_str())
    level = hf.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    ((chars, _),) = level.pre_tokenize_str("👋")
    ids = [mine.token_to_id(c) for c in chars]
    assert len(ids) == 4 and None not in ids
    s = ours.decoders.DecodeStream()
    assert [s.step(mine, i) for i in ids] == [None, None, None, "👋"]
    assert s.step(mine, ids[0]) is None  # a new character begun, not yet whole
    assert s.step(mine, ids[1:]) == "👋"


def test_bad_ids_are_type_errors():
    mine = ours.Tokenizer.from_str(test_bpe_model._llama2_shaped("metaspace").to_str())
    s = ours.decoders.DecodeStream()
    for bad in ("a", 1.5, [1, "x"], None, True):
        with pytest.raises(TypeError, match="id"):
            s.step(mine, bad)
    with pytest.raises(TypeError, match="Tokenizer"):
        s.step("not a tokenizer", 1)
    with pytest.raises(TypeError):
        ours.decoders.DecodeStream(["x"])
