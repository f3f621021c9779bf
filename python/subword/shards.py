"""Datasets to token shards: ``encode_files`` (files → ``.npy`` shards on every core) and
``read_shards`` (the shards back as memory-mapped arrays, what a training loop reads).

The job runs in the Rust core (``rust/files/``); this module resolves the tokenizer and the
arguments. Layout of an output folder::

    shard_00000.npy …   the token stream in order, ``shard_tokens`` ids each (the last shorter)
    documents.npy       uint64 offsets: document i is stream[index[i]:index[i + 1]]
    manifest.json       tokenizer, dtype, inputs (size, sha256, documents, tokens), shards;
                        written last, so a folder with a manifest is complete
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import threading
from typing import TYPE_CHECKING, Any, Callable, Iterator, NamedTuple, Sequence

from . import _core

if TYPE_CHECKING:
    import numpy as np

__all__ = ["encode_files", "read_shards", "Shards", "TokenStream"]

#: Tokens per shard unless told: 100 M (200 MB as uint16), the size nanoGPT-style loaders use.
DEFAULT_SHARD_TOKENS = 100_000_000

# What an end-of-text token is called in the vocabularies subword reads (GPT, Llama 3, SP).
_EOT_NAMES = ("<|endoftext|>", "<|end_of_text|>", "</s>", "<eos>")


def _paths(inputs) -> list[str]:
    if isinstance(inputs, (str, bytes, os.PathLike)):
        inputs = [inputs]
    try:
        out = [os.fsdecode(p) for p in inputs]
    except TypeError:
        raise TypeError("inputs must be a path or a list of paths (str or os.PathLike)") from None
    if not out:
        raise ValueError("inputs is empty: give at least one file")
    return out


class _Target(NamedTuple):
    """What the job needs of a tokenizer: its core object and what the manifest says of it."""

    core: Any
    kind: str
    n_vocab: int
    #: token text → id, or None; where an end-of-text token is looked up.
    token_id: Callable[[str], int | None]
    #: sha256 of the tokenizer's file (tokenizer.json, ClassicBPE JSON); None for a named
    #: encoding (its name says which it is) and for a tokenizer that has no file (a pattern
    #: HF's format cannot state, a custom Python component).
    sha256: str | None = None
    name: str = "tokenizer"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _target(tokenizer) -> _Target:
    """One dispatch over the dialects subword has."""
    from . import registry
    from .classic import ClassicBPE
    from .encoding import Encoding
    from .tokenizer import Tokenizer
    from .tokenizers import Tokenizer as HFTokenizer
    from .wordpiece import WordPieceTokenizer

    if isinstance(tokenizer, Encoding):
        sha256 = None
        if not registry.is_registered(tokenizer):
            try:
                sha256 = _sha256(tokenizer.to_hf_json())
            except ValueError:  # a pattern HF's format cannot state: no file to hash
                pass
        return _Target(
            tokenizer._core,
            "tiktoken",
            tokenizer.n_vocab,
            tokenizer._special_tokens.get,
            sha256,
            name=tokenizer.name,
        )
    if isinstance(tokenizer, ClassicBPE):
        return _Target(
            tokenizer._core,
            "classic BPE",
            tokenizer.vocab_size,
            tokenizer.vocab.get,
            _sha256(tokenizer.to_str()),
        )
    if isinstance(tokenizer, WordPieceTokenizer):  # before Tokenizer: it is one
        kind, core = "wordpiece", tokenizer._ready()
    elif isinstance(tokenizer, Tokenizer):
        # Its encode's own pipeline, so the shards hold what `encode(text).ids` gives.
        kind, core = "byte-level BPE", tokenizer._hf()._core()
    elif isinstance(tokenizer, HFTokenizer):
        kind = f"tokenizers ({type(tokenizer.model).__name__})"
        core = tokenizer._core()
    else:
        raise TypeError(
            "tokenizer must be a subword tokenizer (subword.Encoding, subword.Tokenizer, "
            f"subword.tokenizers.Tokenizer, subword.ClassicBPE), not {type(tokenizer).__name__}; "
            "load one with subword.get_encoding(name) or Tokenizer.from_file(path)"
        )
    try:
        sha256 = _sha256(tokenizer.to_str())
    except ValueError:  # a custom (Python) component: no tokenizer.json to hash
        sha256 = None
    return _Target(
        core,
        kind,
        tokenizer.get_vocab_size(True),
        tokenizer.token_to_id,
        sha256,
    )


def _eot_id(append_eot, target: _Target) -> int | None:
    if append_eot is False or append_eot is None:
        return None
    if append_eot is True:
        for name in _EOT_NAMES:
            found = target.token_id(name)
            if found is not None:
                return found
        raise ValueError(
            f"append_eot=True, but this tokenizer has none of the end-of-text tokens "
            f'{", ".join(_EOT_NAMES)}: pass append_eot="<token>" or a token id, or '
            "append_eot=False"
        )
    if isinstance(append_eot, str):
        found = target.token_id(append_eot)
        if found is None:
            raise KeyError(f"append_eot={append_eot!r} is not a token of this tokenizer")
        return found
    if isinstance(append_eot, int):
        if not 0 <= append_eot < target.n_vocab:
            raise ValueError(
                f"append_eot={append_eot} is not a token id (0 … {target.n_vocab - 1})"
            )
        return append_eot
    raise TypeError("append_eot must be True, False, a token (str) or a token id (int)")


def _dtype(dtype: str, n_vocab: int) -> str:
    fits16 = n_vocab <= 1 << 16
    if dtype == "auto":
        return "uint16" if fits16 else "uint32"
    if dtype == "uint16" and not fits16:
        raise ValueError(
            f"dtype='uint16' cannot hold ids of a {n_vocab:,}-token vocabulary: "
            "pass dtype='uint32' or 'auto'"
        )
    if dtype not in ("uint16", "uint32"):
        raise ValueError(f"dtype={dtype!r}: expected 'auto', 'uint16' or 'uint32'")
    return dtype


def encode_files(
    inputs,
    tokenizer,
    out_dir: str | os.PathLike,
    *,
    format: str = "text",
    field: str = "text",
    separator: str | None = None,
    append_eot: bool | str | int = True,
    dtype: str = "auto",
    shard_tokens: int = DEFAULT_SHARD_TOKENS,
    num_threads: int = 0,
    show_progress: bool = True,
    errors: str = "strict",
    allowed_special: Any = frozenset(),
    add_special_tokens: bool = True,
    overwrite: bool = False,
) -> dict:
    """Encode text files into shards of token ids in ``out_dir``; returns the manifest.

    - ``format="text"``: one document per line (its line ending is the boundary), or with
      ``separator`` the text between separators. ``format="jsonl"``: one document per record, its
      string ``field``. gzip and zstd inputs are read as they are (told by their first bytes).
      ``format="parquet"``: one document per row of the string column ``field`` (read with
      pyarrow; nulls are an error).
    - ``append_eot``: after each document, the tokenizer's end-of-text token (True), a given
      token or id, or nothing (False).
    - ``dtype="auto"``: uint16 when every id fits, else uint32.
    - tiktoken-dialect encodings encode special-token text as ordinary text unless it is in
      ``allowed_special`` (a set or "all"), as ``encode_ordinary`` does; HF-dialect tokenizers
      apply their pipeline (``add_special_tokens`` as in ``encode``) and must not truncate or pad.
    - ``errors="replace"`` reads invalid UTF-8 as U+FFFD instead of failing.

    The output is the same bytes for any ``num_threads``; memory stays bounded whatever the input
    size. A folder already holding shards is refused unless ``overwrite``.
    """
    paths = _paths(inputs)
    target = _target(tokenizer)
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors={errors!r}: expected 'strict' or 'replace'")
    if isinstance(shard_tokens, bool) or not isinstance(shard_tokens, int) or shard_tokens < 1:
        raise ValueError(f"shard_tokens must be a positive int, not {shard_tokens!r}")
    if separator is not None and format != "text":
        raise ValueError("separator applies to format='text' only")
    if not isinstance(field, str) or not field:
        raise ValueError("field must name the jsonl field that holds the text")
    args = dict(
        format=format,
        separator=separator,
        field=field,
        errors=errors,
        dtype=_dtype(dtype, target.n_vocab),
        shard_tokens=shard_tokens,
        eot=_eot_id(append_eot, target),
        num_threads=num_threads,
        show_progress=show_progress,
        overwrite=overwrite,
        name=target.name,
        kind=target.kind,
        n_vocab=target.n_vocab,
        tokenizer_sha256=target.sha256,
        batch_bytes=None,
    )
    call = dict(
        allowed_special=allowed_special,
        add_special_tokens=add_special_tokens,
    )
    if format == "parquet":
        _encode_parquet(paths, target.core, os.fspath(out_dir), args, call, field)
    else:
        _core.encode_files(target.core, paths, os.fspath(out_dir), args, call)
    return read_manifest(out_dir)


#: Rows per batch read from a parquet file: a few MB of text for usual documents.
PARQUET_BATCH_ROWS = 8192


def _encode_parquet(paths, core, out_dir, args, call, field) -> None:
    """Parquet through pyarrow: each batch of the column goes to the core as Arrow buffers (no
    Python str per document), encoded there with the GIL released while the next batches are
    read on another thread."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            "format='parquet' reads files with pyarrow: pip install pyarrow"
        ) from None
    for p in paths:  # every input checked before any work
        if not os.path.exists(p):
            raise FileNotFoundError(f"{p}: No such file")
        if not os.path.isfile(p):
            raise IsADirectoryError(f"{p}: is a directory: give the files in it")
    job = _core.ShardJob(core, paths, out_dir, args, call)
    try:
        for k, path in enumerate(paths):
            try:
                pf = pq.ParquetFile(path)
            except pa.ArrowInvalid as e:
                raise ValueError(f"{path}: not a parquet file ({e})") from None
            if field not in pf.schema_arrow.names:
                raise ValueError(
                    f"{path}: no column {field!r} (columns: {', '.join(pf.schema_arrow.names)}); "
                    'pass field="..." naming the column that holds the text'
                )
            with contextlib.closing(_read_ahead(_string_batches(pf, path, field))) as batches:
                for arrays in batches:
                    job.add_arrow(k, *arrays)
            job.end_input(k)
        job.finish()
    except BaseException:
        job.abandon()
        raise


