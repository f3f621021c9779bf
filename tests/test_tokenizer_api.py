"""``subword.Tokenizer``, the HF-``tokenizers``-style API, checked against HF ``tokenizers``.

HF is the oracle: the same snippet runs with either library, subword's saved ``tokenizer.json``
loads in HF with identical ids / tokens / offsets, and HF-trained files load into subword the same
way. Ids are never compared across two separately trained tokenizers (subword puts specials last,
HF first).
"""

from __future__ import annotations

import json
import pickle

import pytest
import refdata
import subword
import textgen
import tokenizers
from hypothesis import given, settings

EOT = "<|endoftext|>"
VOCAB_SIZE = 700

FIXED = [
    "",
    " ",
    "Hello world! It's 2024: tokens, tokens   everywhere.\n\n  indented\tline\r\nend",
    "인공지능은 데이터로부터 학습한다. Machine learning!",
    "emoji 🤖🇰🇷👩‍👩‍👧 accents café naïve, CJK 中文字符, Привет мир",
    f"{EOT}starts with a special",
    f"ends with a special{EOT}",
    f"in {EOT} the middle{EOT}{EOT}twice",
    f" {EOT} spaces around {EOT} ",
    f"{EOT}",
    f"<|endoftext|{EOT}|> near misses <|endof",
    "   leading and trailing spaces   ",
    "line one\r\nline two\r\n\r\n",
    "\u00a0nbsp\u3000ideographic\u200bzero width\u2028line sep\u0085next",
    "👍🏽 😀😀 🦀 \U0001fae0",
    "한국어 텍스트 입니다",
    "x",
    "\n",
]

BASE_DOCS = [
    "Hello world! It's a tokenizer test, with tokens and more tokens.",
    "The quick brown fox jumps over the lazy dog. 1234567890",
    "인공지능은 데이터로부터 학습한다. 한국어 문장입니다.",
    "def f(x):\n    return x + 1\r\n",
    f"Some text{EOT}more text {EOT} and the end.",
]


def _synthetic_docs(n: int = 400, seed: int = 0) -> list[str]:
    """Seeded text with a Zipf-like word distribution (Latin and Hangul words), so that training
    reaches VOCAB_SIZE even where ../shared/corpora is absent."""
    import random

    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rng.choice(letters) for _ in range(rng.randint(1, 9))) for _ in range(3000)]
    words += ["".join(chr(0xAC00 + rng.randrange(11172)) for _ in range(2)) for _ in range(300)]
    weights = [1 / (k + 1) for k in range(len(words))]
    return [" ".join(rng.choices(words, weights, k=120)) + "." for _ in range(n)]


def _corpus() -> list[str]:
    """A few hundred KB: the shared corpora's first lines (if present), fixed documents and
    seeded synthetic text."""
    docs = [d for d in BASE_DOCS for _ in range(20)] + _synthetic_docs()
    for path in refdata.corpora_files():
        with open(path, encoding="utf-8") as f:
            docs.append(f.read(60_000))
    return docs


CORPUS = _corpus()


def run_snippet(lib, corpus, path, add_prefix_space=False, sample="Hello world! 안녕 🤖"):
    """The HF quick-start snippet: ``lib`` is ``subword`` or ``tokenizers``, all else the same."""
    tok = lib.Tokenizer(lib.models.BPE())
    tok.pre_tokenizer = lib.pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tok.decoder = lib.decoders.ByteLevel()
    trainer = lib.trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE, special_tokens=[EOT], show_progress=False
    )
    tok.train_from_iterator(corpus, trainer)
    out = tok.encode(sample)
    text = tok.decode(out.ids)
    tok.save(str(path))
    return tok, out, text


def _triple(e):
    return e.ids, e.tokens, [tuple(o) for o in e.offsets]


def assert_same(sw, hf, text):
    got, want = _triple(sw.encode(text)), _triple(hf.encode(text))
    assert got[0] == want[0], f"ids differ for {text!r}"
    assert got[1] == want[1], f"tokens differ for {text!r}"
    assert got[2] == want[2], f"offsets differ for {text!r}"


