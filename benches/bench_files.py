#!/usr/bin/env python3
"""Files → token ids on disk: ``subword.encode_files`` against gigatoken's file encoder and
against tiktoken's ``encode_ordinary_batch`` + ``numpy.save``.

    python benches/bench_files.py                       # every corpus file, text and jsonl,
                                                        # cl100k and o200k, 1 and 2 threads, 1 GB
    python benches/bench_files.py --files en_docs,ko --encodings cl100k_base --big-gb 0
    python benches/bench_files.py --json benches/results_files.json

Every corpus file (``../shared/corpora/*.txt``) is read as one document per line, as a text
file and as a jsonl file made from it (``{"text": line}`` per line, in ``.cache/bench_files``).
Each contender, thread count and encoding runs in a fresh process of this script (``--worker``),
which loads the tokenizer, warms it up on the file's first 64 KB, then times one job:

* subword: ``encode_files(path, enc, out, format=…, append_eot=False)`` — reads, encodes and
  writes the ``.npy`` shards, index and manifest (everything on disk, fsynced);
* gigatoken: ``Tokenizer.from_tiktoken(ranks).encode_files(TextFileSource(path, separator="\\n")
  | JsonlFileSource(path, field="text"), parallel=threads > 1)`` — ids in memory (an awkward
  array), nothing written;
* tiktoken: read the file, split lines (``json.loads`` each for jsonl), ``encode_ordinary_batch
  (num_threads=threads)``, ``numpy.save`` of the joined ids.

MB/s counts the input file's bytes (10^6). Ids are compared by a digest of the whole stream of
ids (documents joined, no separators) against tiktoken's. Peak RSS is the worker's VmHWM, so it
includes the tokenizer. ``--big-gb`` makes a generated text input of that size (corpus lines
repeated, in ``.cache/bench_files``) and runs subword alone on it with every core, for memory.
Runs alternate between contenders; the best of ``--repeat`` is kept.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

from benchutil import REPO, busy_warning, other_busy_cores, peak_rss, run_once, run_took, write_json

CORPORA = REPO.parent / "shared" / "corpora"
CACHE = REPO / ".cache" / "bench_files"
REFDATA = REPO / ".cache" / "refdata"
CONTENDERS = ["subword", "gigatoken", "tiktoken"]
MB = 1e6


def lines_of(text: str) -> list[str]:
    """The documents of a text file read one per line: no empty last one after a final newline
    (and a last line without one is kept)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def jsonl_of(path: Path) -> Path:
    """The jsonl version of a text file: one record per line, made once."""
    out = CACHE / f"{path.stem}.jsonl"
    if not out.exists() or out.stat().st_mtime < path.stat().st_mtime:
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        with open(path, encoding="utf-8", newline="") as f, open(tmp, "w", encoding="utf-8") as g:
            for line in lines_of(f.read()):
                g.write(json.dumps({"text": line}, ensure_ascii=False) + "\n")
        os.replace(tmp, out)
    return out


def big_input(gb: float) -> Path:
    """A generated text file of about `gb` GB: the corpora's lines repeated."""
    out = CACHE / f"big_{gb:g}gb.txt"
    want = int(gb * 1e9)
    if out.exists() and out.stat().st_size >= want:
        return out
    CACHE.mkdir(parents=True, exist_ok=True)
    block = "".join(p.read_text(encoding="utf-8") for p in sorted(CORPORA.glob("*.txt")))
    block = block.encode("utf-8")
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as g:
        written = 0
        while written < want:
            g.write(block)
            written += len(block)
    os.replace(tmp, out)
    return out


def digest(ids) -> str:
    import numpy as np

    return hashlib.sha256(np.asarray(ids, dtype="<u4").tobytes()).hexdigest()[:16]


def load(contender: str, encoding: str):
    if contender == "subword":
        import subword

        return subword.get_encoding(encoding)
    if contender == "gigatoken":
        import gigatoken

        return gigatoken.Tokenizer.from_tiktoken(str(REFDATA / f"{encoding}.tiktoken"))
    import tiktoken

    return tiktoken.get_encoding(encoding)


