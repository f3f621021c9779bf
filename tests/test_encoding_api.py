"""The Encoding API beyond the built-in parity: custom encodings, special-token rules, file formats,
subword-only helpers (count, tokens, ...) and how bad input is reported."""

from __future__ import annotations

import base64
import json
import os
import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import gpt2files
import pytest
import refdata
import subword
import textgen
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st
from tiktoken_ext.openai_public import r50k_pat_str

N_SMALL = max(50, refdata.hypothesis_examples() // 10)

GPT2_ORIGINAL_PAT = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
PATTERNS = {
    "r50k": r50k_pat_str,
    "gpt2-original": GPT2_ORIGINAL_PAT,
    "nonspace": r"\S+|\s+",
    "words": r"\w+|[^\w\s]+|\s+(?!\S)|\s+",
    "digits3": r"\p{N}{1,3}|\p{L}+|[^\p{L}\p{N}]+",
}


# --------------------------------------------------------------------------------------------
# a small custom encoding, built the same way for subword and tiktoken


def toy_ranks() -> dict[bytes, int]:
    ranks = {bytes([i]): i for i in range(256)}
    for token in (
        b"ab",
        b"abc",
        b"  ",
        b" a",
        b" ab",
        b"<|",
        b"|>",
        b"\xc3\xa9",
        b"he",
        b"hel",
        b"hell",
        b"hello",
    ):
        ranks[token] = len(ranks)
    return ranks


TOY_RANKS = toy_ranks()
FIRST_SPECIAL = len(TOY_RANKS)
TOY_SPECIALS = {
    s: FIRST_SPECIAL + i
    for i, s in enumerate(
        ["<|a|>", "<|a|><|b|>", "<|b|>", "<|é|>", "xyz", "yzw", "🙂!", "<|endoftext|>"]
    )
}
# Pairs where one special is a prefix of another. subword's documented rule is leftmost-longest
# among the allowed specials. tiktoken searches with one regex over *all* specials (alternation
# in hash order) and skips matches that are not allowed, so wherever the longer one occurs in the
# text its result depends on hash order, whatever is allowed: no tiktoken comparison there.
PREFIX_PAIRS = [("<|a|>", "<|a|><|b|>")]


def make_pair(pat_str=r50k_pat_str, specials=TOY_SPECIALS, name="toy"):
    kwargs = dict(pat_str=pat_str, mergeable_ranks=dict(TOY_RANKS), special_tokens=dict(specials))
    return subword.Encoding(name, **kwargs), tiktoken.Encoding(name, **kwargs)


@pytest.fixture(scope="module")
def toy():
    return make_pair()


def leftmost_longest(
    text: str, allowed: set[str], specials: dict[str, int], encode_ordinary
) -> list[int]:
    """Reference for the special-token rule: scan left to right; at the first position where some
    allowed special matches, take the longest one; ordinary text in between is encoded alone."""
    ids, start, i = [], 0, 0
    while i < len(text):
        hits = [s for s in allowed if text.startswith(s, i)]
        if hits:
            best = max(hits, key=len)
            ids += encode_ordinary(text[start:i]) + [specials[best]]
            i = start = i + len(best)
        else:
            i += 1
    return ids + encode_ordinary(text[start:])


def tiktoken_ambiguous(text: str) -> bool:
    return any(long in text for _, long in PREFIX_PAIRS)


# --------------------------------------------------------------------------------------------
# custom encodings


@pytest.mark.parametrize("pat", list(PATTERNS.values()), ids=list(PATTERNS))
@settings(max_examples=N_SMALL)
@given(text=textgen.texts)
def test_custom_pattern_parity(pat, text):
    sw, tk = _custom_pair(pat)
    assert sw.encode_ordinary(text) == tk.encode_ordinary(text)
    assert sw.decode_bytes(sw.encode_ordinary(text)) == text.encode()


_CUSTOM: dict = {}


def _custom_pair(pat):
    if pat not in _CUSTOM:
        _CUSTOM[pat] = make_pair(pat, specials={"<|endoftext|>": FIRST_SPECIAL})
    return _CUSTOM[pat]


def test_custom_metadata(toy):
    sw, tk = toy
    assert sw.name == "toy"
    assert sw.n_vocab == tk.n_vocab == FIRST_SPECIAL + len(TOY_SPECIALS)
    assert sw.max_token_value == tk.max_token_value
    assert sw.special_tokens_set == set(TOY_SPECIALS)
    assert sw.eot_token == TOY_SPECIALS["<|endoftext|>"]
    assert sorted(sw.token_byte_values()) == sorted(TOY_RANKS)
    assert sw.is_special_token(TOY_SPECIALS["<|b|>"]) and not sw.is_special_token(5)


def test_custom_pickle(toy):
    sw, tk = toy
    clone = pickle.loads(pickle.dumps(sw))
    text = "hello abc <|a|><|b|> xyzw <|é|>"
    assert clone.encode(text, allowed_special="all") == sw.encode(text, allowed_special="all")
    assert clone.special_tokens_set == sw.special_tokens_set
    assert clone.name == "toy"


def test_explicit_n_vocab():
    specials = {"<|endoftext|>": FIRST_SPECIAL}
    n = FIRST_SPECIAL + 1
    enc = subword.Encoding(
        "toy_n",
        pat_str=r50k_pat_str,
        mergeable_ranks=TOY_RANKS,
        special_tokens=specials,
        explicit_n_vocab=n,
    )
    assert enc.n_vocab == n
    for wrong in (n - 1, n + 1, 50257):
        with pytest.raises(ValueError):
            subword.Encoding(
                "toy_n",
                pat_str=r50k_pat_str,
                mergeable_ranks=TOY_RANKS,
                special_tokens=specials,
                explicit_n_vocab=wrong,
            )


# --------------------------------------------------------------------------------------------
# special tokens


def test_prefix_overlap_is_leftmost_longest(toy):
    sw, _ = toy
    a, ab, b = TOY_SPECIALS["<|a|>"], TOY_SPECIALS["<|a|><|b|>"], TOY_SPECIALS["<|b|>"]
    assert sw.encode("<|a|><|b|>", allowed_special="all") == [ab]
    assert sw.encode("<|a|><|b|><|b|>", allowed_special="all") == [ab, b]
    assert sw.encode("<|a|><|a|><|b|>", allowed_special="all") == [a, ab]
    assert sw.encode(
        "<|a|><|b|>", allowed_special={"<|a|>", "<|a|><|b|>"}, disallowed_special=()
    ) == [ab]
    assert sw.encode("<|a|><|b|>", allowed_special={"<|a|>", "<|b|>"}, disallowed_special=()) == [
        a,
        b,
    ]
    assert sw.encode("<|a|><|b|>", allowed_special={"<|a|>"}, disallowed_special=()) == [
        a
    ] + sw.encode_ordinary("<|b|>")
    assert sw.count("<|a|><|b|>", allowed_special="all") == 1


def test_non_prefix_overlaps_match_tiktoken(toy):
    sw, tk = toy
    texts = [
        "xyzw",
        "yzwxyz",
        "xyzyzw",
        "<|a|>x<|b|>",
        "<|b|><|a|>",
        "<|a|<|a|>",
        "<|é|>🙂!",
        "🙂!!🙂",
        "a<|é|<|é|>",
    ]
    for text in texts:
        for allowed in (
            "all",
            {"xyz", "yzw"},
            {"<|a|><|b|>", "<|b|>"},
            {"<|b|>"},
            {"yzw"},
            {"🙂!", "<|é|>"},
        ):
            want = tk.encode(text, allowed_special=allowed, disallowed_special=())
            assert sw.encode(text, allowed_special=allowed, disallowed_special=()) == want, (
                text,
                allowed,
            )


@settings(max_examples=N_SMALL)
@given(data=st.data())
def test_specials_leftmost_longest_property(toy, data):
    sw, tk = toy
    text, allowed = data.draw(textgen.special_case(TOY_SPECIALS), label="text, allowed")
    allowed = set(allowed)
    got = sw.encode(text, allowed_special=allowed, disallowed_special=())
    assert got == leftmost_longest(text, allowed, TOY_SPECIALS, tk.encode_ordinary)
    if not tiktoken_ambiguous(text):
        assert got == tk.encode(text, allowed_special=allowed, disallowed_special=())
    assert sw.decode_bytes(got) == text.encode()


@pytest.mark.parametrize(
    "text",
    [
        "<|b|>",
        "xx<|a|>",
        "hello <|é|> there",
        "🙂!",
        "one xyz",
        "<|endoftext|>",
        "a<|endoftext|>b<|b|>",
    ],
)
def test_disallowed_message_matches_tiktoken(toy, text):
    sw, tk = toy
    with pytest.raises(ValueError) as want:
        tk.encode(text)
    with pytest.raises(ValueError) as got:
        sw.encode(text)
    assert str(got.value) == str(want.value)
    with pytest.raises(ValueError) as got:
        sw.count(text)
    assert str(got.value) == str(want.value)


def test_disallowed_rules(toy):
    sw, tk = toy
    with pytest.raises(ValueError):
        sw.encode("<|a|><|b|>")
    with pytest.raises(ValueError):  # allowing <|a|> leaves <|a|><|b|> disallowed
        sw.encode("<|a|><|b|>", allowed_special={"<|a|>"})
    # as in tiktoken, the disallowed check looks at the raw text: <|b|> inside an allowed
    # <|a|><|b|> still counts
    with pytest.raises(ValueError):
        tk.encode("<|a|><|b|>", allowed_special={"<|a|>", "<|a|><|b|>"})
    with pytest.raises(ValueError):
        sw.encode("<|a|><|b|>", allowed_special={"<|a|>", "<|a|><|b|>"})
    # only the listed ones are checked
    assert sw.encode("<|b|>", disallowed_special={"xyz"}) == tk.encode(
        "<|b|>", disallowed_special={"xyz"}
    )
    assert sw.encode("<|b|>", disallowed_special=()) == sw.encode_ordinary("<|b|>")
    # unknown names in allowed_special are ignored, as in tiktoken
    assert sw.encode("hi <|b|>", allowed_special={"<|nope|>", "<|b|>"}) == tk.encode(
        "hi <|b|>", allowed_special={"<|nope|>", "<|b|>"}
    )


def test_encode_single_token_specials(toy):
    sw, _ = toy
    for s, tid in TOY_SPECIALS.items():
        assert sw.encode_single_token(s) == tid
        assert sw.decode_single_token_bytes(tid) == s.encode()
    assert sw.encode_single_token(b"hello") == TOY_RANKS[b"hello"]


# --------------------------------------------------------------------------------------------
# subword-only helpers


def test_count_tokens_count_batch(r50k_pair):
    sw, tk = r50k_pair
    texts = [
        "hello world",
        "",
        "  indented\n\tcode()",
        "日本語のテキスト",
        "don't stop 12345",
        "🦀🦀",
    ]
    for text in texts:
        ids = sw.encode(text)
        assert sw.count(text) == len(ids) == len(tk.encode(text))
        assert sw.tokens(text) == [sw.decode_single_token_bytes(t) for t in ids]
        assert b"".join(sw.tokens(text)) == text.encode()
    assert sw.count_batch(texts) == [len(tk.encode(t)) for t in texts]
    assert sw.count_batch([]) == []
    s = "a<|endoftext|>b"
    assert sw.count(s, allowed_special="all") == len(tk.encode(s, allowed_special="all"))
    assert sw.count(s, disallowed_special=()) == len(tk.encode(s, disallowed_special=()))
    with pytest.raises(ValueError):
        sw.count(s)


# --------------------------------------------------------------------------------------------
# file formats

SAMPLES = [
    "hello world",
    "Hello, World! It's 2024-01-01.\n\n  spaces   and\ttabs",
    "日本語 한국어 Русский 😀👨‍👩‍👧",
    "a<|endoftext|>b",
]


def _assert_same_as_r50k(enc, tk):
    for text in SAMPLES:
        assert enc.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all"), (
            text
        )
    assert enc.n_vocab == tk.n_vocab


