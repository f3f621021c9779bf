"""Issue 13: ``encode_files`` / ``read_shards`` against the oracle (tiktoken, or the tokenizer's
own ``encode``) document by document, and the job's promises: formats, compressed inputs,
determinism across threads and shard sizes, the manifest, atomic output and clear errors."""

from __future__ import annotations

import gzip
import hashlib
import json
import os

import numpy as np
import pytest
import refdata
import small_tokenizers
import subword
from hypothesis import given, settings
from hypothesis import strategies as st
from subword import tokenizers as hf

LINES = [
    "The quick brown fox jumps over the lazy dog.",
    "",
    "안녕하세요, 세계! 한국어 문장도 똑같이 중요합니다.",
    "Привет, мир — 你好，世界 — Grüße",
    "   leading spaces and trailing   ",
    "numbers 1234567 and code: def f(x): return x**2",
    "emoji 🎉🎉 and <|endoftext|> as plain text",
]
TEXT = "\n".join(LINES * 40) + "\n"


def stream_and_index(folder):
    tokens, index = subword.read_shards(folder)
    return np.asarray(tokens).tolist(), np.asarray(index).tolist()


def expected(docs, encode, eot):
    """The stream and document index the oracle gives: each document's ids, then eot."""
    stream, index = [], [0]
    for d in docs:
        stream.extend(encode(d))
        if eot is not None:
            stream.append(eot)
        index.append(len(stream))
    return stream, index


@pytest.fixture
def text_file(tmp_path):
    p = tmp_path / "corpus.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_lines_equal_tiktoken_per_line(name, encodings, text_file, tmp_path):
    sw, tk = encodings(name)
    manifest = subword.encode_files(text_file, sw, tmp_path / "out", show_progress=False)
    want = expected(TEXT.splitlines(), tk.encode_ordinary, tk.eot_token)
    assert stream_and_index(tmp_path / "out") == want
    assert manifest["dtype"] == ("uint16" if tk.n_vocab <= 65536 else "uint32")
    assert manifest["documents"] == len(TEXT.splitlines())


def test_every_corpus_file_equals_tiktoken(encodings, corpora, tmp_path):
    # The real corpora, cut to their first 400 KB (whole lines) to keep the suite quick.
    sw, tk = encodings("cl100k_base")
    for path in corpora:
        head = path.read_bytes()[:400_000].decode("utf-8", "ignore")
        head = head[: head.rfind("\n") + 1]
        f = tmp_path / path.name
        f.write_text(head, encoding="utf-8", newline="")
        out = tmp_path / f"out_{path.stem}"
        subword.encode_files(f, sw, out, show_progress=False, num_threads=2)
        want = expected(head.split("\n")[:-1], tk.encode_ordinary, tk.eot_token)
        got = stream_and_index(out)
        assert got == want, path.name


