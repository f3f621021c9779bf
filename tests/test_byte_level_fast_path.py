"""The pipeline's byte-level fast path (`rust/pipeline/byte_words.rs`) against HF `tokenizers`
and against the pipeline's general path.

A tokenizer whose pre-tokenizer only cuts with a built-in scanner and maps bytes (GPT-2's
ByteLevel, a space put first or not; Llama 3's and Qwen's isolating Split followed by a
ByteLevel without regex), with no normalizer or Qwen's NFC on text already in NFC, is cut and
mapped by the pipeline itself, without per-byte alignments. The same tokenizer with its
normalizer inside a Sequence (the same normalization, for HF too) takes the general path: both
must give HF's ids, tokens, offsets and word ids, with added tokens in the text (and text not in
NFC), and train the same merges.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import refdata
import subword
import subword.tokenizers as ours
import textgen
import tokenizers as hf
from hypothesis import given, settings
from hypothesis import strategies as st

N = refdata.hypothesis_examples(local=150, ci=1500)
DEMO = (Path(__file__).parent.parent / "python/subword/data/demo_corpus.txt").read_text()
LINES = DEMO.splitlines() + ["안녕하세요 세계 Привет мир 👋🏽 naïve café 1234567 don't"] * 3
# Decomposed accents and Hangul jamo: not in NFC, so Qwen's stretches take the general path.
LINES += ["cafe\u0301 nai\u0308ve \u1100\u1161\u11a8 Å"]
ADDED = ["<|eot|>", "naïve", " world"]


def _split_then_bytes(pattern: str):
    return hf.pre_tokenizers.Sequence(
        [
            hf.pre_tokenizers.Split(hf.Regex(pattern), behavior="isolated", invert=False),
            hf.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )


def _splits_then_bytes(patterns) -> hf.pre_tokenizers.Sequence:
    return hf.pre_tokenizers.Sequence(
        [hf.pre_tokenizers.Split(hf.Regex(p), behavior="isolated", invert=False) for p in patterns]
        + [hf.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )


# shape: (normalizer, pre-tokenizer); Qwen's NFC leaves the fast path only for text not in NFC;
# DeepSeek-V3's file has an empty Sequence of normalizers and a chain of three Splits.
SHAPES = {
    "gpt2": (None, lambda: hf.pre_tokenizers.ByteLevel(add_prefix_space=False)),
    "roberta": (None, lambda: hf.pre_tokenizers.ByteLevel(add_prefix_space=True)),
    "llama3": (None, lambda: _split_then_bytes(subword._core.LLAMA3_PATTERN)),
    "qwen2": (hf.normalizers.NFC, lambda: _split_then_bytes(subword._core.QWEN2_PATTERN)),
    "deepseek_v3": (
        lambda: hf.normalizers.Sequence([]),
        lambda: _splits_then_bytes(subword._core.DEEPSEEK_V3_SPLITS),
    ),
}


def _hf_tokenizer(shape: str, only_special: bool = False) -> hf.Tokenizer:
    """HF's tokenizer of `shape`, trained on LINES, with a special token and (unless
    `only_special`) two added tokens matched in normalized text."""
    normalizer, pre_tokenizer = SHAPES[shape]
    tok = hf.Tokenizer(hf.models.BPE())
    tok.pre_tokenizer = pre_tokenizer()
    tok.decoder = hf.decoders.ByteLevel()
    if normalizer is not None:
        tok.normalizer = normalizer()
    trainer = hf.trainers.BpeTrainer(
        vocab_size=600,
        initial_alphabet=hf.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(LINES, trainer)
    tok.add_special_tokens([ADDED[0]])
    if not only_special:
        tok.add_tokens([hf.AddedToken(ADDED[1], single_word=True), ADDED[2]])
    return tok


@pytest.fixture(scope="module", params=sorted(SHAPES))
def trio(request):
    """(HF, subword on the fast path, subword on the general path), from the same file."""
    theirs = _hf_tokenizer(request.param)
    doc = json.loads(theirs.to_str())
    fast = ours.Tokenizer.from_str(json.dumps(doc))
    # The same normalizer (or none) inside a Sequence inside a Sequence: the same results, and
    # a normalizer the pipeline does not take for "unchanged" (an empty Sequence it does), so
    # the general path.
    doc["normalizer"] = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Sequence", "normalizers": [doc["normalizer"]] * bool(doc["normalizer"])}
        ],
    }
    general = ours.Tokenizer.from_str(json.dumps(doc))
    return theirs, fast, general


def _result(tok, text: str):
    e = tok.encode(text)
    return e.ids, e.tokens, e.offsets, e.word_ids, e.special_tokens_mask


texts = st.one_of(
    textgen.texts,
    st.lists(st.one_of(textgen.texts, st.sampled_from(ADDED)), max_size=6).map("".join),
)


@settings(max_examples=N, deadline=None)
@given(text=texts)
def test_fast_path_equals_hf_and_the_general_path(trio, text):
    theirs, fast, general = trio
    want = _result(theirs, text)
    assert _result(fast, text) == want
    assert _result(general, text) == want
    assert fast.decode(want[0]) == theirs.decode(want[0])


def test_fast_path_on_the_demo_corpus(trio):
    theirs, fast, general = trio
    for line in LINES:
        assert _result(fast, line) == _result(theirs, line) == _result(general, line), line
    batch = [e.offsets for e in fast.encode_batch(LINES)]
    assert batch == [e.offsets for e in theirs.encode_batch(LINES)]


def test_training_through_the_fast_path_learns_the_general_paths_merges(trio):
    _, fast, general = trio
    learned = []
    for tok in (fast, general):
        tok = ours.Tokenizer.from_str(tok.to_str())
        trainer = ours.trainers.BpeTrainer(
            vocab_size=400,
            initial_alphabet=ours.pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        tok.train_from_iterator(LINES, trainer)
        learned.append(json.loads(tok.to_str())["model"]["merges"])
    assert learned[0] == learned[1] and len(learned[0]) > 100


def test_a_long_text_not_all_in_nfc_equals_hf():
    # Qwen's shape with its added tokens all special (matched in raw text, as in its real files):
    # a long stretch holding a few decomposed chars is cut at safe points into parts, each
    # taking the byte-level path if it is in NFC and the general one if not. Ids, tokens,
    # offsets and word ids must be HF's on the whole text, decomposed chars next to the cuts
    # included.
    theirs = _hf_tokenizer("qwen2", only_special=True)
    fast = ours.Tokenizer.from_str(theirs.to_str())
    lines = (DEMO.splitlines() * 100)[:1200]
    # Decomposed chars at a line's start (right after a cut), at its end (right before one)
    # and inside, every so many lines; a special token in the middle (the stretches on either
    # side are long enough to be cut).
    for k in range(0, len(lines), 97):
        lines[k] = "e\u0301" + lines[k]
        lines[k + 5] += " a\u0308"
        lines[k + 9] = lines[k + 9][:7] + "\u1100\u1161" + lines[k + 9][7:]
    lines[600] += ADDED[0]
    text = "\n".join(lines)
    assert len(text) > 50_000
    want = theirs.encode(text)
    got = fast.encode(text)
    assert got.ids == want.ids
    assert got.tokens == want.tokens
    assert got.offsets == want.offsets
    assert got.word_ids == want.word_ids