def _string_batches(pf, path, field):
    """The column ``field`` of a parquet file, batch by batch, as ``ShardJob.add_arrow`` takes
    it: (offsets, data, offset, length, large)."""
    import pyarrow as pa

    row = 0
    for batch in pf.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[field]):
        col = batch.column(0)
        large = pa.types.is_large_string(col.type)
        if not (large or pa.types.is_string(col.type)):
            raise ValueError(f"{path}: column {field!r} is {col.type}, not a string column")
        if col.null_count:
            first = row + col.is_null().to_pylist().index(True)
            raise ValueError(
                f"{path}: row {first} of column {field!r} is null; drop or fill the nulls "
                "first (e.g. with pyarrow.compute.fill_null)"
            )
        _, offsets, data = col.buffers()
        data = b"" if data is None else data.to_pybytes()
        yield offsets.to_pybytes(), data, col.offset, len(col), large
        row += len(col)


#: Batches read ahead of the one being encoded (each about ``PARQUET_BATCH_ROWS`` rows).
READ_AHEAD = 2


def _read_ahead(items):
    """``items``, produced on a thread ``READ_AHEAD`` ahead, so that reading the next parquet
    batch (pyarrow decodes with the GIL released) overlaps encoding this one (the core encodes
    with the GIL released too). The producer's error is raised here, in order; leaving early
    stops the producer and waits for it, so no thread outlives the job."""
    ahead: queue.Queue = queue.Queue(maxsize=READ_AHEAD)
    stop = threading.Event()
    end = object()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.05)
                return True
            except queue.Full:
                pass
        return False

    def produce():
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as e:  # handed to the consumer, raised there
            put((None, e))
            return
        put((end, None))

    producer = threading.Thread(target=produce, name="subword-read-ahead", daemon=True)
    producer.start()
    try:
        while True:
            item, error = ahead.get()
            if error is not None:
                raise error
            if item is end:
                return
            yield item
    finally:
        stop.set()
        producer.join()


