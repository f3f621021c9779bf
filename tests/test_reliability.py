"""Hostile input and long-running-process hazards (issue 9): forks, thread counts, huge sizes,
out-of-range integers in files, quadratic loads, selection caching, training edge cases.

Cases that used to hang or abort the interpreter run in a subprocess with a timeout, so a
regression fails the test instead of killing or stalling the suite. The timeouts are generous
(the old behaviour took minutes or forever); speed goals live in benches/.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import subword
from subword import Tokenizer, models, pre_tokenizers, trainers

CORES = os.cpu_count() or 1
LIMIT = max(4 * CORES, 8)

DOCS = [
    "the quick brown fox jumps over the lazy dog",
    "인공지능은 데이터로부터 학습한다",
    "tokens, tokens and more tokens; 12345 numbers",
] * 20


def run_python(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter; fail (not hang) past `timeout` seconds."""
    try:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"timed out after {timeout} s:\n{e.stderr}")


def trained_encoding():
    return subword.train_from_iterator(DOCS, vocab_size=300, show_progress=False)


def wordpiece_tokenizer() -> Tokenizer:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(
        DOCS,
        trainers.WordPieceTrainer(vocab_size=200, special_tokens=["[UNK]"], show_progress=False),
    )
    return tok


# ----- 1. fork -----

FORK_CHILD = """
import multiprocessing as mp, sys
import subword
from subword import Tokenizer, models, pre_tokenizers, trainers

DOCS = {docs!r}
TEXTS = DOCS[:50]

def jobs():
    enc = subword.train_from_iterator(DOCS, vocab_size=300, show_progress=False)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(DOCS, trainers.WordPieceTrainer(
        vocab_size=200, special_tokens=["[UNK]"], show_progress=False))
    return (
        enc.encode_batch(TEXTS, num_threads=2),
        [e.ids for e in tok.encode_batch(TEXTS)],
        enc.merges,
    )

def child(q):
    q.put(jobs())

if __name__ == "__main__":
    parent = jobs()  # the parent's pools exist before the fork
    ctx = mp.get_context({method!r})
    q = ctx.Queue()
    p = ctx.Process(target=child, args=(q,))
    p.start()
    got = q.get(timeout=60)
    p.join(timeout=60)
    assert p.exitcode == 0, p.exitcode
    assert got == parent, "child results differ from the parent's"
    print("ok")
"""


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_pools_work_in_a_child_after_the_parent_used_them(method, tmp_path):
    script = tmp_path / "fork_child.py"
    script.write_text(FORK_CHILD.format(docs=DOCS, method=method))
    try:
        r = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=120
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"child made by {method} hung in a parallel call")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ----- 2. thread counts -----


@pytest.mark.parametrize("n", [LIMIT + 1, 10_000, 10**6, 10**30])
def test_too_many_threads_is_a_value_error_naming_the_limit(n):
    enc = trained_encoding()
    for call in (
        lambda: enc.encode_batch(["a", "b"], num_threads=n),
        lambda: enc.encode_ordinary_batch(["a", "b"], num_threads=n),
        lambda: enc.decode_batch([[1], [2]], num_threads=n),
        lambda: subword.train_from_iterator(DOCS, 300, num_threads=n, show_progress=False),
    ):
        with pytest.raises(ValueError, match=f"limit of {LIMIT}"):
            call()


def test_negative_threads_is_a_value_error():
    enc = trained_encoding()
    with pytest.raises(ValueError, match="num_threads"):
        enc.encode_batch(["a"], num_threads=-1)


def test_thread_counts_up_to_the_limit_work_and_pools_are_reused():
    enc = trained_encoding()
    want = [enc.encode(t) for t in DOCS]
    # tiktoken's default (8) must always be accepted, whatever the machine.
    for n in (0, 1, 2, 8, LIMIT):
        assert enc.encode_batch(DOCS, num_threads=n) == want

    def threads() -> int:
        return len(os.listdir("/proc/self/task"))

    before = threads()
    for _ in range(30):
        enc.encode_batch(DOCS, num_threads=3)
    assert threads() - before <= 3, "a pool is made per call instead of being reused"


# ----- 3. sizes that reach allocations -----