@pytest.mark.parametrize("as_str", [True, False], ids=["str", "Path"])
def test_from_tiktoken_file(r50k_path, r50k_pair, as_str):
    _, tk = r50k_pair
    path = str(r50k_path) if as_str else r50k_path
    enc = subword.Encoding.from_tiktoken_file(
        path, r50k_pat_str, special_tokens={"<|endoftext|>": 50256}, name="mine"
    )
    assert enc.name == "mine"
    _assert_same_as_r50k(enc, tk)
    plain = subword.Encoding.from_tiktoken_file(path, r50k_pat_str)
    assert plain.special_tokens_set == set()
    assert plain.encode("hello world") == tk.encode("hello world")


def _load_with_tiktoken(path: Path, monkeypatch) -> dict[bytes, int]:
    from tiktoken.load import load_tiktoken_bpe

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # don't cache temp files in the shared cache
    return load_tiktoken_bpe(str(path))


def test_dump_tiktoken_round_trip(r50k_pair, r50k_ranks, tmp_path, monkeypatch):
    sw, tk = r50k_pair
    out = tmp_path / "out.tiktoken"
    out.write_bytes(b"garbage that must be replaced\n")
    sw.dump_tiktoken(out)
    assert sorted(os.listdir(tmp_path)) == ["out.tiktoken"], "temporary files left behind"
    assert _load_with_tiktoken(out, monkeypatch) == r50k_ranks
    again = subword.Encoding.from_tiktoken_file(
        str(out), r50k_pat_str, special_tokens={"<|endoftext|>": 50256}
    )
    _assert_same_as_r50k(again, tk)


def test_dump_tiktoken_is_canonical(r50k_pair, r50k_path, tmp_path):
    """The dump is byte-for-byte the published file (tiktoken's format: base64, space, rank,
    newline, in rank order)."""
    sw, _ = r50k_pair
    out = tmp_path / "r50k.tiktoken"
    sw.dump_tiktoken(str(out))
    assert out.read_bytes() == r50k_path.read_bytes()


def test_dump_custom(toy, tmp_path, monkeypatch):
    sw, tk = toy
    out = tmp_path / "toy.tiktoken"
    sw.dump_tiktoken(str(out))
    assert _load_with_tiktoken(out, monkeypatch) == TOY_RANKS  # specials are not part of the file
    back = subword.Encoding.from_tiktoken_file(str(out), r50k_pat_str, special_tokens=TOY_SPECIALS)
    text = "hello abc <|a|><|b|> xyzw <|é|> 🙂!"
    assert back.encode(text, allowed_special="all") == sw.encode(text, allowed_special="all")


@pytest.fixture(scope="module")
def gpt2_files(r50k_ranks, tmp_path_factory):
    return gpt2files.write_gpt2_files(r50k_ranks, tmp_path_factory.mktemp("gpt2"))


def test_gpt2_files_fixture_is_valid(gpt2_files, r50k_ranks, monkeypatch):
    """The files made above are what tiktoken's own reader turns into the r50k ranks."""
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    encoder_json, vocab_bpe = gpt2_files
    assert data_gym_to_mergeable_bpe_ranks(str(vocab_bpe), str(encoder_json)) == r50k_ranks


def test_from_gpt2_files(gpt2_files, r50k_pair):
    _, tk = r50k_pair
    encoder_json, vocab_bpe = gpt2_files
    enc = subword.Encoding.from_gpt2_files(str(encoder_json), str(vocab_bpe))
    _assert_same_as_r50k(enc, tk)
    assert enc.eot_token == 50256
    assert sorted(enc.token_byte_values()) == sorted(tk.token_byte_values())


def test_to_tiktoken(r50k_pair, toy):
    sw, tk = r50k_pair
    conv = sw.to_tiktoken()
    assert isinstance(conv, tiktoken.Encoding)
    for text in SAMPLES:
        assert conv.encode(text, allowed_special="all") == tk.encode(text, allowed_special="all")
    assert conv.n_vocab == tk.n_vocab
    assert conv.special_tokens_set == tk.special_tokens_set
    sw_toy, tk_toy = toy
    conv = sw_toy.to_tiktoken()
    text = "hello abc xyzw <|é|> 🙂!"
    assert conv.encode(text, allowed_special="all") == tk_toy.encode(text, allowed_special="all")


# --------------------------------------------------------------------------------------------
# bad input


def test_wrong_types(r50k_pair):
    sw, _ = r50k_pair
    bad_calls = [
        lambda: sw.encode(123),
        lambda: sw.encode(None),
        lambda: sw.encode(b"bytes"),
        lambda: sw.encode_ordinary(123),
        lambda: sw.encode_ordinary(b"bytes"),
        lambda: sw.encode_batch([1, "a"]),
        lambda: sw.encode_batch(["a", None]),
        lambda: sw.encode_ordinary_batch(["a", 2]),
        lambda: sw.count(123),
        lambda: sw.count_batch(["a", b"b"]),
        lambda: sw.tokens(1.5),
        lambda: sw.decode(["a"]),
        lambda: sw.decode([1.5]),
        lambda: sw.decode_bytes([None]),
        lambda: sw.decode_single_token_bytes("a"),
    ]
    for i, call in enumerate(bad_calls):
        with pytest.raises(TypeError):
            call()
            pytest.fail(f"bad call #{i} did not raise")