def job(contender: str, tok, path: Path, fmt: str, threads: int, out: Path):
    """One run; returns a function giving the ids (for the digest, not timed)."""
    import numpy as np

    if contender == "subword":
        import subword

        subword.encode_files(
            path,
            tok,
            out,
            format=fmt,
            append_eot=False,
            num_threads=threads,
            show_progress=False,
            overwrite=True,
        )
        return lambda: np.asarray(subword.read_shards(out).tokens)
    if contender == "gigatoken":
        import awkward as ak
        import gigatoken

        src = (
            gigatoken.JsonlFileSource([str(path)], field="text")
            if fmt == "jsonl"
            else gigatoken.TextFileSource([str(path)], separator="\n")
        )
        arr = tok.encode_files(src, parallel=threads > 1)
        return lambda: ak.to_numpy(ak.flatten(arr))
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    docs = lines_of(text)
    if fmt == "jsonl":
        docs = [json.loads(d)["text"] for d in docs]
    batch = tok.encode_ordinary_batch(docs, num_threads=threads)
    ids = np.fromiter((i for d in batch for i in d), dtype=np.uint32)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "ids.npy", ids)
    return lambda: ids


def worker(argv: list[str]) -> int:
    contender, path, fmt, encoding, threads, out = argv
    path, threads, out = Path(path), int(threads), Path(out)
    tok = load(contender, encoding)
    # Warm up on the first 64 KB (whole lines), so loading costs are not timed.
    CACHE.mkdir(parents=True, exist_ok=True)
    warm = CACHE / f"warm_{os.getpid()}{path.suffix}"
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    warm.write_bytes(head[: head.rfind(b"\n") + 1])
    try:
        job(contender, tok, warm, fmt, threads, out)
    finally:
        warm.unlink()
    r0 = os.times()
    t0 = time.perf_counter()
    ids = job(contender, tok, path, fmt, threads, out)
    secs = time.perf_counter() - t0
    r1 = os.times()
    cpu = (r1.user - r0.user) + (r1.system - r0.system)
    peak = peak_rss()["peak_mb"]
    print(
        json.dumps(
            {
                "ok": True,
                "secs": secs,
                "mbps": path.stat().st_size / MB / secs,
                "cores": cpu / secs,
                "peak_mb": peak,
                "digest": digest(ids()),
                "bytes": path.stat().st_size,
            }
        )
    )
    return 0


def run(contender, path, fmt, encoding, threads, env, timeout=1800) -> dict:
    out = CACHE / f"out_{contender}"
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        contender,
        str(path),
        fmt,
        encoding,
        str(threads),
        str(out),
    ]
    busy = other_busy_cores(0.3)
    r = run_once(cmd, env, timeout)
    r["others_busy_cores"] = busy
    return r


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--worker", nargs=6, help=argparse.SUPPRESS)
    p.add_argument("--files", help="corpus file stems, comma-separated (default: all)")
    p.add_argument("--encodings", default="cl100k_base,o200k_base")
    p.add_argument("--formats", default="text,jsonl")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--contenders", default=",".join(CONTENDERS))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--big-gb", type=float, default=1.0, help="0: no big-input memory run")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    if args.worker:
        return worker(args.worker)

    sys.path.insert(0, str(REPO / "tests"))
    import refdata

    env = dict(os.environ)
    env["TIKTOKEN_CACHE_DIR"] = str(refdata.tiktoken_cache_dir())
    env["SUBWORD_CACHE_DIR"] = str(refdata.cache_dir())
    encodings = args.encodings.split(",")
    for e in encodings:
        refdata.ensure(e)
    files = sorted(CORPORA.glob("*.txt"))
    if args.files:
        files = [f for f in files if f.stem in args.files.split(",")]
    threads = [int(t) for t in args.threads.split(",")]
    contenders = args.contenders.split(",")
    started = time.perf_counter()
    rows = []
    for f in files:
        for fmt in args.formats.split(","):
            path = jsonl_of(f) if fmt == "jsonl" else f
            for enc in encodings:
                for t in threads:
                    best: dict[str, dict] = {}
                    for rep in range(args.repeat):
                        k = rep % len(contenders)
                        for c in contenders[k:] + contenders[:k]:
                            r = run(c, path, fmt, enc, t, env)
                            if not r.get("ok"):
                                best.setdefault(c, r)
                                continue
                            if (
                                c not in best
                                or not best[c].get("ok")
                                or r["secs"] < best[c]["secs"]
                            ):
                                best[c] = r
                    ref = best.get("tiktoken", {}).get("digest")
                    for c, r in best.items():
                        rows.append(
                            {
                                "file": f.stem,
                                "format": fmt,
                                "encoding": enc,
                                "threads": t,
                                "contender": c,
                                **r,
                                "exact": r.get("digest") == ref if ref else None,
                            }
                        )
                    line = ", ".join(
                        f"{c} {r['mbps']:.1f}" if r.get("ok") else f"{c} FAILED {r.get('error')}"
                        for c, r in best.items()
                    )
                    print(f"{f.stem:16s} {fmt:5s} {enc:12s} {t}t: {line}", file=sys.stderr)
    big = None
    if args.big_gb > 0:
        path = big_input(args.big_gb)
        big = run("subword", path, "text", "r50k_base", 0, env)
        big["file"] = path.name
        print(f"big input {path.name}: {big}", file=sys.stderr)
    report(rows, big, time.perf_counter() - started)
    if args.json:
        write_json(args.json, {"rows": rows, "big": big})
    return 0