@pytest.fixture(scope="module", params=[False, True], ids=["no_prefix", "prefix_space"])
def snippet(request, tmp_path_factory):
    """(subword tokenizer, HF loading subword's saved file, add_prefix_space)."""
    d = tmp_path_factory.mktemp(f"snippet_{request.param}")
    sw, out, text = run_snippet(subword, CORPUS, d / "sw.json", request.param)
    hf_own, hf_out, hf_text = run_snippet(tokenizers, CORPUS, d / "hf.json", request.param)
    hf = tokenizers.Tokenizer.from_file(str(d / "sw.json"))
    return {
        "sw": sw,
        "out": out,
        "text": text,
        "hf": hf,
        "hf_own": hf_own,
        "hf_text": hf_text,
        "prefix": request.param,
        "path": d / "sw.json",
    }


# ----- 1 & 2: the snippet, and subword's saved file in HF -----


def test_snippet_runs_and_is_self_consistent(snippet):
    sw, out = snippet["sw"], snippet["out"]
    sample = "Hello world! 안녕 🤖"
    assert isinstance(out, subword.Encoded)
    assert len(out.ids) == len(out.tokens) == len(out.offsets)
    assert out.attention_mask == [1] * len(out.ids)
    assert out.type_ids == [0] * len(out.ids)
    assert [sw.token_to_id(t) for t in out.tokens] == out.ids
    assert [sw.id_to_token(i) for i in out.ids] == out.tokens
    want = " " + sample if snippet["prefix"] else sample
    assert snippet["text"] == want
    # vocab: 256 bytes + learned + 1 special, exactly vocab_size
    assert sw.get_vocab_size() == VOCAB_SIZE
    assert sw.token_to_id(EOT) == VOCAB_SIZE - 1
    assert sorted(sw.get_vocab().values()) == list(range(VOCAB_SIZE))
    # the HF run of the same snippet worked too (its 🤖 bytes were never seen in training, so
    # HF drops them: the trap subword avoids)
    assert snippet["hf_text"].strip().startswith("Hello world! 안녕")
    assert snippet["hf_own"].token_to_id(EOT) is not None
    # reloading in subword gives the same encoding
    back = subword.Tokenizer.from_file(str(snippet["path"]))
    for text in FIXED:
        assert _triple(back.encode(text)) == _triple(sw.encode(text)), text
    back2 = subword.Tokenizer.from_str(sw.to_str())
    assert back2.get_vocab() == sw.get_vocab()


def _with_prefix(text):
    """What add_prefix_space=True decodes to: a space before each stretch between specials."""
    parts = text.split(EOT)
    return EOT.join(" " + p if p and not p.startswith(" ") else p for p in parts)


def test_saved_file_in_hf_fixed(snippet):
    sw, hf = snippet["sw"], snippet["hf"]
    for text in FIXED:
        assert_same(sw, hf, text)
        want = _with_prefix(text) if snippet["prefix"] else text
        assert sw.decode(sw.encode(text).ids) == want, text


def test_saved_file_in_hf_vocab(snippet):
    sw, hf = snippet["sw"], snippet["hf"]
    assert sw.get_vocab() == hf.get_vocab()
    assert sw.get_vocab_size() == hf.get_vocab_size()


def test_vocab_without_added_tokens_matches_hf(snippet):
    # HF's with_added_tokens=False returns the model's vocab, which (for a trained BPE, HF's own
    # or subword's saved file) still holds the special tokens.
    sw, hf = snippet["sw"], snippet["hf"]
    assert EOT in snippet["hf_own"].get_vocab(with_added_tokens=False)
    assert sw.get_vocab(with_added_tokens=False) == hf.get_vocab(with_added_tokens=False)
    assert sw.get_vocab_size(with_added_tokens=False) == hf.get_vocab_size(with_added_tokens=False)


def test_prefix_space_offsets_align_with_first_char(snippet):
    sw = snippet["sw"]
    for text in ["Hello", "the", "한국어", "🤖 x", "\nline"]:
        e = sw.encode(text)
        # With add_prefix_space the first token carries the added space; without, it never does.
        assert e.tokens[0].startswith("Ġ") == snippet["prefix"], text
        assert e.offsets[0][0] == 0, text
        if snippet["prefix"] and e.tokens[0] == "Ġ":  # the added space alone
            assert e.offsets[0] == e.offsets[1] == (0, 1), text
        assert_same(sw, snippet["hf"], text)
    assert_same(sw, snippet["hf"], f"a{EOT}b")
    if snippet["prefix"]:
        e = sw.encode(f"a{EOT}b")
        n = len("a" + EOT)
        assert e.tokens == ["Ġa", EOT, "Ġb"]
        assert e.offsets == [(0, 1), (1, n), (n, n + 1)]


@settings(max_examples=150)
@given(text=textgen.texts)
def test_saved_file_in_hf_hypothesis(snippet, text):
    assert_same(snippet["sw"], snippet["hf"], text)


@settings(max_examples=100)
@given(text=textgen.with_specials([EOT]))
def test_saved_file_in_hf_hypothesis_specials(snippet, text):
    assert_same(snippet["sw"], snippet["hf"], text)


def test_saved_file_in_hf_corpora(snippet):
    sw, hf = snippet["sw"], snippet["hf"]
    lines = []
    for path in refdata.corpora_files():
        with open(path, encoding="utf-8") as f:
            lines += f.read(200_000).split("\n")[:300]
    got = [_triple(e) for e in sw.encode_batch(lines)]
    want = [_triple(e) for e in hf.encode_batch(lines)]
    bad = [line for line, g, w in zip(lines, got, want) if g != w]
    assert not bad, f"{len(bad)} lines differ, first {bad[0]!r}"


# ----- 3: HF-trained files load into subword -----


@pytest.fixture(scope="module", params=[False, True], ids=["no_prefix", "prefix_space"])
def hf_trained(request):
    from tokenizers import decoders, models, pre_tokenizers, trainers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=request.param)
    hf.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=[EOT],
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    hf.train_from_iterator(CORPUS, trainer)
    return hf, subword.Tokenizer.from_str(hf.to_str())


def test_hf_trained_loads_fixed(hf_trained):
    hf, sw = hf_trained
    for text in FIXED:
        assert_same(sw, hf, text)


@settings(max_examples=150)
@given(text=textgen.texts)
def test_hf_trained_loads_hypothesis(hf_trained, text):
    hf, sw = hf_trained
    assert_same(sw, hf, text)


@settings(max_examples=40)
@given(text=textgen.with_specials([EOT]))
def test_hf_trained_loads_hypothesis_specials(hf_trained, text):
    hf, sw = hf_trained
    assert_same(sw, hf, text)


def test_hf_trained_vocab_agrees(hf_trained):
    hf, sw = hf_trained
    assert sw.get_vocab() == hf.get_vocab()
    assert sw.get_vocab_size() == hf.get_vocab_size()
    for token, i in hf.get_vocab().items():
        assert sw.token_to_id(token) == i
        assert sw.id_to_token(i) == token
    assert sw.token_to_id("not a token at all") is None
    assert hf.token_to_id("not a token at all") is None
    assert sw.token_to_id(EOT) == hf.token_to_id(EOT) == 0  # HF puts specials first


# ----- 4: traps fixed -----


def test_unseen_bytes_survive_training_on_ascii():
    from tokenizers import decoders, models, pre_tokenizers, trainers

    ascii_docs = [d for d in BASE_DOCS if d.isascii()] * 10
    s = "Korean 한국어 and emoji 🤖👍🏽 café"

    sw = subword.Tokenizer(subword.models.BPE())
    sw.pre_tokenizer = subword.pre_tokenizers.ByteLevel(add_prefix_space=False)
    sw.decoder = subword.decoders.ByteLevel()
    sw.train_from_iterator(ascii_docs, subword.trainers.BpeTrainer(300, show_progress=False))
    assert sw.get_vocab_size() >= 256
    assert sw.decode(sw.encode(s).ids) == s

    hf = tokenizers.Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(ascii_docs, trainers.BpeTrainer(vocab_size=300, show_progress=False))
    assert hf.decode(hf.encode(s).ids) != s  # why subword keeps all 256 bytes


def test_decode_keeps_specials_by_default(snippet):
    sw = snippet["sw"]
    text = f" a{EOT} b"
    ids = sw.encode(text).ids
    assert sw.token_to_id(EOT) in ids
    assert sw.decode(ids) == text
    assert sw.decode(ids, skip_special_tokens=True) == text.replace(EOT, "")
    assert sw.decode_batch([ids, ids], skip_special_tokens=True) == [text.replace(EOT, "")] * 2


def test_no_learned_token_contains_the_special():
    docs = [f"{EOT}hello{EOT} world{EOT}{EOT} <{EOT}>" * 50] * 20
    sw = subword.Tokenizer(subword.models.BPE())
    sw.pre_tokenizer = subword.pre_tokenizers.ByteLevel(add_prefix_space=False)
    sw.train_from_iterator(
        docs, subword.trainers.BpeTrainer(400, special_tokens=[EOT], show_progress=False)
    )
    vocab = sw.get_vocab()
    assert vocab[EOT] == max(vocab.values())
    assert [t for t in vocab if EOT in t and t != EOT] == []
    assert [t for t in vocab if "endoftext" in t] == [EOT]
    assert sw.encode("hello world").ids != []


# ----- 5 & 6: pairs and batches -----


def test_encode_pair(snippet):
    sw = snippet["sw"]
    for a, b in [("Hello", "world"), (f"x{EOT}", " 한국어 🤖"), ("", "b"), ("a", "")]:
        ea, eb, ep = sw.encode(a), sw.encode(b), sw.encode(a, pair=b)
        assert ep.ids == ea.ids + eb.ids
        assert ep.tokens == ea.tokens + eb.tokens
        assert ep.offsets == ea.offsets + eb.offsets
        assert ep.type_ids == [0] * len(ea.ids) + [1] * len(eb.ids)
        assert ep.attention_mask == [1] * len(ep.ids)
        assert sw.encode(a, b).ids == ep.ids


def test_results_are_hfs_on_the_saved_file(snippet):
    # The whole result, as HF gives it on the file subword saved: words, sequences, type ids,
    # masks, pairs and batches.
    def view(e):
        return (e.ids, e.tokens, e.offsets, e.word_ids, e.sequence_ids, e.type_ids,
                e.attention_mask, e.special_tokens_mask, len(e.overflowing))  # fmt: skip

    sw, hf = snippet["sw"], snippet["hf"]
    for a, b in zip(FIXED, FIXED[1:] + [None]):
        assert isinstance(sw.encode(a), subword.Encoded)
        assert view(sw.encode(a)) == view(hf.encode(a)), a
        if b is not None:
            assert view(sw.encode(a, b)) == view(hf.encode(a, b)), (a, b)
    assert [view(e) for e in sw.encode_batch(FIXED)] == [view(e) for e in hf.encode_batch(FIXED)]
    pairs = list(zip(FIXED, FIXED[::-1]))
    assert [view(e) for e in sw.encode_batch(pairs)] == [view(e) for e in hf.encode_batch(pairs)]
    words = [text.split(" ") for text in FIXED]
    for w in words:
        assert view(sw.encode(w, is_pretokenized=True)) == view(hf.encode(w, is_pretokenized=True))
    got = sw.encode_batch(words, is_pretokenized=True)
    assert [view(e) for e in got] == [view(e) for e in hf.encode_batch(words, is_pretokenized=True)]


def test_lone_surrogates_become_the_replacement_char(snippet):
    # As subword.Encoding (after tiktoken) does, where HF refuses the text; in a batch given as
    # a generator too, which the retry has to read again.
    sw = snippet["sw"]
    clean = ["a\ufffdb", "ok", "\ufffd"]
    want = [sw.encode(t).ids for t in clean]
    assert [sw.encode(t).ids for t in ["a\ud800b", "ok", "\udfff"]] == want
    assert sw.encode("x", "\ud800").ids == sw.encode("x", "\ufffd").ids
    got = sw.encode_batch(t for t in ["a\ud800b", "ok", "\udfff"])
    assert [e.ids for e in got] == want


def test_encode_batch_equals_encode(snippet):
    sw = snippet["sw"]
    batch = sw.encode_batch(FIXED)
    assert len(batch) == len(FIXED)
    for text, e in zip(FIXED, batch):
        assert _triple(e) == _triple(sw.encode(text)), text
    assert sw.encode_batch([]) == []


@settings(max_examples=30)
@given(texts=textgen.st.lists(textgen.texts, max_size=6))
def test_encode_batch_equals_encode_hypothesis(snippet, texts):
    sw = snippet["sw"]
    assert [_triple(e) for e in sw.encode_batch(texts)] == [_triple(sw.encode(t)) for t in texts]


# ----- 7: add_special_tokens -----


def test_add_special_tokens(snippet, tmp_path):
    sw = subword.Tokenizer.from_str(snippet["sw"].to_str())
    before = max(sw.get_vocab().values())
    assert sw.add_special_tokens(["<|new|>"]) == 1
    new_id = sw.token_to_id("<|new|>")
    assert new_id == before + 1
    assert sw.id_to_token(new_id) == "<|new|>"
    assert sw.get_vocab_size() == before + 2
    text = f"hello<|new|>world {EOT}<|new|>"
    e = sw.encode(text)
    assert e.ids.count(new_id) == 2
    assert "<|new|>" in e.tokens
    assert sw.decode(e.ids, skip_special_tokens=True) == sw.decode(
        [i for i in e.ids if i not in (new_id, sw.token_to_id(EOT))]
    )
    path = tmp_path / "added.json"
    sw.save(str(path))
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert hf.token_to_id("<|new|>") == new_id
    for t in [*FIXED, text, "<|new|>", "a<|new|>b<|new"]:
        assert_same(sw, hf, t)
    assert sw.add_special_tokens(["<|new|>"]) == 0
    assert sw.add_special_tokens([EOT]) == 0
    assert sw.token_to_id("<|new|>") == new_id
    # the original tokenizer is untouched
    assert snippet["sw"].token_to_id("<|new|>") is None


# ----- 8: the tiktoken dialect -----


def test_to_encoding_same_ids(snippet):
    sw = snippet["sw"]
    enc = sw.to_encoding()
    assert isinstance(enc, subword.Encoding)
    if snippet["prefix"]:
        # Encoding.encode adds no prefix space; with one in the text it agrees.
        for text in FIXED:
            if text.startswith(" "):
                assert enc.encode(text, allowed_special="all") == sw.encode(text).ids, text
        return
    for text in FIXED:
        assert enc.encode(text, allowed_special="all") == sw.encode(text).ids, text


@settings(max_examples=40)
@given(text=textgen.texts)
def test_to_encoding_same_ids_hypothesis(snippet, text):
    if snippet["prefix"]:
        return
    sw = snippet["sw"]
    assert sw.to_encoding().encode(text, allowed_special="all") == sw.encode(text).ids


@pytest.fixture(scope="module")
def gpt2_tok(r50k_pair):
    return subword.Tokenizer.from_encoding(subword.get_encoding("gpt2"))


def test_from_encoding_matches_tiktoken(gpt2_tok, r50k_pair):
    _, tk = r50k_pair
    for text in FIXED:
        assert gpt2_tok.encode(text).ids == tk.encode(text, allowed_special="all"), text
    assert gpt2_tok.token_to_id(EOT) == 50256
    assert gpt2_tok.get_vocab_size() == 50257