def test_separator_and_jsonl_and_gzip_are_the_same_documents(encodings, tmp_path):
    sw, tk = encodings("r50k_base")
    docs = ["first doc\nwith two lines", "", "second 문서", "third\r\nCRLF kept inside"]
    sep = "\n<|doc|>\n"
    (tmp_path / "a.txt").write_text(sep.join(docs) + sep, encoding="utf-8", newline="")
    records = [json.dumps({"id": i, "text": d, "meta": {"text": "no"}}) for i, d in enumerate(docs)]
    (tmp_path / "a.jsonl").write_text("\n".join(records) + "\n", encoding="utf-8")
    with gzip.open(tmp_path / "a.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(records) + "\n")
    want = expected(docs, tk.encode_ordinary, tk.eot_token)
    runs = {
        "sep": dict(inputs=tmp_path / "a.txt", separator=sep),
        "jsonl": dict(inputs=tmp_path / "a.jsonl", format="jsonl"),
        "gz": dict(inputs=tmp_path / "a.jsonl.gz", format="jsonl"),
    }
    for name, kw in runs.items():
        subword.encode_files(tokenizer=sw, out_dir=tmp_path / name, show_progress=False, **kw)
        assert stream_and_index(tmp_path / name) == want, name


# Each example writes and reads a shard directory: a tenth of the profile's examples.
@settings(max_examples=max(30, refdata.hypothesis_examples() // 10))
@given(
    docs=st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=30), max_size=12),
    shard_tokens=st.integers(1, 40),
)
def test_hypothesis_jsonl_any_text_any_shard_size(encodings, tmp_path_factory, docs, shard_tokens):
    sw, tk = encodings("cl100k_base")
    d = tmp_path_factory.mktemp("h")
    (d / "in.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs))
    m = subword.encode_files(
        d / "in.jsonl",
        sw,
        d / "out",
        format="jsonl",
        shard_tokens=shard_tokens,
        show_progress=False,
    )
    assert stream_and_index(d / "out") == expected(docs, tk.encode_ordinary, tk.eot_token)
    assert all(s["tokens"] == shard_tokens for s in m["shards"][:-1])


def test_output_bytes_do_not_depend_on_threads(encodings, text_file, tmp_path):
    sw, _ = encodings("o200k_base")
    for n in (1, 2):
        subword.encode_files(
            text_file,
            sw,
            tmp_path / f"t{n}",
            num_threads=n,
            shard_tokens=500,
            show_progress=False,
        )
    files = sorted(os.listdir(tmp_path / "t1"))
    assert files == sorted(os.listdir(tmp_path / "t2"))
    for name in files:
        if name != "manifest.json":
            assert (tmp_path / "t1" / name).read_bytes() == (tmp_path / "t2" / name).read_bytes()


def test_manifest_describes_inputs_and_shards(encodings, text_file, tmp_path):
    sw, _ = encodings("r50k_base")
    second = tmp_path / "second.txt"
    second.write_text("just one line", encoding="utf-8")
    m = subword.encode_files(
        [text_file, second], sw, tmp_path / "out", shard_tokens=1000, show_progress=False
    )
    assert m == json.loads((tmp_path / "out" / "manifest.json").read_text())
    for entry, path in zip(m["inputs"], [text_file, second]):
        raw = path.read_bytes()
        assert entry["bytes"] == len(raw)
        assert entry["sha256"] == hashlib.sha256(raw).hexdigest()
    assert m["inputs"][1]["documents"] == 1
    assert (
        sum(i["tokens"] for i in m["inputs"])
        == m["tokens"]
        == sum(s["tokens"] for s in m["shards"])
    )
    assert m["tokenizer"] == {
        "name": "r50k_base",
        "kind": "tiktoken",
        "n_vocab": 50257,
        "sha256": None,
    }
    assert m["eot"] == 50256
    tokens, index = subword.read_shards(tmp_path / "out")
    assert len(tokens) == m["tokens"] and len(index) == m["documents"] + 1
    # A document spanning two shards reads back whole.
    shards = subword.shards.Shards(tokens, index)
    assert sum(len(shards.document(i)) for i in range(shards.n_documents)) == m["tokens"]


def test_append_eot_choices(encodings, text_file, tmp_path):
    sw, tk = encodings("r50k_base")
    docs = TEXT.splitlines()
    for k, (arg, eot) in enumerate([(False, None), ("<|endoftext|>", 50256), (7, 7)]):
        subword.encode_files(text_file, sw, tmp_path / str(k), append_eot=arg, show_progress=False)
        assert stream_and_index(tmp_path / str(k)) == expected(docs, tk.encode_ordinary, eot)


def test_allowed_special_encodes_specials_as_tiktoken_does(encodings, text_file, tmp_path):
    sw, tk = encodings("r50k_base")
    subword.encode_files(text_file, sw, tmp_path / "o", allowed_special="all", show_progress=False)
    want = expected(TEXT.splitlines(), lambda t: tk.encode(t, allowed_special="all"), tk.eot_token)
    assert stream_and_index(tmp_path / "o") == want


DOCS = [line for line in LINES if line] * 5


def _wordpiece():
    return small_tokenizers.wordpiece(DOCS, 300)


def _hf_bpe():
    tok = small_tokenizers.hf_bpe(DOCS, 200, special_tokens=["[UNK]", "</s>"])
    tok.post_processor = hf.processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", tok.token_to_id("</s>"))]
    )
    return tok


def _byte_level(prefix):
    enc = subword.train_from_iterator(
        DOCS, vocab_size=400, special_tokens=["<|endoftext|>"], show_progress=False
    )
    return subword.Tokenizer.from_encoding(enc, add_prefix_space=prefix)


@pytest.mark.parametrize(
    "make,eot",
    [
        (_wordpiece, "[SEP]"),
        (_hf_bpe, True),  # finds "</s>"
        (lambda: _byte_level(False), True),
        (lambda: _byte_level(True), True),
    ],
    ids=["wordpiece", "tokenizers-bpe", "byte-level", "byte-level-prefix-space"],
)
def test_hf_dialect_tokenizers_equal_their_own_encode(make, eot, tmp_path):
    tok = make()
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    subword.encode_files(
        tmp_path / "in.txt", tok, tmp_path / "out", append_eot=eot, show_progress=False
    )
    eot_id = tok.token_to_id(
        eot
        if isinstance(eot, str)
        else next(t for t in ("<|endoftext|>", "</s>") if tok.token_to_id(t) is not None)
    )
    want = expected(TEXT.splitlines(), lambda t: tok.encode(t).ids, eot_id)
    assert stream_and_index(tmp_path / "out") == want
    # The manifest identifies the tokenizer by its saved form.
    manifest = subword.shards.read_manifest(tmp_path / "out")
    assert manifest["tokenizer"]["sha256"] == hashlib.sha256(tok.to_str().encode()).hexdigest()


def test_classic_bpe_equals_its_own_encode(tmp_path):
    model = subword.ClassicBPE.train(DOCS, 120)
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    with pytest.raises(ValueError, match="append_eot=False"):
        subword.encode_files(tmp_path / "in.txt", model, tmp_path / "x", show_progress=False)
    m = subword.encode_files(
        tmp_path / "in.txt", model, tmp_path / "out", append_eot="<unk>", show_progress=False
    )
    want = expected(TEXT.splitlines(), model.encode, model.vocab["<unk>"])
    assert stream_and_index(tmp_path / "out") == want
    # Identified by the file ClassicBPE.save writes.
    model.save(tmp_path / "model.json")
    digest = hashlib.sha256((tmp_path / "model.json").read_bytes()).hexdigest()
    assert m["tokenizer"] == {
        "name": "tokenizer",
        "kind": "classic BPE",
        "n_vocab": model.vocab_size,
        "sha256": digest,
    }


def test_hf_add_special_tokens_false_and_truncation_refused(tmp_path):
    tok = _hf_bpe()
    (tmp_path / "in.txt").write_text(TEXT, encoding="utf-8")
    subword.encode_files(
        tmp_path / "in.txt",
        tok,
        tmp_path / "a",
        append_eot=False,
        add_special_tokens=False,
        show_progress=False,
    )
    want = expected(TEXT.splitlines(), lambda t: tok.encode(t, add_special_tokens=False).ids, None)
    assert stream_and_index(tmp_path / "a") == want
    tok.enable_truncation(8)
    with pytest.raises(ValueError, match="no_truncation"):
        subword.encode_files(tmp_path / "in.txt", tok, tmp_path / "b", show_progress=False)


def test_invalid_utf8_is_an_error_naming_the_line_or_replaced(encodings, tmp_path):
    sw, tk = encodings("r50k_base")
    raw = b"good line\nbad \xff byte\nafter\n"
    (tmp_path / "bad.txt").write_bytes(raw)
    with pytest.raises(ValueError, match=r"bad\.txt: line 2 is not UTF-8.*errors=\"replace\""):
        subword.encode_files(tmp_path / "bad.txt", sw, tmp_path / "out", show_progress=False)
    # The failed job leaves nothing that looks complete.
    assert not (tmp_path / "out" / "manifest.json").exists()
    assert [n for n in os.listdir(tmp_path / "out") if n.endswith(".npy")] == []
    subword.encode_files(
        tmp_path / "bad.txt", sw, tmp_path / "out", errors="replace", show_progress=False
    )
    docs = raw.decode("utf-8", "replace").splitlines()
    assert stream_and_index(tmp_path / "out") == expected(docs, tk.encode_ordinary, tk.eot_token)


def test_clear_errors(encodings, text_file, tmp_path):
    sw, _ = encodings("o200k_base")
    out = tmp_path / "out"
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        subword.encode_files(tmp_path / "missing.txt", sw, out, show_progress=False)
    with pytest.raises(ValueError, match="uint16"):
        subword.encode_files(text_file, sw, out, dtype="uint16", show_progress=False)
    with pytest.raises(TypeError, match="subword tokenizer"):
        subword.encode_files(text_file, object(), out, show_progress=False)
    with pytest.raises(ValueError, match="inputs is empty"):
        subword.encode_files([], sw, out, show_progress=False)
    with pytest.raises(ValueError, match="shard_tokens"):
        subword.encode_files(text_file, sw, out, shard_tokens=0, show_progress=False)
    with pytest.raises(ValueError, match="format="):
        subword.encode_files(text_file, sw, out, format="csv", show_progress=False)
    with pytest.raises(KeyError, match="<nope>"):
        subword.encode_files(text_file, sw, out, append_eot="<nope>", show_progress=False)
    wp = _wordpiece()
    with pytest.raises(ValueError, match="append_eot=False"):
        subword.encode_files(text_file, wp, out, show_progress=False)
    (tmp_path / "r.jsonl").write_text('{"text": "a"}\n{"body": "b"}\n')
    with pytest.raises(ValueError, match=r"r\.jsonl: record 2.*no field \"text\""):
        subword.encode_files(tmp_path / "r.jsonl", sw, out, format="jsonl", show_progress=False)
    with pytest.raises(IsADirectoryError):
        subword.encode_files(tmp_path, sw, out, show_progress=False)
    with pytest.raises(FileNotFoundError, match="no manifest"):
        subword.read_shards(tmp_path / "nothing")


def test_existing_shards_are_refused_unless_overwrite(encodings, text_file, tmp_path):
    sw, tk = encodings("r50k_base")
    out = tmp_path / "out"
    subword.encode_files(text_file, sw, out, shard_tokens=100, show_progress=False)
    many = len(os.listdir(out))
    with pytest.raises(FileExistsError, match="overwrite=True"):
        subword.encode_files(text_file, sw, out, show_progress=False)
    (tmp_path / "small.txt").write_text("tiny\n")
    subword.encode_files(tmp_path / "small.txt", sw, out, overwrite=True, show_progress=False)
    # No stale shard of the bigger run is left behind.
    assert len(os.listdir(out)) == 3 < many
    assert stream_and_index(out) == expected(["tiny"], tk.encode_ordinary, tk.eot_token)


def test_token_stream_slices_across_shards(encodings, text_file, tmp_path):
    sw, _ = encodings("r50k_base")
    subword.encode_files(text_file, sw, tmp_path / "small", shard_tokens=37, show_progress=False)
    subword.encode_files(text_file, sw, tmp_path / "big", show_progress=False)
    small, _ = subword.read_shards(tmp_path / "small")
    big, _ = subword.read_shards(tmp_path / "big")
    whole = np.asarray(big)
    assert len(small.shards) > 10 and len(big.shards) == 1
    for a, b in [(0, 37), (30, 80), (5, 500), (-50, None), (100, 90)]:
        assert small[a:b].tolist() == whole[a:b].tolist()
    assert small[::7].tolist() == whole[::7].tolist()
    assert [small[i] for i in (0, 36, 37, -1)] == [whole[i] for i in (0, 36, 37, -1)]
    with pytest.raises(IndexError):
        small[len(whole)]


# ----- parquet (through pyarrow) -----


def _parquet(path, docs, large=False, row_group_size=5, **extra):
    import pyarrow as pa
    import pyarrow.parquet as pq

    kind = pa.large_string() if large else pa.string()
    table = pa.table({"id": list(range(len(docs))), "text": pa.array(docs, kind), **extra})
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


@pytest.mark.parametrize("large", [False, True])
def test_parquet_rows_equal_tiktoken(encodings, tmp_path, monkeypatch, large):
    sw, tk = encodings("o200k_base")
    docs = TEXT.splitlines()[:60]
    path = _parquet(tmp_path / "a.parquet", docs, large=large)
    # Batches smaller than row groups, so arrays arrive sliced (a non-zero offset).
    monkeypatch.setattr(subword.shards, "PARQUET_BATCH_ROWS", 3)
    m = subword.encode_files(
        [path, path], sw, tmp_path / "out", format="parquet", show_progress=False
    )
    want = expected(docs + docs, tk.encode_ordinary, tk.eot_token)
    assert stream_and_index(tmp_path / "out") == want
    assert m["options"]["format"] == "parquet" and m["options"]["field"] == "text"
    raw = path.read_bytes()
    assert m["inputs"][0]["sha256"] == hashlib.sha256(raw).hexdigest()
    assert [i["documents"] for i in m["inputs"]] == [len(docs), len(docs)]


def test_parquet_errors_leave_nothing(encodings, tmp_path):
    import pyarrow as pa

    sw, _ = encodings("r50k_base")
    out = tmp_path / "out"
    good = _parquet(tmp_path / "good.parquet", ["a", "b", "c"] * 10)
    nulls = _parquet(tmp_path / "nulls.parquet", ["a", None, "c"])
    numbers = tmp_path / "numbers.parquet"
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"text": [1, 2, 3]}), numbers)
    (tmp_path / "fake.parquet").write_text("not parquet")
    cases = [
        ([good, nulls], ValueError, r"nulls\.parquet: row 1 of column 'text' is null"),
        ([numbers], ValueError, "is int64, not a string column"),
        ([tmp_path / "fake.parquet"], ValueError, "not a parquet file"),
        ([tmp_path / "none.parquet"], FileNotFoundError, "none.parquet"),
    ]
    for inputs, error, says in cases:
        with pytest.raises(error, match=says):
            subword.encode_files(
                inputs,
                sw,
                out,
                format="parquet",
                show_progress=False,
                shard_tokens=4,
                overwrite=True,
            )
        leftovers = os.listdir(out) if out.exists() else []
        assert leftovers == [], (inputs, leftovers)
    with pytest.raises(ValueError, match=r"no column 'body' \(columns: id, text\)"):
        subword.encode_files(good, sw, out, format="parquet", field="body", show_progress=False)


