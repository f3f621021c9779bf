#!/usr/bin/env python3
"""Per-call cost of special-token selections in encode: subword against tiktoken.

    python benches/bench_specials.py                    # ~30 s
    python benches/bench_specials.py --repeat 9 --json benches/results_specials.json
    python benches/bench_specials.py --contenders subword --texts short

Both contenders are built the same way from the cl100k_base ranks (tests/refdata.py, offline):
``Encoding(name, pat_str=CL100K, mergeable_ranks=ranks, special_tokens=...)`` with cl100k's five
specials plus ``<|s0|>`` .. ``<|s4|>`` at ids 100300 .. 100304.  On each text (``short``: "hello
world"; ``paragraph``: ~1 KB of English prose, no special tokens in either) it times

* default: ``encode(text)``;
* partial: ``encode(text, allowed_special={"<|s0|>"})``, the set literal written in the loop (a
  new set object every call, as in user code);
* all: ``encode(text, allowed_special="all")``;
* none: ``encode(text, disallowed_special=())``;
* batch_partial: ``encode_batch([text] * 1000, num_threads=--threads, allowed_special={"<|s0|>"})``.

A timed run is a Python loop of ``calls`` calls (batches: ``calls / 1000`` batches of 1000 texts,
so every mode encodes the same texts); the loop is part of the timing, the same for both.  The
result is µs per call (per text for the batch), best of ``--repeat`` runs after a warm-up, with
the cyclic GC paused.  Each (contender, text) pair runs in its own worker process (``--worker
CONTENDER TEXT serve``) that the parent drives round-robin over JSON lines (benchutil), the order
rotated each repeat, so that drift of the machine hits both alike; the ids of each mode are
compared with tiktoken's by digest.  ``--worker CONTENDER TEXT MODE|both`` runs one pair by hand.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from array import array
from itertools import repeat
from pathlib import Path

from bench_encode import _import_refdata, prepare_refdata
from benchutil import (
    EncodeJob,
    Worker,
    busy_warning,
    error_text,
    flatten,
    fmt,
    ids_array,
    import_subword,
    job_worker,
    module_version,
    pick,
    protocol,
    run_took,
    write_json,
)
from benchutil import run_file as run_file_rows

CONTENDERS = ("subword", "tiktoken")
BASELINE = "tiktoken"
ENCODING = "cl100k_base"
MODES = ("default", "partial", "all", "none", "batch_partial")
BATCH = 1000
PARTIAL = "<|s0|>"

# cl100k_base's own specials, then five more: the selection {"<|s0|>"} is a strict subset.
SPECIALS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
    **{f"<|s{i}|>": 100300 + i for i in range(5)},
}

PARAGRAPH = (
    "The lighthouse keeper kept a notebook of every ship that passed the point, with the hour, "
    "the wind and the state of the sea. Most entries were short: a trawler at dawn, a ferry "
    "running late, two yachts racing each other home before the weather turned. In winter the "
    "gaps grew longer, and he filled them with notes about the lamp, the oil, the gulls that "
    "nested under the gallery, and the cost of paint, which rose every year. When the station "
    "was automated in 1987 the notebooks were boxed and sent to the county archive, where a "
    "student found them thirty years later. She counted 41,206 ships, 312 storms and one "
    "whale, and she noticed that the handwriting changed in March 1962, when the keeper's son "
    "took over without telling anyone. The son wrote faster, abbreviated the names of the "
    "ships, and added a column for the temperature of the water, measured with a bucket and a "
    "thermometer borrowed from the school. His last entry reads: calm, clear, no ships today."
)
TEXTS = {"short": "hello world", "paragraph": PARAGRAPH}
CALLS = {"short": 50_000, "paragraph": 3_000}  # per timed run, before --scale


# --------------------------------------------------------------------------
# Worker: one contender, one text, in its own process
# --------------------------------------------------------------------------


def cl100k_pattern() -> str:
    return import_subword()._core.CL100K_PATTERN  # noqa: SLF001 - the pattern tiktoken uses too


def build(name: str):
    """(version, encoding) of contender `name`, from the same ranks, pattern and specials."""
    ranks = _import_refdata().load_ranks(Path(os.environ["BENCH_RANKS_FILE"]))
    pat = os.environ["BENCH_PAT_STR"]
    if name == "subword":
        mod = import_subword()
    elif name == "tiktoken":
        import tiktoken as mod
    else:
        raise ValueError(f"unknown contender {name!r}")
    enc = mod.Encoding(
        f"{ENCODING}+s", pat_str=pat, mergeable_ranks=ranks, special_tokens=dict(SPECIALS)
    )
    return module_version(mod), enc


def calls_for(key: str, scale: float) -> int:
    """Calls per timed run: a whole number of batches."""
    return max(BATCH, round(CALLS[key] * scale / BATCH) * BATCH)


class Job(EncodeJob):
    def __init__(self, name: str, key: str, scale: float, threads: int):
        super().__init__()
        t0 = time.perf_counter()
        self.version, enc = build(name)
        self.load_s = time.perf_counter() - t0
        self.text = TEXTS[key]
        self.calls = calls_for(key, scale)
        self.nbytes = len(self.text.encode("utf-8")) * self.calls  # per timed run
        n, nb = self.calls, self.calls // BATCH
        f, g, batch = enc.encode, enc.encode_batch, [self.text] * BATCH

        # One function per mode, its arguments written out (no **kwargs in the loop).
        def default(text):
            for _ in repeat(None, n):
                out = f(text)
            return out

        def partial(text):
            for _ in repeat(None, n):
                out = f(text, allowed_special={"<|s0|>"})
            return out

        def all_(text):
            for _ in repeat(None, n):
                out = f(text, allowed_special="all")
            return out

        def none(text):
            for _ in repeat(None, n):
                out = f(text, disallowed_special=())
            return out

        def batch_partial(_text):
            for _ in repeat(None, nb):
                out = g(batch, num_threads=threads, allowed_special={"<|s0|>"})
            return out

        self.fns = {
            "default": default,
            "partial": partial,
            "all": all_,
            "none": none,
            "batch_partial": batch_partial,
        }
        # Warm up: pools, caches (the selection's matcher), page faults.
        for mode in MODES:
            self.fns[mode](self.text)

    def call(self, mode: str):
        return self.fns[mode], self.text

    def ids(self, mode: str, out) -> tuple[array, array | None]:
        return flatten(out) if mode == "batch_partial" else (ids_array(out), None)


def worker_main(argv: list[str], args) -> int:
    name, key = argv[0], argv[1]
    mode = argv[2] if len(argv) > 2 else "serve"
    say = protocol()
    if "BENCH_RANKS_FILE" not in os.environ:  # by hand: what the parent would have set
        for k, v in prepare_refdata(ENCODING).items():
            os.environ.setdefault(k, v)
    os.environ.setdefault("BENCH_PAT_STR", cl100k_pattern())

    if mode == "probe":
        try:
            version, enc = build(name)
            sane = enc.encode("hi <|s0|>", allowed_special={PARTIAL}) == enc.encode("hi ") + [
                SPECIALS[PARTIAL]
            ]
            say({"ok": True, "version": version, "sane": sane})
        except Exception as exc:  # noqa: BLE001
            say({"ok": False, "error": error_text(exc)})
        return 0
    if key not in TEXTS:
        say({"ready": False, "error": f"unknown text {key!r} (know {', '.join(TEXTS)})"})
        return 2

    def hello(job: Job) -> dict:
        return {
            "version": job.version,
            "load_s": job.load_s,
            "bytes": len(job.text.encode("utf-8")),
            "calls": job.calls,
        }

    return job_worker(
        say,
        lambda: Job(name, key, args.scale, args.threads),
        hello,
        mode=mode,
        modes=MODES,
        by_hand=(*MODES, "both"),
        repeat=args.repeat,
    )


# --------------------------------------------------------------------------
# Parent: drive the workers, report
# --------------------------------------------------------------------------


def start_worker(name: str, key: str, mode: str, args, env: dict[str, str]) -> Worker:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        name,
        key,
        mode,
        "--threads",
        str(args.threads),
        "--scale",
        str(args.scale),
    ]
    return Worker(cmd, env, args.timeout)


def first_difference(name: str, a_path: str, b_path: str) -> str:
    a, b = array("I"), array("I")
    with open(a_path, "rb") as f:
        a.frombytes(f.read())
    with open(b_path, "rb") as f:
        b.frombytes(f.read())
    at = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
    return f"first diff at id #{at} ({name} {len(a)} ids, tiktoken {len(b)})"


def per_call(rows: dict[str, dict]) -> None:
    """µs per call (per text for the batch) from the best seconds of each mode."""
    for row in rows.values():
        for mode in MODES:
            secs = row.get(f"{mode}_secs")
            row[f"{mode}_us"] = secs / row["calls"] * 1e6 if secs and row.get("calls") else None


def parent_main(args) -> int:
    names = pick(args.contenders, CONTENDERS, "contender")
    keys = pick(args.texts, TEXTS, "text")
    if names is None or keys is None:
        return 2
    os.environ.update(prepare_refdata(ENCODING))
    env = dict(os.environ)
    env["BENCH_PAT_STR"] = cl100k_pattern()

    info, skipped = {}, {}
    for name in list(names):
        r = start_worker(name, "-", "probe", args, env).probe()
        if r.get("ok") and r.get("sane"):
            info[name] = {"version": r["version"]}
        else:
            skipped[name] = r.get("error") or "encode('hi <|s0|>') gave unexpected ids"
            print(f"skipping {name}: {skipped[name]}", file=sys.stderr)
            names.remove(name)
    if not names:
        print("nothing to run", file=sys.stderr)
        return 1

    t0 = time.perf_counter()
    rows: list[dict] = []
    for key in keys:
        print(f"{key}: {', '.join(names)}", file=sys.stderr)
        got = run_file_rows(
            key,
            names,
            lambda name, key=key: start_worker(name, key, "serve", args, env),
            hello_keys=("version", "load_s", "bytes", "calls"),
            modes=MODES,
            baseline=BASELINE,
            repeat=args.repeat,
            diff=first_difference,
            tmp_prefix="bench_specials_",
        )
        per_call(got)
        rows.extend({"text": key, "file": key, "contender": n, **got[n]} for n in names)
    elapsed = time.perf_counter() - t0
    report(args, names, info, skipped, rows, elapsed)
    if args.json:
        doc = {
            "config": {
                "encoding": ENCODING,
                "specials": SPECIALS,
                "partial": [PARTIAL],
                "texts": {k: TEXTS[k] for k in keys},
                "batch": BATCH,
                "threads": args.threads,
                "repeat": args.repeat,
                "scale": args.scale,
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
                "machine": platform.machine(),
            },
            "contenders": info,
            "skipped": skipped,
            "results": rows,
            "elapsed_s": elapsed,
        }
        write_json(args.json, doc)
    return 0


def report(args, names, info, skipped, rows, elapsed) -> None:
    print(
        f"## special-token selections — {ENCODING} + 5 specials, µs per call, best of "
        f"{args.repeat}, batch of {BATCH} on {args.threads} threads ({os.cpu_count()} cores)\n"
    )
    for name in names:
        print(f"- {name} {info[name]['version']}")
    for name, why in skipped.items():
        print(f"- {name}: skipped ({why})")
    busy_warning(rows)
    print()
    by = {(r["text"], r["contender"]): r for r in rows}
    texts = list(dict.fromkeys(r["text"] for r in rows))
    head = ["text", "call", *(f"{n} µs" for n in names)]
    both = "subword" in names and BASELINE in names
    if both:
        head.append("subword ÷ tiktoken")
    head.append("ids == tiktoken")
    print("| " + " | ".join(head) + " |")
    print("|---|---|" + "---:|" * (len(head) - 3) + "---|")
    labels = {
        "default": "`encode(t)`",
        "partial": '`encode(t, allowed_special={"<\\|s0\\|>"})`',  # \| : a pipe in a table
        "all": '`encode(t, allowed_special="all")`',
        "none": "`encode(t, disallowed_special=())`",
        "batch_partial": f"`encode_batch([t] * {BATCH}, allowed_special={{...}})`, per text",
    }
    for key in texts:
        for mode in MODES:
            size = next((by[key, n]["bytes"] for n in names if by[key, n].get("bytes")), None)
            cells = [f"{key} ({fmt(size, 'd', ' B')})", labels[mode]]
            us = [by[key, n].get(f"{mode}_us") for n in names]
            cells += [fmt(u, ".2f") for u in us]
            if both:
                sw, tk = by[key, "subword"].get(f"{mode}_us"), by[key, BASELINE].get(f"{mode}_us")
                cells.append(fmt(sw / tk if sw and tk else None, ".2f", "×"))
            eq = by.get((key, "subword"), {}).get(f"{mode}_ids_equal")
            cells.append("—" if eq is None else ("yes" if eq else "**NO**"))
            print("| " + " | ".join(cells) + " |")
    print()
    for r in rows:
        if r.get("error"):
            print(f"- {r['contender']} on {r['text']}: {r['error']}")
        for mode in MODES:
            if r.get(f"{mode}_diff"):
                print(f"- ids differ: {r['contender']} {r['text']} {mode}: {r[mode + '_diff']}")
    for key in texts:
        for n in names:
            r = by[key, n]
            d, p = r.get("default_us"), r.get("partial_us")
            if d and p:
                extra = f" (+{p - d:.2f} µs)" if n == "subword" else ""
                print(f"- {n} partial ÷ default on {key}: {p / d:.2f}×{extra}")
    print("\n" + run_took(elapsed))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--contenders", default=",".join(CONTENDERS), help="comma list from: subword, tiktoken"
    )
    p.add_argument("--texts", default=",".join(TEXTS), help="comma list from: short, paragraph")
    p.add_argument("--repeat", type=int, default=5, help="timed runs per mode (default 5)")
    p.add_argument("--threads", type=int, default=2, help="encode_batch threads (default 2)")
    p.add_argument(
        "--scale", type=float, default=1.0, help="multiply the calls per timed run (default 1)"
    )
    p.add_argument("--timeout", type=float, default=300, help="seconds a worker may take a step")
    p.add_argument("--json", metavar="OUT", help="also write every number to this JSON file")
    p.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.worker:
        if len(args.worker) < 2 or len(args.worker) > 3:
            p.error(f"--worker CONTENDER TEXT [serve|{'|'.join(MODES)}|both|probe]")
        return worker_main(args.worker, args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