def read_manifest(out_dir: str | os.PathLike) -> dict:
    """The manifest of a complete shard folder (FileNotFoundError if the job did not finish)."""
    path = os.path.join(os.fspath(out_dir), "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path}: no manifest, so no complete shards here (run encode_files or "
            "`subword tokenize` into this folder)"
        ) from None
    if manifest.get("format") != "subword-shards":
        raise ValueError(f"{path}: not a subword shard manifest")
    return manifest


class TokenStream(Sequence):
    """The token stream of all shards as one sequence of ids, each shard memory-mapped.

    ``stream[i]`` is an id; ``stream[a:b]`` a numpy array (a view into the shard when the range
    lies in one, else a copy of the joined parts); ``numpy.asarray(stream)`` joins them all.
    """

    def __init__(self, shards: list[np.ndarray], dtype):
        import numpy as np

        self.shards = shards
        self.dtype = np.dtype(dtype)
        self._starts = np.cumsum([0] + [len(s) for s in shards], dtype=np.int64)

    def __len__(self) -> int:
        return int(self._starts[-1])

    def __getitem__(self, key):
        import numpy as np

        n = len(self)
        if isinstance(key, slice):
            start, stop, step = key.indices(n)
            if step != 1:
                return self[start:stop][::step]
            if stop <= start:
                return np.empty(0, self.dtype)
            k = int(np.searchsorted(self._starts, start, side="right")) - 1
            base = int(self._starts[k])
            if stop <= self._starts[k + 1]:
                return self.shards[k][start - base : stop - base]
            parts, at = [], start
            while at < stop:
                k = int(np.searchsorted(self._starts, at, side="right")) - 1
                base, end = int(self._starts[k]), int(self._starts[k + 1])
                parts.append(self.shards[k][at - base : min(stop, end) - base])
                at = min(stop, end)
            return np.concatenate(parts)
        i = int(key)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"token index {key} out of range for {n} tokens")
        k = int(np.searchsorted(self._starts, i, side="right")) - 1
        return self.shards[k][i - int(self._starts[k])]

    def __iter__(self) -> Iterator[int]:
        for s in self.shards:
            yield from s

    def __array__(self, dtype=None, copy=None):
        import numpy as np

        joined = np.concatenate(self.shards) if self.shards else np.empty(0, self.dtype)
        return joined if dtype is None else joined.astype(dtype)

    def __repr__(self) -> str:
        return f"TokenStream({len(self):,} tokens in {len(self.shards)} shards, {self.dtype})"