def test_batches_of_a_list_subclass_iterate_it_as_python_does(r50k_pair):
    """A plain list is read in place (rust/python/args.rs); a subclass with its own iteration
    gives the texts that iteration gives, as in tiktoken's batch methods."""
    sw, tk = r50k_pair

    class Reversed(list):
        def __iter__(self):
            return reversed(list(super().__iter__()))

    texts = Reversed(["one text", "and another", "a third"])
    want = tk.encode_ordinary_batch(texts)
    assert want == [tk.encode_ordinary(t) for t in reversed(texts)]
    assert sw.encode_ordinary_batch(texts) == want
    assert sw.count_batch(texts) == [len(ids) for ids in want]


def test_encode_batch_of_str(r50k_pair):
    """tiktoken iterates a str passed to encode_batch (one text per character). Either that or
    a TypeError is acceptable; anything else is not."""
    sw, tk = r50k_pair
    try:
        got = sw.encode_batch("ab")
    except TypeError:
        return
    assert got == tk.encode_batch("ab")


def _assert_key_error_names(exc_info, tid):
    assert str(tid) in str(exc_info.value), (
        f"KeyError message {exc_info.value!r} does not name {tid}"
    )


def test_unknown_ids(r50k_pair):
    sw, _ = r50k_pair
    for tid in (sw.n_vocab, sw.n_vocab + 10, 10**9):
        for call in (
            lambda tid=tid: sw.decode([1, tid, 2]),
            lambda tid=tid: sw.decode_bytes([tid]),
            lambda tid=tid: sw.decode_tokens_bytes([tid]),
            lambda tid=tid: sw.decode_with_offsets([tid]),
            lambda tid=tid: sw.decode_batch([[1], [tid]]),
            lambda tid=tid: sw.decode_single_token_bytes(tid),
        ):
            with pytest.raises(KeyError) as info:
                call()
            _assert_key_error_names(info, tid)
        assert sw.is_special_token(tid) is False
    for tid in (-1, 2**32, 2**64):
        with pytest.raises((KeyError, OverflowError, ValueError)):
            sw.decode([tid])


def test_unknown_ids_in_holes(encodings):
    """cl100k has unused ids between its ranks and its specials."""
    sw, tk = encodings("cl100k_base")
    used = set(tk._mergeable_ranks.values()) | set(tk._special_tokens.values())
    holes = [t for t in range(tk.n_vocab) if t not in used]
    assert holes
    for tid in holes[:5]:
        with pytest.raises(KeyError) as info:
            sw.decode([tid])
        _assert_key_error_names(info, tid)
        with pytest.raises(KeyError):
            sw.decode_single_token_bytes(tid)


def test_encode_single_token_unknown(r50k_pair):
    sw, _ = r50k_pair
    for value in ("definitely not one token", b"\xff\xfe\xfd\xfc", "<|endofprompt|>", ""):
        with pytest.raises(KeyError):
            sw.encode_single_token(value)


