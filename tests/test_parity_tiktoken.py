"""subword must give exactly tiktoken's ids, bytes and errors for the built-in encodings.

The oracle for each encoding is tiktoken's encoding of the same ranks (refdata.ORACLE; gpt2 is
checked against r50k_base, which has the same ranks, pattern and special token). Rank files come
from refdata.py; nothing here touches the network.
"""

from __future__ import annotations

import io
import pickle

import numpy as np
import pytest
import refdata
import subword
import textgen
from hypothesis import given, settings
from hypothesis import strategies as st

N = refdata.hypothesis_examples()
N_SMALL = max(50, N // 10)  # for the slower or less central properties


# --------------------------------------------------------------------------------------------
# helpers


def describe_diff(got: list[int], want: list[int], enc) -> str:
    """Where two id lists first differ, with the token bytes around it."""
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    lo = max(0, i - 3)

    def show(ids):
        return [(t, enc.decode_single_token_bytes(t)) for t in ids[lo : i + 4]]

    return (
        f"lengths subword={len(got)} tiktoken={len(want)}; first difference at index {i}\n"
        f"  subword : {show(got)}\n  tiktoken: {show(want)}"
    )


def assert_ids(got, want, tk) -> None:
    got = list(got)
    assert got == want, describe_diff(got, want, tk)


def outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except (ValueError, KeyError, TypeError, OverflowError) as e:
        return ("raise", e)


def assert_same_outcome(sw_fn, tk_fn, *args, **kwargs):
    """Same result, or an exception of (a subclass of) tiktoken's type with the same message."""
    got = outcome(sw_fn, *args, **kwargs)
    want = outcome(tk_fn, *args, **kwargs)
    if want[0] == "ok":
        assert got[0] == "ok", f"subword raised {got[1]!r}, tiktoken returned {want[1]!r}"
        assert got[1] == want[1]
    else:
        assert got[0] == "raise", f"subword returned {got[1]!r}, tiktoken raised {want[1]!r}"
        assert isinstance(got[1], type(want[1])), (
            f"subword raised {got[1]!r}, tiktoken raised {want[1]!r}"
        )
        assert str(got[1]) == str(want[1])
    return want


_VALID_IDS: dict[str, tuple[int, ...]] = {}


def valid_ids(tk) -> tuple[int, ...]:
    """Every id tiktoken can decode, cached per encoding (o200k has holes below its specials)."""
    if tk.name not in _VALID_IDS:
        used = set(tk._mergeable_ranks.values()) | set(tk._special_tokens.values())
        _VALID_IDS[tk.name] = tuple(sorted(used))
    return _VALID_IDS[tk.name]


# The long property runs skip gpt2: it has r50k's ranks, pattern and special token, so it only gets
# a shorter run of its own (test_gpt2_is_r50k).
HYPOTHESIS_ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(scope="module", params=HYPOTHESIS_ENCODINGS)
def hpair(request, encodings):
    return encodings(request.param)


# --------------------------------------------------------------------------------------------
# properties of the encoding objects


def test_list_encoding_names():
    names = subword.list_encoding_names()
    for name in ("gpt2", "r50k_base", "cl100k_base", "o200k_base"):
        assert name in names


def test_metadata(pair, request):
    sw, tk = pair
    name = request.node.callspec.params["pair"]
    assert sw.name == name
    assert sw.n_vocab == tk.n_vocab
    assert sw.max_token_value == tk.max_token_value
    assert sw.eot_token == tk.eot_token
    assert sw.special_tokens_set == tk.special_tokens_set
    assert sorted(sw.token_byte_values()) == sorted(tk.token_byte_values())
    for special in tk.special_tokens_set:
        tid = tk.encode_single_token(special)
        assert sw.is_special_token(tid)
        assert sw.encode_single_token(special) == tid
        assert sw.decode_single_token_bytes(tid) == special.encode()
    for tid in (0, 255, 1000, tk.max_token_value - len(tk.special_tokens_set) - 1):
        assert sw.is_special_token(tid) == tk.is_special_token(tid)


def test_every_single_token(pair):
    """decode_single_token_bytes / encode_single_token agree with tiktoken on every id."""
    sw, tk = pair
    for tid in valid_ids(tk):
        b = tk.decode_single_token_bytes(tid)
        assert sw.decode_single_token_bytes(tid) == b, tid
        assert sw.encode_single_token(b) == tid, (tid, b)
    for text in ("hello", " world", "\n", "!"):
        assert sw.encode_single_token(text) == tk.encode_single_token(text)


def test_pickle_round_trip(pair):
    sw, tk = pair
    clone = pickle.loads(pickle.dumps(sw))
    assert clone.name == sw.name
    assert clone.n_vocab == sw.n_vocab
    text = "Pickled 123 tokens, 'll  work?\n\n 한국어 😀 <|endoftext|>"
    assert clone.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")


# --------------------------------------------------------------------------------------------
# fixed texts


FIXED = [
    "",
    "hello world",
    "Hello, World!",
    " ",
    "   ",
    "\n",
    "\n\n\n",
    " \n",
    "\n ",
    "a  b",
    "a   \n  b",
    "trailing   ",
    "\t\ttab",
    "\r\n\r\n",
    "don't I'll we've THEY'RE it's 'S 'sss",
    "12345678901234567890",
    "1,234,567.89",
    "x1234y",
    "$100 and 50%",
    "你好，世界",
    "안녕하세요 세계",
    "\u1100\u1161\u11a8",  # conjoining jamo
    "e\u0301 cafe\u0301",
    "👨‍👩‍👧‍👦 🇺🇸 👍🏽",
    "Привет, мир! ПРИВЕТ",
    "CamelCaseWord iPhone HTTPServer",
    "\u00a0\u00a0x\u3000y\u200bz\u2028w\u0085v",
    "<|endoftext|>",
    "<|endoftext",
    "a<|endoftext|>b<|endoftext|>",
    "def f(x):\n    return x  # comment\n",
    "ǅungla ǈ ǋ",
    "\x00\x01\x7f",
    "ﬁ ß ẞ",
]


@pytest.mark.parametrize("text", FIXED, ids=[repr(t)[:30] for t in FIXED])
def test_fixed_texts(pair, text):
    sw, tk = pair
    want = tk.encode_ordinary(text)
    assert_ids(sw.encode_ordinary(text), want, tk)
    assert_ids(sw.encode(text, disallowed_special=()), want, tk)
    assert_ids(sw.encode(text, allowed_special="all"), tk.encode(text, allowed_special="all"), tk)
    assert_same_outcome(sw.encode, tk.encode, text)
    assert sw.decode_bytes(want) == text.encode("utf-8")
    assert sw.decode(want) == text
    assert sw.count(text, disallowed_special=()) == len(want)
    if "<|endoftext|>" not in text:
        assert sw.tokens(text) == [tk.decode_single_token_bytes(t) for t in want]


LONE_SURROGATES = [
    "\ud800",
    "a\udfffb",
    "\ud83d\ude00",
    "x\ud800\ud800y",
    "\udc00\ud800",
    " \ud800 ",
    "1\udfff2",
]


@pytest.mark.parametrize("text", LONE_SURROGATES, ids=[ascii(t) for t in LONE_SURROGATES])
def test_surrogates(pair, text):
    sw, tk = pair
    want = tk.encode(text)
    assert_ids(sw.encode(text), want, tk)
    assert_ids(sw.encode_ordinary(text), tk.encode_ordinary(text), tk)
    assert_ids(sw.encode(text, allowed_special="all"), tk.encode(text, allowed_special="all"), tk)
    assert sw.encode_batch([text, "ok"]) == tk.encode_batch([text, "ok"])
    assert sw.count(text) == len(want)


# --------------------------------------------------------------------------------------------
# long runs


RUNS = ["a", " ", "!", "\n", "0123456789", "中", "ab", "=", "가", "🙂", "abc"]


def _run(unit: str, nbytes: int) -> str:
    return unit * (nbytes // len(unit.encode()))


@pytest.mark.parametrize("unit", RUNS, ids=[repr(u) for u in RUNS])
def test_long_run_100kb(pair, unit):
    sw, tk = pair
    text = _run(unit, 100_000)
    assert_ids(sw.encode_ordinary(text), tk.encode_ordinary(text), tk)


@pytest.mark.parametrize("unit", RUNS, ids=[repr(u) for u in RUNS])
def test_long_run_1mb(pair, unit):
    sw, tk = pair
    text = _run(unit, 1_000_000)
    ids = sw.encode_ordinary(text)
    assert sw.decode_bytes(ids) == text.encode()
    assert sw.count(text) == len(ids)
    try:
        want = tk.encode_ordinary(text)
    except BaseException as e:  # tiktoken's regex overflows its stack on some of these (panic)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return
    assert_ids(ids, want, tk)


# Pieces of 512 bytes or more are merged by backtracking (rust/encode/backtrack.rs), which
# hands a piece back to the heap merge when its search runs over budget; BPE is not prefix-stable
# ("=" * 80 is one cl100k token, longer runs are 64s), so every length around the token sizes.
RUN_UNITS = ["=", "a", " ", "\n", "!", "가", "🙂", "ab", "abc", "-=", "\t "]


@pytest.mark.parametrize("unit", RUN_UNITS, ids=[repr(u) for u in RUN_UNITS])
def test_runs_of_every_length_past_the_flat_merge(pair, unit):
    sw, tk = pair
    texts = [_run(unit, n) for n in range(500, 820)] + [_run(unit, n) for n in (1023, 4097, 10_001)]
    got = [sw.encode_ordinary(t) for t in texts]
    want = [tk.encode_ordinary(t) for t in texts]
    for text, g, w in zip(texts, got, want):
        assert g == w, (len(text.encode()), unit)


LONG_PIECE_ALPHABETS = {
    "letters": "aAbzé가나中",
    "symbols": "=-*#/~",
    "mixed": "aab=🙂가",
}


@settings(max_examples=N_SMALL)
@given(
    text=st.sampled_from(sorted(LONG_PIECE_ALPHABETS)).flatmap(
        lambda k: st.text(alphabet=LONG_PIECE_ALPHABETS[k], min_size=400, max_size=1500)
    )
)
def test_long_pieces_parity(hpair, text):
    sw, tk = hpair
    assert_ids(sw.encode_ordinary(text), tk.encode_ordinary(text), tk)


# --------------------------------------------------------------------------------------------
# generated texts


@settings(max_examples=N)
@given(text=textgen.texts)
def test_ordinary_parity(hpair, text):
    sw, tk = hpair
    want = tk.encode_ordinary(text)
    ids = sw.encode_ordinary(text)
    assert_ids(ids, want, tk)
    assert_ids(sw.encode(text, disallowed_special=()), want, tk)
    assert sw.decode_bytes(ids) == text.encode("utf-8")
    assert sw.decode(ids) == text
    assert sw.count(text, disallowed_special=()) == len(want)
    assert_same_outcome(sw.encode, tk.encode, text)


SPECIAL_VARIANT = st.integers(0, 5)


@settings(max_examples=N)
@given(data=st.data())
def test_special_parity(hpair, data):
    sw, tk = hpair
    specials = sorted(tk.special_tokens_set)
    text, allowed = data.draw(textgen.special_case(specials), label="text, allowed")
    want = tk.encode(text, allowed_special="all")
    assert_ids(sw.encode(text, allowed_special="all"), want, tk)
    assert sw.count(text, allowed_special="all") == len(want)
    assert sw.decode_bytes(want) == text.encode("utf-8")

    variants = [
        {"allowed_special": set(allowed), "disallowed_special": ()},
        {"allowed_special": set(allowed)},  # the rest is disallowed: may raise
        {"allowed_special": allowed, "disallowed_special": set(specials) - allowed},
        {"allowed_special": set(allowed), "disallowed_special": list(specials)},
        {"disallowed_special": ()},
        {},
    ]
    kwargs = variants[data.draw(SPECIAL_VARIANT, label="variant")]
    w = assert_same_outcome(sw.encode, tk.encode, text, **kwargs)
    if w[0] == "ok":
        assert sw.count(text, **kwargs) == len(w[1])
    else:
        with pytest.raises(ValueError):
            sw.count(text, **kwargs)


@settings(max_examples=N_SMALL)
@given(text=textgen.texts, specials=st.booleans())
def test_gpt2_is_r50k(encodings, text, specials):
    sw, tk = encodings("gpt2")
    if specials:
        text += "<|endoftext|>" + text
    assert_ids(sw.encode(text, allowed_special="all"), tk.encode(text, allowed_special="all"), tk)
    assert_ids(sw.encode_ordinary(text), tk.encode_ordinary(text), tk)


@settings(max_examples=N_SMALL)
@given(texts=st.lists(textgen.texts, max_size=8), threads=st.sampled_from([1, 2, 8]))
def test_batch_parity(hpair, texts, threads):
    sw, tk = hpair
    want = tk.encode_ordinary_batch(texts)
    assert sw.encode_ordinary_batch(texts, num_threads=threads) == want
    assert sw.encode_batch(texts, num_threads=threads, allowed_special="all") == tk.encode_batch(
        texts, allowed_special="all"
    )
    assert_same_outcome(sw.encode_batch, tk.encode_batch, texts)
    w = outcome(tk.encode_batch, texts)
    if w[0] == "ok":
        assert sw.count_batch(texts) == [len(ids) for ids in w[1]]
    else:
        with pytest.raises(ValueError):
            sw.count_batch(texts)
    assert sw.decode_batch(want) == tk.decode_batch(want) == texts
    assert sw.decode_bytes_batch(want) == tk.decode_bytes_batch(want)
    for text in texts[:2]:
        got = sw.encode_to_numpy(text, disallowed_special=())
        ref = tk.encode_to_numpy(text, disallowed_special=())
        assert isinstance(got, np.ndarray)
        assert got.dtype == ref.dtype
        assert np.array_equal(got, ref)


def test_encode_to_numpy_owns_its_ids_read_only(pair):
    """The array wraps the encoder's result without a copy: it must keep that memory alive on
    its own, refuse writes as tiktoken's does, and describe itself as native uint32."""
    sw, tk = pair
    text = "Numpy ids, 한국어 too. " * 500
    got = sw.encode_to_numpy(text)
    ref = tk.encode_to_numpy(text)
    assert got.dtype == ref.dtype == np.uint32
    assert got.flags.writeable == ref.flags.writeable is False
    with pytest.raises(ValueError):
        got[0] = 1
    owner = got.base.obj  # numpy holds a memoryview of the encoder's buffer object
    view = memoryview(owner)
    assert (view.format, view.ndim, view.shape, view.itemsize) == ("I", 1, (len(ref),), 4)
    # A writable view is refused (readinto asks for one, and reports the refusal as TypeError).
    with pytest.raises(TypeError, match="read-write"):
        io.BytesIO(b"abcd").readinto(owner)
    # Only the array holds the ids now; churn the heap, then read them.
    view.release()
    del ref, owner
    junk = [sw.encode_to_numpy(text[: k * 7]) for k in range(200)]
    del junk
    assert got.tolist() == tk.encode(text)
    assert sw.encode_to_numpy("").shape == (0,)


def test_numpy_results_large_enough_to_recycle_stay_exact(pair):
    """Results of a megabyte and more reuse the memory of freed ones (encode/recycled.rs): an
    array still alive, or a slice of one, must never be written by a later encode, and a result
    written into reused memory must be exactly tiktoken's."""
    sw, tk = pair
    texts = [
        ("Recycled ids stay put. 재사용 " * 40_000)[: 1_200_000 - 150_000 * k] for k in range(4)
    ]
    want = [tk.encode(t) for t in texts]
    alive = sw.encode_to_numpy(texts[0])
    tail = sw.encode_to_numpy(texts[1])[-1000:]  # only the slice keeps its result alive
    for _ in range(3):
        for t, w in zip(texts, want):
            got = sw.encode_to_numpy(t)
            assert np.array_equal(got, w)
            del got  # freed: its memory may serve the next call
        short = sw.encode_ordinary(texts[3])  # a list result gives its ids back too
        assert short == want[3]
    assert np.array_equal(alive, want[0])
    assert np.array_equal(tail, want[1][-1000:])


# 16..120 texts already give hundreds of pieces, several of runs.rs's 64-piece windows (most of
# this test's time is hypothesis drawing the lists).
@settings(max_examples=N_SMALL)
@given(
    texts=st.lists(textgen.with_specials(["<|endoftext|>"]), min_size=16, max_size=120),
    threads=st.sampled_from([1, 2]),
)
def test_runs_of_short_texts_encode_as_each_alone(hpair, texts, threads):
    """A batch's texts are looked up 64 pieces at a time across texts (encode/runs.rs); each
    text's ids must still be those of encoding it alone, specials split or refused per text."""
    sw, tk = hpair
    assert sw.encode_batch(texts, num_threads=threads, allowed_special="all") == [
        tk.encode(t, allowed_special="all") for t in texts
    ]
    assert sw.encode_ordinary_batch(texts, num_threads=threads) == [
        tk.encode_ordinary(t) for t in texts
    ]
    assert_same_outcome(sw.encode_batch, tk.encode_batch, texts)
    assert_same_outcome(
        lambda ts: sw.count_batch(ts, num_threads=threads),
        lambda ts: [len(ids) for ids in tk.encode_batch(ts)],
        texts,
    )


@pytest.mark.parametrize("threads", [1, 2])
def test_a_special_split_between_two_texts_is_in_neither(pair, threads):
    """A batch looks its texts up as one run, searched for specials once (encode/runs.rs): a
    special whose halves end one text and start the next is in no text, so it is neither
    refused nor split, while one inside a text still is."""
    sw, tk = pair
    halves = ["so <|endof", "text|> and", "<|", "endoftext|>", "a<|endoftext", "|>"]
    texts = [h + str(k % 7) if k % 2 else h for k, h in enumerate(halves * 40)]
    want = [tk.encode(t) for t in texts]
    assert sw.encode_batch(texts, num_threads=threads) == want
    assert sw.count_batch(texts, num_threads=threads) == [len(ids) for ids in want]
    bad = texts + ["one <|endoftext|> inside"]
    for fn in (sw.encode_batch, sw.count_batch):
        with pytest.raises(ValueError, match="endoftext"):
            fn(bad, num_threads=threads)
    assert sw.encode_batch(bad, allowed_special="all", num_threads=threads) == [
        tk.encode(t, allowed_special="all") for t in bad
    ]


@settings(max_examples=N_SMALL)
@given(data=st.data())
def test_decode_random_ids(hpair, data):
    """Arbitrary id sequences: byte output, lossy decoding and offsets match tiktoken, including
    sequences that split UTF-8 characters."""
    sw, tk = hpair
    seq = data.draw(textgen.id_sequences(valid_ids(tk)), label="ids")
    assert sw.decode_bytes(seq) == tk.decode_bytes(seq)
    assert sw.decode_tokens_bytes(seq) == tk.decode_tokens_bytes(seq)
    for errors in ("replace", "ignore", "strict", "backslashreplace", "surrogateescape"):
        try:
            want = tk.decode(seq, errors=errors)
        except UnicodeDecodeError as e:
            with pytest.raises(UnicodeDecodeError) as info:
                sw.decode(seq, errors=errors)
            assert str(info.value) == str(e)
        else:
            assert sw.decode(seq, errors=errors) == want
    try:
        want = tk.decode_with_offsets(seq)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            sw.decode_with_offsets(seq)
    else:
        text, offsets = sw.decode_with_offsets(seq)
        assert (text, list(offsets)) == want


@settings(max_examples=N_SMALL)
@given(text=textgen.texts)
def test_decode_with_offsets_parity(hpair, text):
    sw, tk = hpair
    ids = tk.encode_ordinary(text)
    text_out, offsets = sw.decode_with_offsets(ids)
    assert (text_out, list(offsets)) == tk.decode_with_offsets(ids)


@settings(max_examples=50)
@given(text=textgen.short_texts)
def test_encode_with_unstable_parity(hpair, text):
    sw, tk = hpair
    stable, completions = sw.encode_with_unstable(text)
    want_stable, want_completions = tk.encode_with_unstable(text)
    assert list(stable) == want_stable
    assert {tuple(c) for c in completions} == {tuple(c) for c in want_completions}


# --------------------------------------------------------------------------------------------
# corpora

CORPUS_ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"]
_CORPUS_FILES = refdata.corpora_files()
if _CORPUS_FILES:
    CORPUS_PARAMS = [pytest.param(p, id=p.name) for p in _CORPUS_FILES]
elif refdata.corpora_dir().is_dir():  # present but empty: that is a failure, not a skip
    CORPUS_PARAMS = [pytest.param(None, id="empty-corpora")]
else:
    _absent = pytest.mark.skip(reason=f"{refdata.corpora_dir()} is absent")
    CORPUS_PARAMS = [pytest.param(None, id="no-corpora", marks=_absent)]

_CORPUS_TEXT: dict = {}


def _corpus(path):
    if path is None:
        pytest.fail(f"{refdata.corpora_dir()} holds no .txt files")
    if path not in _CORPUS_TEXT:
        _CORPUS_TEXT.clear()  # keep one file in memory at a time
        _CORPUS_TEXT[path] = path.read_text(encoding="utf-8")
    return _CORPUS_TEXT[path]


@pytest.mark.corpora
@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS_PARAMS)
@pytest.mark.parametrize("name", CORPUS_ENCODINGS)
def test_corpus_whole_file(encodings, name, path):
    sw, tk = encodings(name)
    text = _corpus(path)
    assert_ids(sw.encode_ordinary(text), tk.encode_ordinary(text), tk)


@pytest.mark.corpora
@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS_PARAMS)
@pytest.mark.parametrize("name", CORPUS_ENCODINGS)
def test_corpus_line_by_line(encodings, name, path):
    sw, tk = encodings(name)
    lines = _corpus(path).splitlines(keepends=True)
    got = sw.encode_ordinary_batch(lines)
    # The same as tk.encode_ordinary_batch(lines), without its per-line thread-pool overhead
    # (which makes it ~10x slower than a plain loop on these files).
    want = [tk.encode_ordinary(line) for line in lines]
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        if list(g) != w:
            pytest.fail(f"line {i + 1} {lines[i][:200]!r}: {describe_diff(list(g), w, tk)}")