class Shards(NamedTuple):
    """What ``read_shards`` returns: ``tokens, index = read_shards(folder)``."""

    tokens: TokenStream
    #: uint64 offsets, one more than there are documents.
    index: np.ndarray

    def document(self, i: int) -> np.ndarray:
        """The ids of document ``i`` (its end-of-text token included, if one was appended)."""
        n = len(self.index) - 1
        if not -n <= i < n:
            raise IndexError(f"document {i} out of range for {n} documents")
        i %= n
        return self.tokens[int(self.index[i]) : int(self.index[i + 1])]

    @property
    def n_documents(self) -> int:
        return len(self.index) - 1


def read_shards(out_dir: str | os.PathLike) -> Shards:
    """The shards ``encode_files`` wrote, memory-mapped: ``(tokens, index)``."""
    import numpy as np

    manifest = read_manifest(out_dir)
    folder = os.fspath(out_dir)
    shards = []
    for s in manifest["shards"]:
        arr = np.load(os.path.join(folder, s["file"]), mmap_mode="r")
        if len(arr) != s["tokens"] or arr.dtype != np.dtype(manifest["dtype"]):
            raise ValueError(
                f"{s['file']}: {len(arr)} {arr.dtype} ids, but the manifest says "
                f"{s['tokens']} {manifest['dtype']}: the folder was changed after it was written"
            )
        shards.append(arr)
    index = np.load(os.path.join(folder, manifest["index"]), mmap_mode="r")
    if len(index) != manifest["documents"] + 1:
        raise ValueError(f"{manifest['index']}: does not match the manifest's document count")
    return Shards(TokenStream(shards, manifest["dtype"]), index)