def test_unknown_encoding_name():
    with pytest.raises(ValueError) as info:
        subword.get_encoding("no_such_encoding")
    msg = str(info.value)
    assert "no_such_encoding" in msg
    for name in ("gpt2", "r50k_base", "cl100k_base", "o200k_base"):
        assert name in msg, f"{name} not listed in {msg!r}"


def test_from_tiktoken_file_missing(tmp_path):
    with pytest.raises(FileNotFoundError):
        subword.Encoding.from_tiktoken_file(str(tmp_path / "absent.tiktoken"), r50k_pat_str)


def _byte_lines(n=256) -> list[str]:
    return [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(n)]


MALFORMED = {
    "bad-base64": "!!!notbase64 257",
    "missing-rank": "YWJj",
    "non-integer-rank": "YWJj x1",
    "negative-rank": "YWJj -5",
    "extra-field": "YWJj 257 9",
    "duplicate-token": "YWI= 257",
    "duplicate-rank": "YWJj 256",
}


@pytest.mark.parametrize("bad", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_tiktoken_file(tmp_path, bad):
    lines = _byte_lines() + ["YWI= 256", bad, "eHl6 300"]  # "ab" 256, then the bad line
    bad_line_no = 258
    assert lines[bad_line_no - 1] == bad
    path = tmp_path / "bad.tiktoken"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError) as info:
        subword.Encoding.from_tiktoken_file(str(path), r50k_pat_str)
    msg = str(info.value)
    assert re.search(rf"(line\W{{0,3}}{bad_line_no}\b|:{bad_line_no}\b)", msg, re.IGNORECASE), (
        f"message does not name line {bad_line_no}: {msg!r}"
    )


# --------------------------------------------------------------------------------------------
# the named-encoding registry, run in a fresh interpreter so that no encoding loaded by other
# tests (get_encoding may memoise) hides the behaviour

_PROBE = textwrap.dedent(
    """
    import json, os, sys
    if os.environ.get("SUBWORD_TEST_IMPL") == "tiktoken":
        sys.path.insert(0, {tests!r})
        import subword_shim as subword
    else:
        import subword
    try:
        enc = subword.get_encoding(sys.argv[1])
        out = {{"ok": enc.encode("hello world")}}
    except BaseException as e:
        mro = [c.__name__ for c in type(e).__mro__]
        out = {{"type": type(e).__name__, "mro": mro, "msg": str(e)}}
    print(json.dumps(out))
    """
)


def _probe(name: str, cache: Path, tmp_path: Path) -> dict:
    env = dict(os.environ)
    env.update(
        SUBWORD_CACHE_DIR=str(cache),
        SUBWORD_OFFLINE="1",
        TIKTOKEN_CACHE_DIR=str(tmp_path / "tiktoken-empty"),
        XDG_CACHE_HOME=str(tmp_path / "xdg-empty"),
    )
    code = _PROBE.format(tests=str(Path(__file__).resolve().parent))
    proc = subprocess.run(
        [sys.executable, "-c", code, name], env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_probe_works_with_good_cache(tmp_path, r50k_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "r50k_base.tiktoken").write_bytes(r50k_path.read_bytes())
    assert _probe("r50k_base", cache, tmp_path) == {"ok": [31373, 995]}


def test_corrupted_cache_file_is_rejected(tmp_path, r50k_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    # Parses to the same ranks, but its sha256 is wrong.
    (cache / "r50k_base.tiktoken").write_bytes(r50k_path.read_bytes() + b"\n")
    out = _probe("r50k_base", cache, tmp_path)
    assert "ValueError" in out.get("mro", []), out
    assert "sha256" in out["msg"].lower(), out


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_offline_and_not_cached(tmp_path, name):
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    out = _probe(name, cache, tmp_path)
    assert {"RuntimeError", "OSError"} & set(out.get("mro", [])), out
    assert f"{name}.tiktoken" in out["msg"], out
    assert str(cache) in out["msg"], out