def report(rows, big, elapsed) -> None:
    def get(r_file, fmt, enc, t, c):
        for r in rows:
            if (r["file"], r["format"], r["encoding"], r["threads"], r["contender"]) == (
                r_file,
                fmt,
                enc,
                t,
                c,
            ):
                return r
        return {}

    keys = sorted({(r["file"], r["format"], r["encoding"]) for r in rows})
    threads = sorted({r["threads"] for r in rows})
    print(
        "| file | format | encoding | "
        + " | ".join(f"{t}t subword MB/s | ÷ gigatoken | ÷ tiktoken" for t in threads)
        + " | 2t ÷ 1t (subword) | peak MB subword / giga / tiktoken | ids exact |"
    )
    print("|" + "---|" * (4 + 3 * len(threads) + 2))
    ratios = {"giga": [], "scale": []}
    for f, fmt, enc in keys:
        cells = []
        for t in threads:
            s, g, k = (get(f, fmt, enc, t, c) for c in CONTENDERS)
            sm = s.get("mbps")
            rg = sm / g["mbps"] if sm and g.get("mbps") else None
            rk = sm / k["mbps"] if sm and k.get("mbps") else None
            if rg and t == max(threads):
                ratios["giga"].append(rg)
            cells += [
                f"{sm:.1f}" if sm else "–",
                f"{rg:.2f}" if rg else "–",
                f"{rk:.2f}" if rk else "–",
            ]
        s1, s2 = (
            get(f, fmt, enc, min(threads), "subword"),
            get(f, fmt, enc, max(threads), "subword"),
        )
        scale = s2["mbps"] / s1["mbps"] if s1.get("mbps") and s2.get("mbps") else None
        if scale:
            ratios["scale"].append(scale)
        t = max(threads)
        peaks = " / ".join(f"{get(f, fmt, enc, t, c).get('peak_mb', 0):.0f}" for c in CONTENDERS)
        exact = all(
            r.get("exact") for r in rows if (r["file"], r["format"], r["encoding"]) == (f, fmt, enc)
        )
        print(
            f"| {f} | {fmt} | {enc} | "
            + " | ".join(cells)
            + f" | {scale:.2f} | {peaks} | {'yes' if exact else 'NO'} |"
            if scale
            else " | – | | |"
        )
    print()
    if ratios["giga"]:
        print(
            f"- subword ÷ gigatoken at {max(threads)} threads: min {min(ratios['giga']):.2f}, "
            f"max {max(ratios['giga']):.2f} ({sum(r >= 1.0 for r in ratios['giga'])}/"
            f"{len(ratios['giga'])} ≥ 1.0)"
        )
    if ratios["scale"]:
        print(
            f"- subword {max(threads)} threads ÷ 1 thread: min {min(ratios['scale']):.2f}, "
            f"max {max(ratios['scale']):.2f} ({sum(r >= 1.8 for r in ratios['scale'])}/"
            f"{len(ratios['scale'])} ≥ 1.8)"
        )
    if big:
        if big.get("ok"):
            print(
                f"- {big['bytes'] / 1e9:.2f} GB generated text, r50k, every core: "
                f"{big['mbps']:.1f} MB/s, peak RSS {big['peak_mb']:.0f} MB"
            )
        else:
            print(f"- big input failed: {big.get('error')}")
    busy_warning(rows)
    print(run_took(elapsed))


if __name__ == "__main__":
    sys.exit(main())