@settings(max_examples=60)
@given(text=textgen.with_specials([EOT]))
def test_from_encoding_matches_tiktoken_hypothesis(gpt2_tok, r50k_pair, text):
    _, tk = r50k_pair
    assert gpt2_tok.encode(text).ids == tk.encode(text, allowed_special="all")


def test_from_encoding_saved_file_in_hf(gpt2_tok):
    hf = tokenizers.Tokenizer.from_str(gpt2_tok.to_str())
    for text in FIXED:
        assert_same(gpt2_tok, hf, text)


# ----- 9: errors -----


def test_errors(snippet):
    with pytest.raises(ValueError):
        subword.Tokenizer(subword.models.BPE()).encode("x")
    sw = snippet["sw"]
    with pytest.raises(TypeError):
        sw.encode(123)
    with pytest.raises(TypeError):
        sw.encode_batch("str")
    with pytest.raises(TypeError):
        sw.encode_batch(["ok", 5])
    with pytest.raises(ValueError):
        sw.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    with pytest.raises(ValueError):
        sw.pre_tokenizer = object()
    # a failed assignment leaves the tokenizer as it was
    assert isinstance(sw.pre_tokenizer, subword.pre_tokenizers.ByteLevel)
    assert sw.pre_tokenizer.add_prefix_space == snippet["prefix"]
    with pytest.raises(ValueError):
        subword.models.BPE(dropout=0.1)
    with pytest.raises(ValueError):
        subword.trainers.BpeTrainer(limit_alphabet=10)


def test_saved_json_is_hf_shaped(snippet):
    doc = json.loads(snippet["path"].read_text(encoding="utf-8"))
    assert doc["model"]["type"] == "BPE"
    assert doc["pre_tokenizer"]["add_prefix_space"] == snippet["prefix"]
    assert [a["content"] for a in doc["added_tokens"]] == [EOT]
    assert doc["added_tokens"][0]["id"] == VOCAB_SIZE - 1


# ----- normalizer, post-processor, truncation and padding of the byte-level BPE Tokenizer -----
# Each is HF's component, run by the pipeline with HF's alignments, so offsets point into the
# text as given; NFC is also the rank encoder's (to_encoding keeps it).


def test_normalizer_nfc_applies_and_round_trips_through_hf(snippet, tmp_path):
    from subword.tokenizers import normalizers as N

    tok = subword.Tokenizer.from_str(snippet["sw"].to_str())
    assert tok.normalizer is None
    tok.normalizer = N.NFC()
    assert type(tok.normalizer).__name__ == "NFC"
    path = tmp_path / "nfc.json"
    tok.save(str(path))
    assert json.loads(path.read_text())["normalizer"] == {"type": "NFC"}
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in ["cafe\u0301 na\u0308ive", "A\u030a\u0323 x", "e\u0301\u0301 <|endoftext|>e\u0301"]:
        assert _triple(tok.encode(text)) == _triple(hf.encode(text)), text
    assert type(subword.Tokenizer.from_file(str(path)).normalizer).__name__ == "NFC"
    tok.normalizer = None
    assert json.loads(tok.to_str())["normalizer"] is None


def _view(e):
    return (e.ids, e.tokens, e.offsets, e.type_ids, e.attention_mask, e.special_tokens_mask,
            e.word_ids, e.sequence_ids, [o.ids for o in e.overflowing])  # fmt: skip