@pytest.mark.parametrize("length", [10**12, 2**32 + 5, 2**24 + 1])
def test_absurd_padding_length_is_refused_when_set(length):
    code = f"""
    import sys
    sys.path.insert(0, {os.path.dirname(__file__)!r})
    from test_reliability import wordpiece_tokenizer
    tok = wordpiece_tokenizer()
    try:
        tok.enable_padding(length={length})
    except ValueError as e:
        print("ValueError:", e)
    else:
        print("accepted", len(tok.encode("the fox").ids))
    """
    r = run_python(code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ValueError:"), r.stdout
    assert "limit" in r.stdout and "16777216" in r.stdout


@pytest.mark.parametrize("field", ["length", "pad_to_multiple_of"])
def test_absurd_padding_is_refused_when_set_in_the_drop_in(field):
    import subword.tokenizers as hf

    tok = hf.Tokenizer(hf.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    with pytest.raises(ValueError, match="limit of 16777216"):
        tok.enable_padding(**{field: 2**24 + 1})
    assert tok.padding is None  # a refused setting changes nothing
    tok.enable_padding(length=2**24)  # the limit itself is allowed


def test_out_of_range_id_in_a_pipeline_file_names_u32():
    import subword.tokenizers as hf

    doc = {"model": {"type": "WordLevel", "vocab": {"[UNK]": 0, "a": 2**32}, "unk_token": "[UNK]"}}
    with pytest.raises(ValueError, match=r"model\.vocab\.a: .*u32.*4294967296"):
        hf.Tokenizer.from_str(json.dumps(doc))


def test_absurd_padding_in_a_file_is_refused(tmp_path):
    tok = wordpiece_tokenizer()
    tok.enable_padding(length=8)
    doc = json.loads(tok.to_str())
    doc["padding"]["strategy"] = {"Fixed": 10**12}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="padding length"):
        Tokenizer.from_file(str(path))


def test_padding_at_the_limit_still_works():
    tok = wordpiece_tokenizer()
    plain = tok.encode("the quick fox").ids
    tok.enable_padding(length=1000, pad_to_multiple_of=64)
    enc = tok.encode("the quick fox")
    assert len(enc.ids) == 1024 and enc.ids[: len(plain)] == plain
    assert enc.attention_mask == [1] * len(plain) + [0] * (1024 - len(plain))


@pytest.mark.parametrize("vocab_size", [2**26 + 1, 10**12, 2**64, -1])
def test_absurd_vocab_size_is_a_value_error(vocab_size):
    with pytest.raises(ValueError, match="vocab_size"):
        subword.train_from_iterator(DOCS, vocab_size=vocab_size, show_progress=False)


def test_negative_min_frequency_is_a_value_error():
    with pytest.raises(ValueError, match="min_frequency"):
        subword.train_from_iterator(DOCS, vocab_size=300, min_frequency=-1, show_progress=False)


# ----- 4. integers read from files -----


def byte_level_json(tmp_path) -> dict:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train_from_iterator(
        DOCS, trainers.BpeTrainer(vocab_size=300, special_tokens=["<|eot|>"], show_progress=False)
    )
    path = tmp_path / "bpe.json"
    tok.save(str(path))
    return json.loads(path.read_text())


@pytest.mark.parametrize("bad", [2**32 + 50, 10**12, -3, 1.5])
def test_out_of_range_vocab_id_is_a_value_error(tmp_path, bad):
    doc = byte_level_json(tmp_path)
    token = next(t for t, i in doc["model"]["vocab"].items() if i == 50)
    doc["model"]["vocab"][token] = bad
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="u32") as e:
        Tokenizer.from_file(str(path))
    assert repr(token)[1:-1] in str(e.value) or token in str(e.value)


def test_out_of_range_added_token_id_is_a_value_error(tmp_path):
    doc = byte_level_json(tmp_path)
    doc["added_tokens"][0]["id"] = 2**32 + 1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="u32"):
        Tokenizer.from_file(str(path))


def test_out_of_range_wordpiece_id_is_a_value_error(tmp_path):
    doc = json.loads(wordpiece_tokenizer().to_str())
    token = next(iter(doc["model"]["vocab"]))
    doc["model"]["vocab"][token] = 2**32 + doc["model"]["vocab"][token]
    path = tmp_path / "wp.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="u32"):
        Tokenizer.from_file(str(path))


# ----- 5. loads and matching linear in size -----


def test_a_ten_megabyte_token_loads_quickly(tmp_path):
    path = tmp_path / "long.tiktoken"
    with open(path, "w") as f:
        for b in range(256):
            f.write(f"{base64.b64encode(bytes([b])).decode()} {b}\n")
        f.write(f"{base64.b64encode(b'ab' * 5_000_000).decode()} 256\n")
        f.write(f"{base64.b64encode(b'ab').decode()} 257\n")
    code = f"""
    import subword
    enc = subword.Encoding.from_tiktoken_file({str(path)!r}, subword._core.GPT2_PATTERN)
    assert enc.encode("abab") == [257, 257], enc.encode("abab")
    assert enc.decode_single_token_bytes(256) == b"ab" * 5_000_000
    print("ok")
    """
    r = run_python(code, timeout=60)  # minutes before the fix
    assert r.stdout.strip() == "ok", r.stderr


def test_a_long_added_token_does_not_slow_encoding():
    code = f"""
    import sys
    sys.path.insert(0, {os.path.dirname(__file__)!r})
    from test_reliability import wordpiece_tokenizer
    tok = wordpiece_tokenizer()
    tok.add_special_tokens(["x" * 50_000, "<s>"])
    enc = tok.encode("the fox <s> " + "x" * 50_000)
    ids = enc.ids
    assert ids[-1] == tok.token_to_id("x" * 50_000), ids
    assert ids[-2] == tok.token_to_id("<s>"), ids
    print("ok")
    """
    r = run_python(code, timeout=60)  # 80 s or more before the fix
    assert r.stdout.strip() == "ok", r.stderr


def test_a_megabyte_special_token_does_not_stall_training():
    code = """
    import subword
    big = "y" * 1_000_000
    enc = subword.train_from_iterator(
        ["hello world " * 100 + big + " hello"], vocab_size=300, special_tokens=[big],
        show_progress=False)
    assert enc.encode(big, allowed_special="all") == [enc.n_vocab - 1]
    print("ok")
    """
    r = run_python(code, timeout=60)  # past 4 minutes before the fix
    assert r.stdout.strip() == "ok", r.stderr


def test_added_tokens_match_after_adding_to_a_loaded_tokenizer():
    tok = wordpiece_tokenizer()
    before = tok.encode("the fox").ids  # the core exists now
    tok.add_special_tokens(["<mask>"])
    tok.add_tokens(["quick brown"])
    got = tok.encode("the <mask> quick brown fox")
    assert tok.token_to_id("<mask>") in got.ids and tok.token_to_id("quick brown") in got.ids
    assert tok.encode("the fox").ids == before
    # Rebuilding from the file gives the same tokenizer.
    again = Tokenizer.from_str(tok.to_str())
    assert again.encode("the <mask> quick brown fox").ids == got.ids


# ----- 6. special-token selections -----


def test_many_distinct_selections_match_tiktoken():
    """More distinct selections than the cache keeps, each twice: results equal tiktoken's."""
    import itertools

    import tiktoken

    enc = trained_encoding()
    ranks = {enc.decode_single_token_bytes(i): i for i in range(256)}
    specials = {f"<|s{i}|>": 256 + i for i in range(7)}
    pat = subword._core.GPT2_PATTERN
    sw = subword.Encoding("t", pat_str=pat, mergeable_ranks=ranks, special_tokens=specials)
    tk = tiktoken.Encoding("t", pat_str=pat, mergeable_ranks=ranks, special_tokens=specials)
    text = "a <|s0|> b <|s3|><|s6|> c <|s1|>"
    subsets = [
        set(c) for r in range(len(specials) + 1) for c in itertools.combinations(specials, r)
    ]
    assert len(subsets) > 64
    for _ in range(2):
        for allowed in subsets:
            for disallowed in ("all", ()):
                want = got = None
                try:
                    want = tk.encode(text, allowed_special=allowed, disallowed_special=disallowed)
                except ValueError as e:
                    want = ("ValueError", str(e))
                try:
                    got = sw.encode(text, allowed_special=allowed, disallowed_special=disallowed)
                except ValueError as e:
                    got = ("ValueError", str(e))
                assert got == want, (allowed, disallowed)
            assert sw.encode_batch([text, "x"], allowed_special=allowed, disallowed_special=()) == [
                tk.encode(text, allowed_special=allowed, disallowed_special=()),
                tk.encode("x", allowed_special=allowed, disallowed_special=()),
            ]


# ----- 8. training edge cases (the core's part) -----


def test_a_pattern_that_matches_nothing_is_refused():
    with pytest.raises(ValueError, match="matched none") as e:
        subword.train_from_iterator(DOCS, vocab_size=300, pattern="bogus_name", show_progress=False)
    assert "gpt2" in str(e.value)  # the message lists the built-in names


def test_a_pattern_that_skips_text_warns_with_the_count():
    docs = ["abc 123", "de 45"]
    skipped = sum(len(d.encode()) for d in docs) - sum(
        len(w) for d in docs for w in d.split() if w.isalpha()
    )
    with pytest.warns(UserWarning, match=f"skipped {skipped} of the 12 bytes"):
        subword.train_from_iterator(docs, vocab_size=260, pattern=r"\p{L}+", show_progress=False)


def test_a_covering_pattern_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        subword.train_from_iterator(
            DOCS, vocab_size=300, pattern="cl100k_base", show_progress=False
        )


@pytest.mark.parametrize(
    "counts",
    [
        {"ab": 2**62, "ba": 2**62},  # 2**64 symbol occurrences
        {"abc": 2**62},
        [("ab", 2**63), ("ab", 2**63)],  # one key summed past u64
    ],
)
def test_counts_that_would_overflow_are_refused(counts):
    with pytest.raises(ValueError, match="scale them down"):
        subword.train_from_counts(counts, vocab_size=300, show_progress=False)


def test_counts_near_the_limit_still_train_exactly():
    """2**61 each: every pair total fits, and the learned merge is the most frequent pair."""
    enc = subword.train_from_counts(
        {"ab": 2**61, "cd": 2**61 - 1}, vocab_size=258, min_frequency=1, show_progress=False
    )
    assert enc.merges == [(b"a", b"b"), (b"c", b"d")]


def test_count_beyond_u64_is_a_value_error():
    with pytest.raises(ValueError, match="2\\*\\*64"):
        subword.train_from_counts({"ab": 2**64}, vocab_size=300, show_progress=False)
