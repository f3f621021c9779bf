"""Training: ``subword.train``, ``train_from_iterator`` and ``train_from_counts``.

The oracle is the textbook trainer below (``ref_train``): recount every adjacent pair of every
pre-token at every step, merge the best one left to right, repeat. It is slow and obviously right;
subword's incremental trainer must learn exactly the same merges, in the same order, with the same
tie-breaks, on every corpus hypothesis can think of.

Pre-tokens for the oracle come from Python's ``regex`` package running GPT-2's pattern (the same
string tiktoken uses), after splitting the text at the special tokens (leftmost-longest).

Environment: SUBWORD_TRAINING_EXAMPLES sets the number of hypothesis examples per property;
otherwise it is min(the suite's number, 200 locally / 600 with CI=true), which keeps this file
well under a minute.
"""

from __future__ import annotations

import itertools
import os
import random
import re
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import pytest
import refdata
import regex
import subword
import textgen
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

N = int(
    os.environ.get("SUBWORD_TRAINING_EXAMPLES")
    or min(refdata.hypothesis_examples(), 600 if refdata.in_ci() else 200)
)
N_SMALL = max(25, N // 4)
# subword.train reads each file through a 32 MiB buffer: ~40 ms per file, however small.
N_FILES = max(25, N // 8)

GPT2_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
GPT2_RE = regex.compile(GPT2_PAT)
#: A custom regex both engines (Python's ``regex`` and subword's fancy-regex) read the same way.
NONSPACE_PAT = r"\S+|\s+"
REF_PATTERNS = {"gpt2": GPT2_RE, NONSPACE_PAT: regex.compile(NONSPACE_PAT)}

BYTES = [bytes([i]) for i in range(256)]


# --------------------------------------------------------------------------------------------
# the reference trainer


def ref_pretokens(docs, specials=(), pattern="gpt2") -> dict[bytes, int]:
    """{pre-token bytes: count} in order of first appearance, the way the trainer should see
    `docs` (an iterable of str, each its own document)."""
    splitter = None
    if specials:
        # Longest first: Python's alternation takes the first alternative that matches at the
        # leftmost position, which makes this leftmost-longest.
        alts = sorted(specials, key=len, reverse=True)
        splitter = re.compile("(" + "|".join(re.escape(s) for s in alts) + ")")
    pat = None if pattern is None else REF_PATTERNS[pattern]
    counts: dict[bytes, int] = {}
    for doc in docs:
        stretches = [doc] if splitter is None else splitter.split(doc)[::2]
        for stretch in stretches:
            pieces = [stretch] if pat is None else pat.findall(stretch)
            for piece in pieces:
                if piece:
                    b = piece.encode("utf-8")
                    counts[b] = counts.get(b, 0) + 1
    return counts


def ref_train(
    words: dict[bytes, int], n_tokens: int, min_frequency: int = 2, tie_break: str = "lexicographic"
):
    """The textbook BPE trainer.

    `words`: {pre-token bytes: count}, in order of first appearance. Learns until `n_tokens` new
    tokens exist or the best pair occurs fewer than `min_frequency` times. Returns (merges, tokens):
    merges as (bytes, bytes) in learned order, tokens as the list of bytes by id.
    """
    assert tie_break in ("lexicographic", "first")
    segs = [([BYTES[b] for b in w], c) for w, c in words.items()]
    tokens = list(BYTES)
    known = set(tokens)
    merges = []
    while len(tokens) - 256 < n_tokens:
        # Counter keeps insertion order: pairs in order of first occurrence, scanning pre-tokens in
        # order of first appearance and each one left to right. Every adjacent position counts
        # ("aaa" holds (a, a) twice).
        counts: Counter = Counter()
        for syms, c in segs:
            for pair in zip(syms, syms[1:]):
                counts[pair] += c
        if not counts:
            break
        if tie_break == "first":
            best = max(counts, key=counts.__getitem__)  # max() keeps the first of equal keys
        else:
            best = max(counts, key=lambda p: (counts[p], p))
        if counts[best] < max(min_frequency, 1):
            break
        merged = best[0] + best[1]
        merges.append(best)
        if merged not in known:  # bytes that already are a token keep their id
            known.add(merged)
            tokens.append(merged)
        new_segs = []
        for syms, c in segs:
            if len(syms) < 2:
                new_segs.append((syms, c))
                continue
            out = []
            i = 0
            while i < len(syms):
                if i + 1 < len(syms) and syms[i] == best[0] and syms[i + 1] == best[1]:
                    out.append(merged)
                    i += 2
                else:
                    out.append(syms[i])
                    i += 1
            new_segs.append((out, c))
        segs = new_segs
    return merges, tokens


def assert_matches_reference(enc, words, n_tokens, min_frequency, tie_break, specials=()):
    """`enc` must hold exactly what ref_train learns from `words`."""
    want_merges, want_tokens = ref_train(words, n_tokens, min_frequency, tie_break)
    got = enc.merges
    if got != want_merges:
        i = next(
            (k for k, (a, b) in enumerate(zip(got, want_merges)) if a != b),
            min(len(got), len(want_merges)),
        )
        raise AssertionError(
            f"merges differ at step {i} (tie_break={tie_break}, min_frequency={min_frequency}, "
            f"n_tokens={n_tokens}, {len(words)} distinct pre-tokens)\n"
            f"  subword  : {got[max(0, i - 2) : i + 3]} ({len(got)} merges)\n"
            f"  reference: {want_merges[max(0, i - 2) : i + 3]} ({len(want_merges)} merges)\n"
            f"  words: {list(words.items())[:20]}"
        )
    assert enc._mergeable_ranks == {t: i for i, t in enumerate(want_tokens)}
    assert enc._special_tokens == {s: len(want_tokens) + k for k, s in enumerate(specials)}
    assert enc.n_vocab == len(want_tokens) + len(specials)
    vocab = enc.vocab
    assert list(vocab) == list(range(enc.n_vocab))
    assert [vocab[i] for i in range(len(want_tokens))] == want_tokens
    assert [vocab[len(want_tokens) + k] for k in range(len(specials))] == [
        s.encode() for s in specials
    ]


def quiet(fn, *args, **kwargs):
    """Call a training function with the empty-corpus warning silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# the reference itself, on cases worked by hand


def test_reference_textbook_example():
    words = {b"low": 5, b"lower": 2, b"newest": 6, b"widest": 3}
    assert ref_train(words, 4, 2, "first")[0] == [
        (b"e", b"s"),
        (b"es", b"t"),
        (b"l", b"o"),
        (b"lo", b"w"),
    ]
    assert ref_train(words, 4, 2, "lexicographic")[0] == [
        (b"s", b"t"),
        (b"e", b"st"),
        (b"o", b"w"),
        (b"l", b"ow"),
    ]


def test_reference_overlapping_pairs():
    # (a, a) occurs twice in "aaa"; the merge then yields [aa, a], so (aa, a) occurs once.
    assert ref_train({b"aaa": 1}, 10, 2)[0] == [(b"a", b"a")]
    assert ref_train({b"aaa": 1}, 10, 1)[0] == [(b"a", b"a"), (b"aa", b"a")]
    assert ref_train({b"aaaa": 1}, 10, 1)[0] == [(b"a", b"a"), (b"aa", b"aa")]


def test_reference_pretokens():
    assert ref_pretokens(["Hello world  !\n"]) == {
        b"Hello": 1,
        b" world": 1,
        b" ": 1,
        b" !": 1,
        b"\n": 1,
    }
    assert ref_pretokens(["a<|x|>b<|x|><|x|>c"], ["<|x|>"], None) == {b"a": 1, b"b": 1, b"c": 1}
    # leftmost-longest
    assert ref_pretokens(["x<|a|><|b|>y<|a|>z"], ["<|a|>", "<|a|><|b|>"], None) == {
        b"x": 1,
        b"y": 1,
        b"z": 1,
    }
    assert ref_pretokens(["x<|a|><|b|>y"], ["<|a|>", "<|b|>y"], None) == {b"x": 1}
    # documents never join
    assert ref_pretokens(["ab", "ab", "b"], (), None) == {b"ab": 2, b"b": 1}


# --------------------------------------------------------------------------------------------
# hand-made cases


def test_textbook_example():
    counts = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
    # Step 1: (e,s) and (s,t) both occur 9 times (newest x6 + widest x3). "first" takes (e,s), met
    # first in "newest" (before (s,t) in the same word); lexicographic takes the greater pair,
    # (b"s", b"t") > (b"e", b"s").
    # Step 3: (l,o) and (o,w) both occur 7 times (low x5 + lower x2). "first" takes (l,o), which
    # comes first in "low"; lexicographic takes (b"o", b"w") > (b"l", b"o").
    enc = subword.train_from_counts(
        counts, vocab_size=260, pattern=None, show_progress=False, tie_break="first"
    )
    assert enc.merges == [(b"e", b"s"), (b"es", b"t"), (b"l", b"o"), (b"lo", b"w")]
    enc = subword.train_from_counts(counts, vocab_size=260, pattern=None, show_progress=False)
    assert enc.merges == [(b"s", b"t"), (b"e", b"st"), (b"o", b"w"), (b"l", b"ow")]
    assert enc.n_vocab == 260
    assert [enc.vocab[i] for i in range(256, 260)] == [b"st", b"est", b"ow", b"low"]


def test_overlapping_pairs_count_every_position():
    # (a, a) occurs twice in "aaa": it reaches min_frequency=2 from one pre-token.
    enc = subword.train_from_counts({"aaa": 1}, 270, pattern=None, show_progress=False)
    assert enc.merges == [(b"a", b"a")]
    enc = subword.train_from_counts(
        {"aaa": 1}, 270, pattern=None, min_frequency=1, show_progress=False
    )
    # left to right, non-overlapping: "aaa" -> [aa, a] -> [aaa]
    assert enc.merges == [(b"a", b"a"), (b"aa", b"a")]


def test_min_frequency_stops_training():
    enc = subword.train_from_counts(
        {"abcd": 3, "xy": 2}, 300, pattern=None, min_frequency=3, show_progress=False
    )
    assert enc.merges == [(b"c", b"d"), (b"b", b"cd"), (b"a", b"bcd")]
    assert enc.n_vocab == 259
    enc = subword.train_from_counts(
        {"abcd": 3, "xy": 2}, 300, pattern=None, min_frequency=4, show_progress=False
    )
    assert enc.merges == []
    assert enc.n_vocab == 256


def test_documents_never_join():
    enc = subword.train_from_iterator(["a", "b"] * 50, 300, pattern=None, show_progress=False)
    assert enc.merges == []
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, text in enumerate(["a", "b", "a", "b"]):
            p = Path(d) / f"{i}.txt"
            p.write_bytes(text.encode())
            paths.append(p)
        enc = subword.train(paths, 300, pattern=None, min_frequency=1, show_progress=False)
        assert enc.merges == []
        # ...while equal pre-tokens of different documents are counted together: 4 x "ab"
        for p in paths:
            p.write_bytes(b"ab")
        enc = subword.train(paths, 300, pattern=None, min_frequency=4, show_progress=False)
        assert enc.merges == [(b"a", b"b")]


def test_specials_split_the_text_before_the_pattern():
    # Without the split, pattern=None would make the whole document one pre-token.
    docs = ["xy<|eot|>xy<|eot|><|eot|>xy"] * 10
    enc = subword.train_from_iterator(
        docs, 256 + 20 + 1, ["<|eot|>"], pattern=None, show_progress=False
    )
    assert enc.merges == [(b"x", b"y")]
    assert enc._special_tokens == {"<|eot|>": 257}


@pytest.mark.parametrize("specials", [["<|a|>", "<|a|><|b|>"], ["<|a|><|b|>", "<|a|>"]])
def test_specials_split_leftmost_longest(specials):
    # Split at "<|a|>" first, "<|b|>y" would be left as text and get merged.
    docs = ["x<|a|><|b|>y<|a|>"] * 5
    enc = subword.train_from_iterator(
        docs, 300, specials, pattern=None, min_frequency=1, show_progress=False
    )
    assert enc.merges == []
    assert enc.encode("<|a|><|b|><|a|>", allowed_special="all") == [
        256 + specials.index(s) for s in ["<|a|><|b|>", "<|a|>"]
    ]


def test_pattern_is_resolved_and_kept():
    enc = subword.train_from_iterator(["hello world"] * 3, 260, show_progress=False)
    assert enc._pat_str == GPT2_PAT
    enc = subword.train_from_iterator(
        ["hello world"] * 3, 260, pattern=NONSPACE_PAT, show_progress=False
    )
    assert enc._pat_str == NONSPACE_PAT


def test_show_progress_false_is_silent(capfd):
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "c.txt"
        p.write_text("hello world\n" * 100)
        subword.train(p, 270, show_progress=False)
        subword.train_from_iterator(["hello world"] * 10, 270, show_progress=False)
        subword.train_from_counts({"hello": 3}, 270, show_progress=False)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# --------------------------------------------------------------------------------------------
# hypothesis: subword == reference on generated corpora

# fmt: off
FIXED_FRAGMENTS = [
    "the", " the", "cat", " cat", "a", "ab", "ba", "aaa", "abab", " a", "  ", "   ", "\n", "\n\n",
    " \n", "\t", "\r\n", "!", "?!", "...", "'s", "'ll", "'", "123", " 4567", "é", "e\u0301",
    "a\u0308\u0323", "\u0300", "\u0301\u0301", "한국어", " 한글", "가나다", "각", "ᄀ", "ᅡ",
    "漢字", " 中文", "日本語", "😀", "👍🏽", "👨\u200d👩\u200d👧", "🦀", " 🦀", "\xa0", "\u3000x",
    "٣٤", "Ⅻ", "ß", "Ω",
]
# fmt: on
SPECIAL_POOL = ["<|eot|>", "<|a|>", "<|a|><|b|>", "<s>", "ab", "aba", "bab", "한"]

fragment = st.one_of(
    st.sampled_from(FIXED_FRAGMENTS),
    st.text("ab", min_size=1, max_size=6),
    st.text("abc ", min_size=1, max_size=8),
    st.text("aé한 \n", min_size=1, max_size=6),
    # any assigned code point (Python's Unicode 14 tables: no classes that newer Unicode changed)
    st.text(st.characters(exclude_categories=("Cs", "Cn")), min_size=1, max_size=4),
    textgen.hangul,
    textgen.cjk,
    textgen.emoji,
    textgen.combining,
)
#: Sets where one special is a prefix of another or two overlap: leftmost-longest matters.
SPECIAL_GROUPS = [
    ["<|a|>", "<|a|><|b|>"],
    ["ab", "aba"],
    ["aba", "bab"],
    ["<|b|>", "<|a|>", "<|a|><|b|>"],
]
specials_lists = st.one_of(
    st.lists(st.sampled_from(SPECIAL_POOL), unique=True, max_size=3),
    st.sampled_from(SPECIAL_GROUPS).flatmap(st.permutations),
)
patterns = st.sampled_from(["gpt2", None, NONSPACE_PAT])
tie_breaks = st.sampled_from(["lexicographic", "first"])
min_frequencies = st.sampled_from([0, 1, 2, 2, 3])


@st.composite
def corpus(draw, specials=()):
    """A few documents built from a small pool of fragments, so pairs repeat and ties abound."""
    pool = draw(st.lists(fragment, min_size=1, max_size=8))
    pool += list(specials)
    if specials:
        pool += [s[:-1] for s in specials if len(s) > 1]  # near misses
    n_docs = draw(st.integers(0, 6))
    return [draw(st.lists(st.sampled_from(pool), max_size=16).map("".join)) for _ in range(n_docs)]


@st.composite
def training_setup(draw):
    specials = draw(specials_lists)
    docs = draw(corpus(specials))
    return dict(
        docs=docs,
        specials=specials,
        pattern=draw(patterns),
        tie_break=draw(tie_breaks),
        min_frequency=draw(min_frequencies),
        n_tokens=draw(st.integers(0, 48)),
    )


@settings(max_examples=N)
@given(
    setup=training_setup(),
    batch_size=st.sampled_from([1, 2, 1000]),
    num_threads=st.sampled_from([0, 1, 2]),
)
def test_train_from_iterator_matches_reference(setup, batch_size, num_threads):
    s = setup
    enc = quiet(
        subword.train_from_iterator,
        iter(s["docs"]),
        256 + s["n_tokens"] + len(s["specials"]),
        s["specials"],
        pattern=s["pattern"],
        min_frequency=s["min_frequency"],
        show_progress=False,
        tie_break=s["tie_break"],
        num_threads=num_threads,
        batch_size=batch_size,
    )
    words = ref_pretokens(s["docs"], s["specials"], s["pattern"])
    assert_matches_reference(
        enc, words, s["n_tokens"], s["min_frequency"], s["tie_break"], s["specials"]
    )


@settings(max_examples=N_FILES)
@given(setup=training_setup())
def test_train_on_files_matches_reference(setup):
    s = setup
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, doc in enumerate(s["docs"]):
            p = Path(d) / f"doc{i}.txt"
            p.write_bytes(doc.encode("utf-8"))  # binary: no newline translation
            paths.append(str(p) if i % 2 else p)
        enc = quiet(
            subword.train,
            paths,
            256 + s["n_tokens"] + len(s["specials"]),
            s["specials"],
            pattern=s["pattern"],
            min_frequency=s["min_frequency"],
            show_progress=False,
            tie_break=s["tie_break"],
        )
    words = ref_pretokens(s["docs"], s["specials"], s["pattern"])
    assert_matches_reference(
        enc, words, s["n_tokens"], s["min_frequency"], s["tie_break"], s["specials"]
    )


pre_token_bytes = st.one_of(
    st.lists(st.sampled_from([b"a", b"b", b"c"]), min_size=1, max_size=8).map(b"".join),
    st.lists(
        st.sampled_from([b"a", b"\x00", b"\xff", b"\xc3", b"\xa9", b" "]), min_size=1, max_size=6
    ).map(b"".join),
    st.sampled_from([s.encode() for s in FIXED_FRAGMENTS]),
    st.binary(min_size=1, max_size=5),
)


@st.composite
def count_items(draw):
    """(pre-token, count) pairs, with repeats; keys as str where they decode, else bytes."""
    pool = draw(st.lists(pre_token_bytes, min_size=1, max_size=10))
    items = []
    for _ in range(draw(st.integers(0, 14))):
        key = draw(st.sampled_from(pool))
        if draw(st.booleans()):
            try:
                key = key.decode("utf-8")
            except UnicodeDecodeError:
                pass
        count = draw(st.one_of(st.integers(1, 6), st.sampled_from([2**33, 2**40 + 1])))
        items.append((key, count))
    return items


@settings(max_examples=N)
@given(
    items=count_items(),
    as_dict=st.booleans(),
    specials=st.lists(st.sampled_from(["<|eot|>", "<|x|>"]), unique=True),
    pattern=patterns,
    tie_break=tie_breaks,
    min_frequency=min_frequencies,
    n_tokens=st.integers(0, 40),
)
def test_train_from_counts_matches_reference(
    items, as_dict, specials, pattern, tie_break, min_frequency, n_tokens
):
    if as_dict:
        given_counts = {}
        for k, c in items:
            given_counts[k] = given_counts.get(k, 0) + c
        source = given_counts.items()
    else:
        given_counts = list(items)
        source = items
    words: dict[bytes, int] = {}
    for k, c in source:  # str and bytes spelling the same pre-token are the same pre-token
        b = k.encode("utf-8") if isinstance(k, str) else k
        words[b] = words.get(b, 0) + c
    enc = quiet(
        subword.train_from_counts,
        given_counts,
        256 + n_tokens + len(specials),
        specials,
        pattern=pattern,
        min_frequency=min_frequency,
        show_progress=False,
        tie_break=tie_break,
    )
    assert_matches_reference(enc, words, n_tokens, min_frequency, tie_break, specials)


# --------------------------------------------------------------------------------------------
# slices of real text


def corpus_slice(corpora, name: str, size: int = 20_000) -> str:
    path = next((p for p in corpora if p.name == name), None)
    if path is None:
        pytest.skip(f"{name} not in the corpora folder")
    with open(path, "rb") as f:
        data = f.read(size)
    text = data.decode("utf-8", errors="ignore")
    return text[: text.rfind("\n") + 1] or text


@pytest.mark.corpora
@pytest.mark.parametrize("name", ["en_fortunes.txt", "ko.txt"])
@pytest.mark.parametrize("tie_break", ["lexicographic", "first"])
def test_real_text_matches_reference(corpora, name, tie_break, tmp_path):
    text = corpus_slice(corpora, name)
    n = 100
    words = ref_pretokens([text])
    enc = subword.train_from_iterator([text], 256 + n, show_progress=False, tie_break=tie_break)
    assert_matches_reference(enc, words, n, 2, tie_break)
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    enc = subword.train([path], 256 + n, show_progress=False, tie_break=tie_break)
    assert_matches_reference(enc, words, n, 2, tie_break)
    # lines as documents, no pre-tokenization: long pre-tokens with spaces inside
    lines = text.splitlines(keepends=True)[:60]
    enc = subword.train_from_iterator(
        lines, 256 + 60, pattern=None, show_progress=False, tie_break=tie_break
    )
    assert_matches_reference(enc, ref_pretokens(lines, (), None), 60, 2, tie_break)


# --------------------------------------------------------------------------------------------
# determinism: threads, chunking, file order


def make_big_corpus(size: int = 3_000_000, seed: int = 1234) -> str:
    """~`size` bytes of many short lines from a Zipf-ish vocabulary; most line breaks are safe
    cut points ("non-space ASCII, \\n, ASCII letter"), some are not."""
    rng = random.Random(seed)
    letters = "etaoinshrdlucmfwypvbgkjqxz"
    vocab = ["".join(rng.choices(letters, k=rng.randint(1, 9))) for _ in range(3000)]
    vocab += ["한국어", "가나", "café", "naïve", "東京", "2024", "x1", "'s"]
    cum_weights = list(itertools.accumulate(1 / (i + 1) for i in range(len(vocab))))
    lines = []
    total = 0
    while total < size:
        words = rng.choices(vocab, cum_weights=cum_weights, k=rng.randint(3, 14))
        line = " ".join(words) + rng.choice([".", ",", "!", "", "", " ", "  "])
        if rng.random() < 0.05:
            line = rng.choice([" ", "\t", "1 ", "- "]) + line
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory):
    """(text, its pre-tokens for the reference, the text as one file, the text as two files)."""
    text = make_big_corpus()
    d = tmp_path_factory.mktemp("big")
    whole = d / "whole.txt"
    whole.write_bytes(text.encode("utf-8"))
    cut = text.index("\n", len(text) // 2) + 1
    a, b = d / "a.txt", d / "b.txt"
    a.write_bytes(text[:cut].encode("utf-8"))
    b.write_bytes(text[cut:].encode("utf-8"))
    return text, ref_pretokens([text]), whole, a, b


@pytest.mark.slow
@pytest.mark.parametrize("tie_break", ["lexicographic", "first"])
def test_threads_and_chunking_do_not_change_merges(big_corpus, tie_break):
    text, words, whole, a, b = big_corpus
    assert len(text.encode()) > 2 << 20  # several ~1 MB parallel chunks
    n = 64
    runs = {
        threads: subword.train(
            whole, 256 + n, show_progress=False, tie_break=tie_break, num_threads=threads
        ).merges
        for threads in (1, 2, 0)
    }
    assert runs[1] == runs[2] == runs[0]
    # one str document: the same pre-tokens in the same order as the file
    it = subword.train_from_iterator(
        [text], 256 + n, show_progress=False, tie_break=tie_break, num_threads=2
    )
    assert it.merges == runs[1]
    counted = subword.train_from_counts(words, 256 + n, show_progress=False, tie_break=tie_break)
    assert counted.merges == runs[1]
    # and the reference itself (slow in Python, so on fewer merges)
    want, _ = ref_train(words, 24, 2, tie_break)
    assert runs[1][:24] == want


def train_big_doc(how, doc, tmp_path, **kwargs):
    if how == "file":
        path = tmp_path / "doc.txt"
        path.write_bytes(doc.encode("utf-8"))
        return subword.train([path], show_progress=False, **kwargs)
    return subword.train_from_iterator([doc], show_progress=False, **kwargs)


# A document over 1 MiB is counted in parallel chunks cut at "non-space ASCII, \n, ASCII letter"
# (the first such point after each MiB). The two tests below put that point where a special token
# or a custom pattern needs the text on both sides of it; the result must not change.

SPANNING_SPECIAL = "END.\nStart"  # holds a cut point: ".\nS"


@pytest.mark.parametrize("how", ["iterator", "file"])
@pytest.mark.parametrize("tie_break", ["lexicographic", "first"])
def test_special_holding_a_cut_point_in_a_big_document(tmp_path, how, tie_break):
    # The only "\n" in the document is inside the special, just after the first MiB.
    doc = "x " * 600_000 + SPANNING_SPECIAL + " y"
    words = ref_pretokens([doc], [SPANNING_SPECIAL])
    assert words == {b"x": 1, b" x": 599_999, b" ": 1, b" y": 1}
    enc = train_big_doc(
        how,
        doc,
        tmp_path,
        vocab_size=256 + 10 + 1,
        special_tokens=[SPANNING_SPECIAL],
        min_frequency=1,
        tie_break=tie_break,
    )
    # expected [(b" ", b"x"), (b" ", b"y")]: no token may hold a piece of the special
    assert_matches_reference(enc, words, 10, 1, tie_break, [SPANNING_SPECIAL])


#: Whitespace attaches to the next word ("\nab" is one piece), as in SentencePiece-style splits.
SPACE_PREFIX_PAT = r"\s?\S+|\s+"
REF_PATTERNS[SPACE_PREFIX_PAT] = regex.compile(SPACE_PREFIX_PAT)


@pytest.mark.parametrize("how", ["iterator", "file"])
def test_custom_pattern_across_a_cut_point_in_a_big_document(tmp_path, how):
    doc = "ab " * 400_000 + "ab\ncd"
    words = ref_pretokens([doc], (), SPACE_PREFIX_PAT)
    assert words == {b"ab": 1, b" ab": 400_000, b"\ncd": 1}
    enc = train_big_doc(
        how, doc, tmp_path, vocab_size=256 + 10, pattern=SPACE_PREFIX_PAT, min_frequency=1
    )
    # expected [(a, b), (" ", ab), (c, d), ("\n", cd)]
    assert_matches_reference(enc, words, 10, 1, "lexicographic")


@pytest.mark.slow
def test_file_order_does_not_matter_with_lexicographic(big_corpus):
    _, _, _, a, b = big_corpus
    ab = subword.train([a, b], 256 + 200, show_progress=False, num_threads=2)
    ba = subword.train([b, a], 256 + 200, show_progress=False, num_threads=1)
    assert ab.merges == ba.merges
    assert ab._mergeable_ranks == ba._mergeable_ranks


# --------------------------------------------------------------------------------------------
# the trained encoding: round trips, special tokens

TRAIN_DOCS = [
    "The quick brown fox jumps over the lazy dog. " * 3,
    "Hello, world! It's 2024 and we'll see 1234567 things.\n\n",
    "한국어 텍스트도 조금 있습니다. 안녕하세요!\n",
    "naïve café résumé — «quotes» …\n",
    "def f(x):\n    return x + 1\n\n",
] * 20
EOT = "<|eot|>"
TRAINED_VOCAB = 256 + 200 + 1  # bytes, learned tokens, EOT


@pytest.fixture(scope="module")
def trained():
    # no emoji in here: they are bytes the tokenizer never saw
    docs = [d + EOT + d for d in TRAIN_DOCS] + make_big_corpus(100_000, seed=7).split("\n\n")
    enc = subword.train_from_iterator(docs, TRAINED_VOCAB, [EOT], show_progress=False)
    assert enc.n_vocab == TRAINED_VOCAB  # the corpus is rich enough to fill the vocabulary
    return enc


def without_surrogates(text: str) -> str:
    return "".join(c for c in text if not 0xD800 <= ord(c) <= 0xDFFF)


round_trip_texts = st.one_of(textgen.texts, textgen.with_specials([EOT])).map(without_surrogates)


@settings(max_examples=N)
@given(text=round_trip_texts)
def test_round_trip(trained, text):
    ids = trained.encode(text, allowed_special="all")
    assert all(0 <= i < trained.n_vocab for i in ids)
    assert trained.decode_bytes(ids) == text.encode("utf-8")
    assert trained.decode(ids) == text
    ordinary = trained.encode_ordinary(text)
    assert trained.decode_bytes(ordinary) == text.encode("utf-8")
    assert trained._special_tokens[EOT] not in ordinary


def test_unseen_bytes_round_trip(trained):
    text = "🦀🫠 ℵ₀ \x00\x7f ꙮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"
    ids = trained.encode_ordinary(text)
    assert trained.decode_bytes(ids) == text.encode()
    # unseen bytes fall back to the single-byte ids (id == byte value)
    assert trained.encode_ordinary("\x00") == [0]
    assert trained.encode_ordinary("🦀") == list("🦀".encode())


def test_specials_never_merged(trained):
    special = EOT.encode()
    for i, token in trained.vocab.items():
        if i != trained._special_tokens[EOT]:
            assert special not in token, (i, token)
    for a, b in trained.merges:
        assert special not in a + b
    ids = trained.encode("a<|eot|>b", allowed_special="all")
    assert TRAINED_VOCAB - 1 in ids  # specials come last
    assert trained._special_tokens == {EOT: TRAINED_VOCAB - 1}
    assert trained.decode(ids) == "a<|eot|>b"


def test_special_next_to_text_never_merged():
    # pattern=None and text glued to the special on both sides: only the split keeps them apart
    docs = ["ab<|eot|>ab<|eot|>ab", "<|eot|><|eot|>"] * 30
    enc = subword.train_from_iterator(
        docs, 256 + 30 + 1, [EOT], pattern=None, min_frequency=1, show_progress=False
    )
    learned = [enc.vocab[i] for i in range(256, enc.n_vocab) if i != enc._special_tokens[EOT]]
    assert learned == [b"ab"]
    assert enc.merges == [(b"a", b"b")]


# --------------------------------------------------------------------------------------------
# save / export


@pytest.fixture(scope="module", params=["gpt2", "cl100k_base", NONSPACE_PAT])
def exported(request, tmp_path_factory):
    docs = [d + EOT for d in TRAIN_DOCS]
    enc = subword.train_from_iterator(
        docs, 256 + 150 + 1, [EOT], pattern=request.param, show_progress=False
    )
    path = tmp_path_factory.mktemp("export") / "trained.tiktoken"
    enc.dump_tiktoken(path)
    loaded = subword.Encoding.from_tiktoken_file(
        path, pat_str=enc._pat_str, special_tokens=enc._special_tokens
    )
    return enc, loaded, enc.to_tiktoken()


def test_export_keeps_the_vocabulary(exported):
    enc, loaded, tk = exported
    assert loaded._mergeable_ranks == enc._mergeable_ranks
    assert loaded._special_tokens == enc._special_tokens
    assert loaded.n_vocab == enc.n_vocab == tk.n_vocab
    assert isinstance(tk, tiktoken.Encoding)


@settings(max_examples=N_SMALL)
@given(text=round_trip_texts)
def test_export_gives_identical_ids(exported, text):
    enc, loaded, tk = exported
    want = enc.encode(text, allowed_special="all")
    assert loaded.encode(text, allowed_special="all") == want
    assert tk.encode(text, allowed_special="all") == want
    ordinary = enc.encode_ordinary(text)
    assert loaded.encode_ordinary(text) == ordinary
    assert tk.encode_ordinary(text) == ordinary


# --------------------------------------------------------------------------------------------
# bad input


def test_missing_file(tmp_path):
    missing = tmp_path / "no-such-file.txt"
    with pytest.raises(FileNotFoundError, match="no-such-file"):
        subword.train([missing], 300, show_progress=False)
    good = tmp_path / "good.txt"
    good.write_text("hello world\n")
    with pytest.raises(FileNotFoundError):
        subword.train([good, missing], 300, show_progress=False)


@pytest.mark.parametrize(
    "content, offset",
    [
        (b"hello world\n" * 100 + b"ab\xffcd\n", 1202),
        (b"\xff", 0),
        (b"caf\xc3\xa9 \xc3", 6),  # truncated sequence at the end
        (b"ok\n" * 10 + b"\xed\xa0\x80", 30),  # an encoded surrogate is not UTF-8
        (
            "héllo wörld\nthe end\n".encode() * 120_000 + b"tail \x80",
            len("héllo wörld\nthe end\n".encode()) * 120_000 + 5,
        ),
    ],
    ids=["middle", "first-byte", "truncated", "surrogate", "after-2MB"],
)
def test_invalid_utf8_names_file_and_offset(tmp_path, content, offset):
    path = tmp_path / "bad-file.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        subword.train([path], 300, show_progress=False)
    msg = str(info.value)
    assert "bad-file.txt" in msg, msg
    assert re.search(rf"\b{offset}\b", msg), f"offset {offset} not in {msg!r}"


@pytest.mark.slow
def test_invalid_utf8_offset_beyond_the_first_block(tmp_path):
    # Files are read in 32 MiB blocks: the offset must count the blocks before.
    line = b"hello world, the end\n"
    body = line * ((33 << 20) // len(line) + 1)
    path = tmp_path / "big-bad.txt"
    path.write_bytes(body + b"x\xfe")
    with pytest.raises(ValueError) as info:
        subword.train([path], 260, show_progress=False)
    msg = str(info.value)
    assert "big-bad.txt" in msg and re.search(rf"\b{len(body) + 1}\b", msg), msg


@pytest.mark.parametrize(
    "specials, how",
    [
        (specials, how)
        for specials in ([], [EOT], [EOT, "<|pad|>"])
        for how in (
            "iterator-empty",
            "iterator-empty-docs",
            "counts-empty",
            "file-empty",
            "specials-only",
        )
        # A corpus made only of special tokens needs at least one special token.
        if specials or how != "specials-only"
    ],
)
def test_empty_corpus(tmp_path, specials, how):
    with pytest.warns(UserWarning, match="empty"):
        if how == "iterator-empty":
            enc = subword.train_from_iterator([], 1000, specials, show_progress=False)
        elif how == "iterator-empty-docs":
            enc = subword.train_from_iterator(["", ""], 1000, specials, show_progress=False)
        elif how == "counts-empty":
            enc = subword.train_from_counts({}, 1000, specials, show_progress=False)
        elif how == "file-empty":
            p = tmp_path / "empty.txt"
            p.write_bytes(b"")
            enc = subword.train([p], 1000, specials, show_progress=False)
        else:
            enc = subword.train_from_iterator(
                ["".join(specials) * 3], 1000, specials, show_progress=False
            )
    assert enc.n_vocab == 256 + len(specials)
    assert enc.merges == []
    assert enc._special_tokens == {s: 256 + k for k, s in enumerate(specials)}
    text = "hello wörld 🦀 한국어"
    assert enc.encode_ordinary(text) == list(text.encode())
    assert enc.decode(enc.encode(text)) == text
    if specials:
        assert enc.encode(specials[0], allowed_special="all") == [256]


@pytest.mark.parametrize(
    "call",
    [
        lambda vs, sp: subword.train_from_iterator(["hello"], vs, sp, show_progress=False),
        lambda vs, sp: subword.train_from_counts({"hello": 3}, vs, sp, show_progress=False),
    ],
    ids=["iterator", "counts"],
)
def test_vocab_size_too_small(call):
    with pytest.raises(ValueError, match="256"):
        call(255, [])
    with pytest.raises(ValueError, match="258"):
        call(257, [EOT, "<|pad|>"])
    with pytest.raises(ValueError, match="257"):
        call(0, [EOT])
    # the minimum itself is fine: no room to learn anything
    enc = call(258, [EOT, "<|pad|>"])
    assert enc.n_vocab == 258 and enc.merges == []


def test_vocab_size_too_small_for_files(tmp_path):
    p = tmp_path / "c.txt"
    p.write_text("hello hello")
    with pytest.raises(ValueError, match="257"):
        subword.train([p], 256, [EOT], show_progress=False)


def test_duplicate_special_tokens_leave_no_hole():
    # Duplicates may be rejected or merged into one; either way ids must stay 0..n_vocab-1.
    try:
        enc = subword.train_from_iterator(["hello hello"] * 3, 270, [EOT, EOT], show_progress=False)
    except ValueError:
        return
    assert sorted(enc.vocab) == list(range(enc.n_vocab)), (
        enc.n_vocab,
        sorted(enc.vocab)[-3:],
        enc._special_tokens,
    )


@pytest.mark.parametrize("tie_break", ["bogus", "Lexicographic", "", "last"])
def test_bad_tie_break(tie_break):
    with pytest.raises(ValueError, match="tie_break"):
        subword.train_from_iterator(["hello hello"], 300, show_progress=False, tie_break=tie_break)
    with pytest.raises(ValueError, match="tie_break"):
        subword.train_from_counts({"hello": 2}, 300, show_progress=False, tie_break=tie_break)