# (name, set the part on a tokenizer, given the library): the same call for subword and HF.
PARTS = {
    "lowercase": lambda lib, t: setattr(t, "normalizer", lib.normalizers.Lowercase()),
    "bert_normalizer": lambda lib, t: setattr(
        t, "normalizer", lib.normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    ),
    "nfkc_replace": lambda lib, t: setattr(
        t,
        "normalizer",
        lib.normalizers.Sequence([lib.normalizers.NFKC(), lib.normalizers.Replace("o", "0")]),
    ),
    "template": lambda lib, t: setattr(
        t,
        "post_processor",
        lib.processors.TemplateProcessing(
            single=f"{EOT} $A {EOT}",
            pair=f"{EOT} $A {EOT} $B:1 {EOT}:1",
            special_tokens=[(EOT, VOCAB_SIZE - 1)],
        ),
    ),
    "byte_level_trim": lambda lib, t: setattr(
        t, "post_processor", lib.processors.ByteLevel(trim_offsets=True)
    ),
    # (no stride: on pairs, a part may keep fewer tokens than any stride, where HF panics)
    "truncation": lambda lib, t: t.enable_truncation(5),
    "truncation_left": lambda lib, t: t.enable_truncation(7, direction="left"),
    "padding": lambda lib, t: t.enable_padding(pad_id=3, pad_token="P", length=12),
    "batch_padding": lambda lib, t: t.enable_padding(pad_id=3, pad_token="P", direction="left"),
}


PART_SETS = [["lowercase"], ["bert_normalizer"], ["nfkc_replace"], ["template"],
             ["byte_level_trim"], ["truncation"], ["truncation_left"], ["padding"],
             ["bert_normalizer", "template", "truncation", "batch_padding"]]  # fmt: skip


@pytest.mark.parametrize("parts", PART_SETS, ids="+".join)
def test_parts_around_the_model_equal_hf(snippet, tmp_path, parts):
    from subword import tokenizers as ours

    sw = subword.Tokenizer.from_str(snippet["sw"].to_str())
    hf = tokenizers.Tokenizer.from_file(str(snippet["path"]))
    for name in parts:
        PARTS[name](ours, sw)
        PARTS[name](tokenizers, hf)
    texts = FIXED + ["HELLO Wörld ÀÉÎ ｆｕｌｌ ① ﬁ  tokens"]
    pairs = list(zip(texts, texts[::-1]))

    def same(mine, theirs):
        for a, b in pairs:
            assert _view(mine.encode(a)) == _view(theirs.encode(a)), a
            assert _view(mine.encode(a, b)) == _view(theirs.encode(a, b)), (a, b)
            bare = [lib.encode(a, add_special_tokens=False) for lib in (mine, theirs)]
            assert _view(mine.post_process(bare[0])) == _view(theirs.post_process(bare[1])), a
        got, want = mine.encode_batch(pairs), theirs.encode_batch(pairs)
        assert [_view(e) for e in got] == [_view(e) for e in want]

    same(sw, hf)
    # Saved, the file is the same tokenizer in HF and back in subword, pickled too.
    path = tmp_path / "parts.json"
    sw.save(str(path))
    same(sw, tokenizers.Tokenizer.from_file(str(path)))
    back = subword.Tokenizer.from_file(str(path))
    same(back, hf)
    assert back == sw and pickle.loads(pickle.dumps(sw)) == sw
    assert sw.padding == hf.padding and sw.truncation == hf.truncation
    assert sw.num_special_tokens_to_add(True) == hf.num_special_tokens_to_add(True)
    # The rank encoder cannot run them: what would give other ids is refused, naming them.
    with pytest.raises(ValueError, match="rank encoder"):
        sw.to_encoding()
    with pytest.raises(ValueError, match="rank encoder|add_prefix_space"):
        list(sw.encode_iterable(["x"]))


