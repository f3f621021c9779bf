"""`Encoding.encode_iterable` (streaming) and `Encoding.encode_bytes` against tiktoken.

Streaming must give the ids of the joined text for every way of cutting it; the stream is made to
decide at every chunk boundary (`_min_try=1`), so each cut is a boundary it has to get right.
`encode_bytes` must give tiktoken's `_encode_bytes` ids and decode back to its input.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import refdata
import subword
import textgen
from hypothesis import given, settings
from hypothesis import strategies as st

N = refdata.hypothesis_examples()
SPECIALS_CASES = ("<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>")


def cut(text: str, points: list[int]) -> list[str]:
    points = sorted({p % (len(text) + 1) for p in points})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


# --------------------------------------------------------------------------------------------
# encode_iterable


@given(text=textgen.texts, points=st.lists(st.integers(0, 10_000), max_size=12))
@settings(max_examples=N, deadline=None)
def test_stream_equals_whole_text_for_any_cuts(pair, text, points):
    sw, tk = pair
    chunks = cut(text, points)
    # Hypothesis may draw a special's text (it mines string constants from the source).
    got = sw.encode_iterable(chunks, disallowed_special=(), _min_try=1)
    assert list(got) == tk.encode_ordinary(text)


WHITESPACE_CASES = [
    # A run's piece reaches its last line break: a stream must not let "\n" go before the run
    # ends (cl100k and o200k encode "\n    \n" otherwise than "\n" + "    \n").
    "x\n    \ny",
    "x\n      \n\ny",
    "a \n     \n b",
    "x\n\n   \t  \r\n  y",
    "end.   \n\n\n   ",
    "word      word",
    "k 'll 're x' s",
    "1234567 89\n\n",
]


@pytest.mark.parametrize("text", WHITESPACE_CASES)
def test_stream_cut_at_every_point_of_whitespace_runs(pair, text):
    sw, tk = pair
    want = tk.encode_ordinary(text)
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            chunks = [text[:i], text[i:j], text[j:]]
            assert list(sw.encode_iterable(chunks, _min_try=1)) == want, chunks


@given(text=textgen.texts, size=st.integers(1, 5))
@settings(max_examples=N // 3, deadline=None)
def test_stream_char_by_char(pair, text, size):
    sw, tk = pair
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    # Hypothesis may draw a special's text (it mines string constants from the source).
    got = sw.encode_iterable(chunks, disallowed_special=(), _min_try=1)
    assert list(got) == tk.encode_ordinary(text)


@given(
    text=textgen.with_specials(SPECIALS_CASES),
    points=st.lists(st.integers(0, 10_000), max_size=12),
    allowed=st.sampled_from(["all", frozenset({"<|endoftext|>"}), frozenset()]),
)
@settings(max_examples=N // 3, deadline=None)
def test_stream_with_specials_cut_anywhere(encodings, text, points, allowed):
    sw, tk = encodings("cl100k_base")
    chunks = cut(text, points)
    try:
        want = tk.encode(text, allowed_special=allowed, disallowed_special=())
    except ValueError:
        pytest.skip("oracle refused")
    got = sw.encode_iterable(chunks, allowed_special=allowed, disallowed_special=(), _min_try=1)
    assert list(got) == want


@given(points=st.lists(st.integers(0, 60), min_size=1, max_size=6))
@settings(max_examples=N // 3, deadline=None)
def test_stream_disallowed_special_split_across_chunks_raises(encodings, points):
    sw, tk = encodings("cl100k_base")
    text = "some words then <|endoftext|> and more words after it " * 2
    with pytest.raises(ValueError) as want:
        tk.encode(text)
    with pytest.raises(ValueError) as got:
        list(sw.encode_iterable(cut(text, points), _min_try=1))
    assert str(got.value) == str(want.value)


def test_stream_of_every_corpus_line_by_line(pair, corpora):
    sw, tk = pair
    for path in corpora:
        text = path.read_text(encoding="utf-8")[:400_000]
        with open(path, encoding="utf-8", newline="") as f:
            lines, size = [], 0
            for line in f:
                lines.append(line)
                size += len(line)
                if size >= len(text):
                    break
        text = "".join(lines)
        got = sw.encode_iterable(lines, disallowed_special=())
        assert list(got) == tk.encode(text, disallowed_special=()), path


def test_stream_custom_pattern_is_exact(r50k_ranks):
    # A pattern the stream cannot prove safe is held to the end: still the whole text's ids.
    import tiktoken

    pat = r"\w+|[^\w]"
    sw = subword.Encoding("x", pat_str=pat, mergeable_ranks=r50k_ranks, special_tokens={})
    tk = tiktoken.Encoding("x", pat_str=pat, mergeable_ranks=r50k_ranks, special_tokens={})
    text = "a custom pattern, streamed in pieces " * 50
    assert list(sw.encode_iterable(cut(text, [5, 77, 300, 1201]), _min_try=1)) == tk.encode(text)


def test_stream_surrogate_pair_across_chunks(encodings):
    sw, tk = encodings("cl100k_base")
    text = "emoji \U0001f600 end"
    units = text.encode("utf-16-le", "surrogatepass")
    pair = units.decode("utf-16-le", "surrogatepass")
    # Python keeps astral chars whole; split the surrogate pair by hand.
    high, low = "\ud83d", "\ude00"
    chunks = ["emoji ", high, low + " end"]
    assert pair == text
    assert list(sw.encode_iterable(chunks, _min_try=1)) == tk.encode(text)
    # A lone surrogate becomes U+FFFD, as encode does.
    assert list(sw.encode_iterable(["a", high])) == sw.encode("a" + high)


def test_stream_rejects_non_str_chunks(encodings):
    sw, _ = encodings("cl100k_base")
    with pytest.raises(TypeError, match="iterable of str"):
        list(sw.encode_iterable([b"bytes"]))
    with pytest.raises(TypeError):
        sw.encode_iterable(["x"], allowed_special=3)


def test_stream_is_lazy(encodings):
    sw, tk = encodings("cl100k_base")
    line = "A line of ordinary English text, long enough to give a few ids.\n"

    def lines():
        while True:
            yield line

    it = sw.encode_iterable(lines())
    first = [next(it) for _ in range(50)]
    assert first == tk.encode(line * 40)[:50]


def test_stream_5mb_file_bounded_memory_and_no_threads(tmp_path, encodings):
    """5 MB read line by line: a few MB of extra memory at most, no thread started, same count."""
    sw, tk = encodings("o200k_base")
    path = tmp_path / "big.txt"
    line = "line {}: the quick brown fox jumps over the lazy dog; 한국어 텍스트\n"
    block = "".join(line.format(i) for i in range(2000))
    with open(path, "w", encoding="utf-8") as f:
        while f.tell() < 5_000_000:
            f.write(block)
    script = textwrap.dedent(
        f"""
        import os, subword
        def rss():
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        def threads():
            return len(os.listdir("/proc/self/task"))
        enc = subword.get_encoding("o200k_base")
        enc.encode("warm up the caches " * 100)
        base, n, peak = rss(), 0, 0
        with open({str(path)!r}, encoding="utf-8") as f:
            for i, _ in enumerate(enc.encode_iterable(f)):
                n += 1
                if i % 20000 == 0:
                    peak = max(peak, rss() - base)
        print(n, peak, threads())
        """
    )
    env = dict(os.environ)
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    n, growth, threads = int(out[0]), int(out[1]), int(out[2])
    assert n == len(tk.encode(path.read_text(encoding="utf-8")))
    assert growth < 8 << 20, f"memory grew by {growth / 2**20:.1f} MB"
    assert threads == 1


# --------------------------------------------------------------------------------------------
# encode_bytes


@given(data=st.binary(max_size=40))
@settings(max_examples=N, deadline=None)
def test_encode_bytes_random(pair, data):
    sw, tk = pair
    got = sw.encode_bytes(data)
    assert got == tk._encode_bytes(data)
    assert sw.decode_bytes(got) == data
    assert sw._encode_bytes(data) == got


@given(text=textgen.texts, junk=st.binary(min_size=1, max_size=6), at=st.integers(0, 1000))
@settings(max_examples=N // 3, deadline=None)
def test_encode_bytes_text_with_invalid_bytes(pair, text, junk, at):
    sw, tk = pair
    raw = text.encode("utf-8")
    at %= len(raw) + 1
    data = raw[:at] + junk + raw[at:]
    assert sw.encode_bytes(data) == tk._encode_bytes(data)
    assert sw.decode_bytes(sw.encode_bytes(data)) == data


def test_encode_bytes_valid_utf8_is_encode_ordinary(encodings):
    sw, tk = encodings("cl100k_base")
    text = "plain text with <|endoftext|> inside"
    assert sw.encode_bytes(text.encode()) == tk.encode_ordinary(text)
    assert sw.encode_bytes(b" \xec\x8b\xa4\xed") == tk._encode_bytes(b" \xec\x8b\xa4\xed")


def test_encode_bytes_rejects_str(encodings):
    sw, _ = encodings("cl100k_base")
    with pytest.raises(TypeError, match="encode_bytes takes bytes"):
        sw.encode_bytes("text")


def test_encode_single_piece(pair):
    sw, tk = pair
    for piece in [b"helloqqqq", b" world", b"\xff\xfe", "한국어".encode()]:
        assert sw._encode_single_piece(piece) == tk._encode_single_piece(piece)


@given(text=textgen.with_specials(SPECIALS_CASES), points=st.lists(st.integers(0, 10_000)))
@settings(max_examples=N // 3, deadline=None)
def test_hf_dialect_tokenizer_streams_its_encode(encodings, text, points):
    sw, _ = encodings("cl100k_base")
    tok = subword.Tokenizer.from_encoding(sw)
    assert list(tok.encode_iterable(cut(text, points))) == tok.encode(text).ids


def test_hf_dialect_stream_refuses_prefix_space(encodings):
    sw, _ = encodings("r50k_base")
    tok = subword.Tokenizer.from_encoding(sw, add_prefix_space=True)
    with pytest.raises(ValueError, match="add_prefix_space"):
        tok.encode_iterable(["a", "b"])
