"""``tiktoken.load``: reading and writing rank files, with tiktoken's cache for URLs.

A URL is read through tiktoken's cache (``$TIKTOKEN_CACHE_DIR``, ``$DATA_GYM_CACHE_DIR`` or
``<tmp>/data-gym-cache``, a file named by the sha1 of the URL; ``""`` turns the cache off), so
files tiktoken cached are used as they are. Parsing and writing are the core's.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

from .. import _core, _files

__all__ = [
    "check_hash",
    "data_gym_to_mergeable_bpe_ranks",
    "dump_tiktoken_bpe",
    "load_tiktoken_bpe",
    "read_file",
    "read_file_cached",
]


def read_file(blobpath: str) -> bytes:
    """A local file's bytes, or an http(s) URL's (no other schemes: tiktoken's need blobfile)."""
    if "://" not in blobpath:
        with open(blobpath, "rb", buffering=0) as f:
            return f.read()
    if not blobpath.startswith(("http://", "https://")):
        raise ValueError(
            f"cannot read {blobpath!r}: only local paths and http(s) URLs are supported; "
            "copy the file locally and pass its path"
        )
    import urllib.request  # only when downloading

    with urllib.request.urlopen(blobpath, timeout=60) as response:
        return response.read()


def check_hash(data: bytes, expected_hash: str) -> bool:
    return hashlib.sha256(data).hexdigest() == expected_hash


def _cache_dir() -> tuple[str, bool]:
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var], True
    return os.path.join(tempfile.gettempdir(), "data-gym-cache"), False


def read_file_cached(blobpath: str, expected_hash: str | None = None) -> bytes:
    """``read_file`` through tiktoken's cache; a cached file with the wrong sha256 is fetched
    again, and fetched data with the wrong sha256 is a ValueError."""
    cache_dir, user_specified = _cache_dir()
    if cache_dir == "":
        return read_file(blobpath)
    cache_path = os.path.join(cache_dir, hashlib.sha1(blobpath.encode()).hexdigest())
    if os.path.exists(cache_path):
        with open(cache_path, "rb", buffering=0) as f:
            data = f.read()
        if expected_hash is None or check_hash(data, expected_hash):
            return data
    contents = read_file(blobpath)
    if expected_hash and not check_hash(contents, expected_hash):
        raise ValueError(
            f"Hash mismatch for data downloaded from {blobpath} (expected {expected_hash}). "
            f"This may indicate a corrupted download. Please try again."
        )
    try:
        os.makedirs(cache_dir, exist_ok=True)
        _files.write_atomic(cache_path, contents)
    except OSError:
        if user_specified:  # the default cache may be unwritable; a chosen one must work
            raise
    return contents


def load_tiktoken_bpe(tiktoken_bpe_file: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """``{token bytes: rank}`` from a ``.tiktoken`` file or URL."""
    data = read_file_cached(tiktoken_bpe_file, expected_hash)
    return _core.parse_tiktoken_ranks(data, tiktoken_bpe_file)


def dump_tiktoken_bpe(bpe_ranks: dict[bytes, int], tiktoken_bpe_file: str) -> None:
    """Write ``bpe_ranks`` as a ``.tiktoken`` file, by rank, atomically (local paths only)."""
    _files.write_atomic(tiktoken_bpe_file, _core.render_tiktoken_ranks(dict(bpe_ranks)))


def data_gym_to_mergeable_bpe_ranks(
    vocab_bpe_file: str,
    encoder_json_file: str,
    vocab_bpe_hash: str | None = None,
    encoder_json_hash: str | None = None,
    clobber_one_byte_tokens: bool = False,
) -> dict[bytes, int]:
    """Ranks from GPT-2's ``vocab.bpe`` and ``encoder.json`` (paths or URLs), checked against
    each other by the core."""
    if clobber_one_byte_tokens:
        raise ValueError(
            "clobber_one_byte_tokens=True is not supported: the one-byte tokens keep GPT-2's "
            "order; load the files with clobber_one_byte_tokens=False"
        )
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, src, digest in (
            ("vocab.bpe", vocab_bpe_file, vocab_bpe_hash),
            ("encoder.json", encoder_json_file, encoder_json_hash),
        ):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(read_file_cached(src, digest))
            paths.append(path)
        core, _ = _core.CoreBPE.from_gpt2_files(paths[1], paths[0], _core.GPT2_PATTERN)
        return core.mergeable_ranks()