def test_parts_set_before_the_model_and_after_it(snippet):
    # Set on a tokenizer with no model yet, they hold after training, and a later change (a new
    # pre-tokenizer, an added token) rebuilds the model without losing them.
    from subword import tokenizers as ours

    tok = subword.Tokenizer(subword.models.BPE())
    tok.normalizer = ours.normalizers.Lowercase()
    tok.enable_truncation(4)
    trainer = subword.trainers.BpeTrainer(vocab_size=300, show_progress=False)
    tok.train_from_iterator(BASE_DOCS, trainer)
    assert tok.encode("HELLO WORLD THE QUICK").tokens == tok.encode("hello world the quick").tokens
    assert len(tok.encode("a b c d e f g").ids) == 4
    tok.pre_tokenizer = subword.pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.add_special_tokens(["<|x|>"])
    e = tok.encode("HELLO <|x|> WORLD THE QUICK")
    assert e.tokens == tok.encode("hello <|x|> world the quick").tokens and len(e.ids) == 4
    assert e.tokens[0].startswith("Ġ")  # the new pre-tokenizer's space
    tok.no_truncation()
    assert "<|x|>" in tok.encode("HELLO <|x|> WORLD THE QUICK").tokens
    tok.normalizer = None
    assert tok.encode("HELLO").tokens != tok.encode("hello").tokens
    tok.pre_tokenizer = subword.pre_tokenizers.ByteLevel(add_prefix_space=False)
    assert (
        tok.to_encoding().encode("HELLO <|x|>", allowed_special="all")
        == tok.encode("HELLO <|x|>").ids
    )


def test_training_sees_normalized_text(tmp_path):
    # As in HF, merges are learned from the normalizer's output: with Lowercase set, training
    # on the documents learns what training on their lowercased forms learns without it.
    from subword import tokenizers as ours

    lowercase = ours.normalizers.Lowercase()
    docs = [d.upper() for d in BASE_DOCS * 3] + _synthetic_docs(40)
    trainer = subword.trainers.BpeTrainer(vocab_size=400, special_tokens=[EOT], show_progress=False)

    def trained(texts, normalizer, files=False):
        tok = subword.Tokenizer(subword.models.BPE())
        tok.normalizer = normalizer
        if files:
            paths = []
            for k, text in enumerate(texts):
                paths.append(tmp_path / f"doc{k}.txt")
                paths[-1].write_text(text, encoding="utf-8")
            tok.train([str(p) for p in paths], trainer)
        else:
            tok.train_from_iterator(texts, trainer)
        return json.loads(tok.to_str())["model"]

    want = trained([lowercase.normalize_str(d) for d in docs], None)
    assert trained(docs, lowercase) == want
    assert trained(docs, lowercase, files=True) == want
    assert trained(docs, None) != want


def test_bad_parts_are_refused_and_leave_the_tokenizer_as_it_was(snippet):
    from subword import tokenizers as ours

    tok = subword.Tokenizer.from_str(snippet["sw"].to_str())
    before = tok.to_str()
    with pytest.raises(TypeError, match="normalizer"):
        tok.normalizer = ours.pre_tokenizers.Whitespace()
    with pytest.raises(TypeError, match="post_processor"):
        tok.post_processor = ours.normalizers.NFC()
    with pytest.raises(ValueError, match="direction"):
        tok.enable_padding(direction="Up")
    with pytest.raises(ValueError, match="strategy"):
        tok.enable_truncation(8, strategy="middle")
    with pytest.raises(ValueError, match="decodes with ByteLevel"):
        tok.decoder = ours.decoders.WordPiece()
    assert tok.to_str() == before and tok.normalizer is None and tok.padding is None


def test_subword_processors_are_taken_as_their_hf_equals(snippet):
    # subword.processors' classes give what HF's own give on HF's tokenizer.
    sw = subword.Tokenizer.from_str(snippet["sw"].to_str())
    hf = tokenizers.Tokenizer.from_file(str(snippet["path"]))
    specials = [(EOT, VOCAB_SIZE - 1)]
    for mine, theirs in [
        (subword.processors.BertProcessing((EOT, 5), (EOT, 7)),
         tokenizers.processors.BertProcessing((EOT, 5), (EOT, 7))),
        (subword.processors.TemplateProcessing(f"{EOT} $A", f"$A {EOT}:1 $B:1", specials),
         tokenizers.processors.TemplateProcessing(f"{EOT} $A", f"$A {EOT}:1 $B:1", specials)),
    ]:  # fmt: skip
        sw.post_processor, hf.post_processor = mine, theirs
        for a, b in [("Hello", "world"), ("", "한국어")]:
            assert _view(sw.encode(a, b)) == _view(hf.encode(a, b))