def _read_ahead_threads():
    import threading

    return [t for t in threading.enumerate() if t.name == "subword-read-ahead"]


def test_parquet_read_ahead_keeps_order_raises_in_order_and_leaves_no_thread(
    encodings, tmp_path, monkeypatch
):
    import contextlib

    read_ahead = subword.shards._read_ahead
    assert list(read_ahead(iter(range(1000)))) == list(range(1000))

    def failing():
        yield from range(5)
        raise KeyError("from the producer")

    got = []
    with pytest.raises(KeyError, match="from the producer"):
        for x in read_ahead(failing()):
            got.append(x)
    assert got == list(range(5))
    # A consumer leaving early (an encode error) stops a producer that has more to give.
    with contextlib.closing(read_ahead(iter(range(10**9)))) as items:
        assert next(items) == 0
    assert _read_ahead_threads() == []
    # Through encode_files: a null in a later batch fails the job, after earlier batches were
    # encoded, and no reader thread is left.
    sw, _ = encodings("r50k_base")
    monkeypatch.setattr(subword.shards, "PARQUET_BATCH_ROWS", 4)
    path = _parquet(tmp_path / "late.parquet", ["a b"] * 40 + [None] + ["c"] * 9)
    with pytest.raises(ValueError, match="row 40 of column 'text' is null"):
        subword.encode_files(path, sw, tmp_path / "out", format="parquet", show_progress=False)
    assert _read_ahead_threads() == []
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []
