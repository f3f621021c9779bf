"""One long text on several cores: cut at safe points (`rust/pretokenize/safe_cut.rs`), the parts
encoded in parallel, concatenated. The ids must equal tiktoken's and the sequential result's for
every way of cutting, so the tests force parts far smaller than the automatic ones."""

from __future__ import annotations

import pytest
import refdata
import subword
import textgen
from conftest import load_pair
from hypothesis import given, settings
from hypothesis import strategies as st

ENCODINGS = ["r50k_base", "cl100k_base", "o200k_base"]

# Lines whose ends and starts sometimes make a safe cut ("graphic char, \n, ASCII letter") and
# sometimes nearly do (space or digit before the \n, digit or non-ASCII letter after it).
line_ends = st.sampled_from(["x", ".", ")", " ", "1", "é", "\r", ""])
line_starts = st.sampled_from(["a", "Z", " ", "1", "é", "가", "\n", "'s"])
texts_with_lines = st.lists(st.tuples(textgen.texts, line_ends, line_starts), max_size=12).map(
    lambda parts: "\n".join(end + text + start for text, end, start in parts)
)


@pytest.fixture(autouse=True)
def restore_threads():
    before = subword.get_num_threads()
    yield
    subword.set_num_threads(before)


@pytest.mark.parametrize("name", ENCODINGS)
@settings(max_examples=refdata.hypothesis_examples(local=300, ci=3000))
@given(text=texts_with_lines, part_len=st.integers(1, 64))
def test_any_parts_give_tiktokens_ids(name, text, part_len):
    sw, tk = load_pair(name)
    assert sw._core._encode_ordinary_in_parts(text, part_len) == tk.encode_ordinary(text)


@pytest.mark.parametrize("name", ENCODINGS)
def test_long_text_with_specials_in_parallel(name):
    sw, tk = load_pair(name)
    eot = "<|endoftext|>"
    doc = "The fox.\nJumps over 12 dogs!\nÉcole 가나다\n" * 6000
    text = f"{doc}{eot}{doc}{eot}"
    assert len(doc.encode()) > 256 << 10  # each stretch takes the parallel path
    subword.set_num_threads(2)
    assert sw.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")
    assert sw.count(text, allowed_special="all") == len(tk.encode(text, allowed_special="all"))


def test_custom_patterns_are_never_cut():
    enc = subword.Encoding(
        "custom",
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([b]): b for b in range(256)},
        special_tokens={},
    )
    with pytest.raises(ValueError, match="no safe cut"):
        enc._core._encode_ordinary_in_parts("a\nb", 1)
    text = "word\nx " * 100_000
    subword.set_num_threads(2)
    assert enc.encode_ordinary(text) == list(text.encode())


def test_thread_setting_is_checked():
    with pytest.raises(ValueError, match="limit"):
        subword.set_num_threads(10**6)
    with pytest.raises(ValueError, match="num_threads"):
        subword.set_num_threads(-1)
    subword.set_num_threads(1)
    assert subword.get_num_threads() == 1


@pytest.mark.parametrize(
    "value, outcome",
    [
        ("1", "1"),
        ("0", "0"),
        ("3", "3"),
        ("many", "ValueError"),
        ("-2", "ValueError"),
        ("100000", "ValueError"),
    ],
)
def test_thread_setting_from_the_environment(value, outcome):
    import os
    import subprocess
    import sys

    code = (
        "try:\n import subword; print(subword.get_num_threads())\n"
        "except ValueError as e:\n print('ValueError', e)"
    )
    env = {**os.environ, "SUBWORD_NUM_THREADS": value}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.stdout.split()[0] == outcome, r.stdout + r.stderr
    if outcome == "ValueError":
        assert "num_threads" in r.stdout or "SUBWORD_NUM_THREADS" in r.stdout


@pytest.mark.corpora
@pytest.mark.parametrize("path", refdata.corpora_files() or [None])
@pytest.mark.parametrize("name", ENCODINGS)
def test_corpus_parts_equal_sequential(name, path, corpora):
    """Parts of 4 KB (hundreds of cuts per file): the same ids as one sequential pass."""
    sw, _ = load_pair(name)
    text = path.read_text(encoding="utf-8")[: 2 << 20]
    subword.set_num_threads(1)
    assert sw._core._encode_ordinary_in_parts(text, 4096) == sw.encode_ordinary(text)


@pytest.mark.parametrize("gc_on", [True, False])
def test_batches_leave_the_garbage_collector_as_it_was(gc_on):
    """The binding keeps the collector off while it builds a batch's lists; it must come back as
    the caller had it, with the right lists, also when the call fails."""
    import gc

    sw, tk = load_pair("cl100k_base")
    texts = [f"paragraph {i}: the quick brown fox, {'é' * (i % 7)}" for i in range(3000)]
    was = gc.isenabled()
    try:
        gc.enable() if gc_on else gc.disable()
        assert sw.encode_ordinary_batch(texts, num_threads=2) == tk.encode_ordinary_batch(texts)
        assert sw.encode_batch(texts, num_threads=2) == tk.encode_batch(texts)
        assert gc.isenabled() is gc_on
        with pytest.raises(ValueError):
            sw.encode_batch(["<|endoftext|>"], num_threads=2)
        assert gc.isenabled() is gc_on
    finally:
        gc.enable() if was else gc.disable()


@pytest.mark.parametrize("threads", [1, 2])
def test_result_lists_are_whole_and_collectable_under_a_busy_collector(threads):
    """Result lists are made with their slots unset and filled after (id_lists.rs): with the
    collector set off by every allocation, they must still hold exactly tiktoken's ids, be
    tracked by the collector once returned, and free cleanly."""
    import gc

    sw, tk = load_pair("cl100k_base")
    subword.set_num_threads(threads)
    text = "The fox.\nJumps over 12 dogs!\nÉcole 가나다\n" * 4000  # > 65 K ids: filled by the pool
    texts = [f"line {i}: {'fox ' * (i % 9)}é" for i in range(20_000)] + ["", text]
    was, threshold = gc.isenabled(), gc.get_threshold()
    try:
        gc.enable()
        gc.set_threshold(1, 1, 1)
        one = sw.encode_ordinary(text)
        many = sw.encode_ordinary_batch(texts, num_threads=threads)
        assert gc.is_tracked(one) and all(gc.is_tracked(ids) for ids in many)
        gc.collect()
        assert one == tk.encode_ordinary(text)
        assert many == tk.encode_ordinary_batch(texts)
        assert many[-2] == [] and gc.get_referents(many[-1])[::-1] == many[-1]
        del one, many
        gc.collect()
    finally:
        gc.set_threshold(*threshold)
        gc.enable() if was else gc.disable()


def test_threads_sharing_the_piece_cache_give_tiktokens_ids():
    """The piece cache's second level is shared by threads: many threads encoding overlapping
    text at once (so writes race reads of the same slots) still give exact ids."""
    import threading

    sw, tk = load_pair("o200k_base")
    words = ["alpha", " beta", " 가나다", " Ωμέγα", " 12345", " naïve", "\n", " the", " cat's"]
    texts = ["".join(words[(i * 7 + k) % len(words)] for k in range(i % 40)) for i in range(4000)]
    want = [tk.encode_ordinary(t) for t in texts]
    errors = []

    def work(offset):
        try:
            for _ in range(3):
                order = texts[offset:] + texts[:offset]
                got = [sw.encode_ordinary(t) for t in order]
                if got != want[offset:] + want[:offset]:
                    errors.append(offset)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k * 997,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


# Results of 64 Ki ids or more are filled into their Python lists without increfs (on the pool,
# or on the calling thread at one thread), each id counted and its int increfed once per use
# afterwards (rust/python/id_lists.rs). A wrong count shows as an int whose refcount rises by
# more or less than its uses while the result exists, or does not come back when it goes.
def _refcount_rise_and_uses(make):
    import sys

    first = make()
    flat = [i for ids in first for i in ids]
    assert len(flat) >= 1 << 16
    counts: dict[int, int] = {}
    for i in flat:
        if i > 256:  # above CPython's small-int cache
            counts[i] = counts.get(i, 0) + 1
    target = max(counts, key=counts.__getitem__)
    obj = next(i for i in flat if i == target)  # the encoding's own int for that id
    del flat, first
    before = sys.getrefcount(obj)
    result = make()
    rise = sys.getrefcount(obj) - before
    del result
    assert sys.getrefcount(obj) == before
    return rise, counts[target]


@pytest.mark.parametrize("name", ENCODINGS)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_batch_lists_hold_one_reference_per_use(name, threads):
    sw, tk = load_pair(name)
    texts = [f"Paragraph {k}: the quick brown fox, école 가나다 {k * 7}.\n\n" for k in range(6000)]
    got = sw.encode_ordinary_batch(texts, num_threads=threads)
    assert got == [tk.encode_ordinary(t) for t in texts]
    assert sw.encode_batch(texts, num_threads=threads) == got
    rise, uses = _refcount_rise_and_uses(
        lambda: sw.encode_ordinary_batch(texts, num_threads=threads)
    )
    assert rise == uses


@pytest.mark.parametrize("threads", [1, 2])
def test_long_text_list_holds_one_reference_per_use(threads):
    sw, tk = load_pair("cl100k_base")
    text = "The fox jumps over 12 dogs; école 가나다!\n" * 6000
    subword.set_num_threads(threads)
    assert sw.encode_ordinary(text) == tk.encode_ordinary(text)
    rise, uses = _refcount_rise_and_uses(lambda: [sw.encode_ordinary(text)])
    assert rise == uses
