#!/usr/bin/env python3
"""BPE training time and peak memory of subword against HF tokenizers, rustbpe and bpeasy.

    python benches/bench_train.py                       # cases 1, 2, 3 and the scaling series
    python benches/bench_train.py --quick               # case 1 only (en_docs.txt, vocab 8,192)
    python benches/bench_train.py --cases 2,scale --json out.json
    python benches/bench_train.py --contenders subword,rustbpe --repeat 3

Cases (corpora in ../shared/corpora, relative to the repo root):

* 1: en_docs.txt at vocab_size 8,192;
* 2: all six *.txt together (~50 MB) at 32,768;
* 3: the same at 65,536;
* scale: subword only, 1x, 2x and 4x the data of case 2 (copies of each file concatenated,
  kept in .cache/bench/train_scale_Nx/) at 32,768.

Every contender is asked for the same ``vocab_size``; all four count the 256 byte tokens in it
(no special tokens are added), so a full run yields vocab_size - 256 merges.  All use the GPT-2
pre-tokenizer pattern.  Frequency floors differ: subword and HF are given min_frequency=2;
rustbpe and bpeasy have no such knob and keep merging pairs seen once.

Each (contender, case, repeat) runs in a fresh child process of this script (``--worker``) that
imports the library, trains once and prints one JSON line: wall seconds of the training call
(reading the files included), CPU seconds, and peak RSS from VmHWM in /proc/self/status (see
benchutil.peak_rss).  Wall time is the best of ``--repeat`` runs; peak MB is the largest seen.
Runs of different contenders alternate (the order rotated each repeat) so drift of a shared
machine hits all alike, and the load from other processes is sampled before every run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

from benchutil import (
    MB,
    REPO,
    byte_alphabet,
    dist_version,
    error_text,
    fmt,
    pick,
    protocol,
    ratio,
    rotated,
    run_once,
    run_took,
    summarize_runs,
    timed_call,
    train_step,
    versus_hf,
    write_json,
)

DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
CACHE = REPO / ".cache"
BENCH_CACHE = CACHE / "bench"  # the scaled copies of the corpora live here

CONTENDERS = ("subword", "hf", "rustbpe", "bpeasy")
BASELINE = "hf"
MIB = 2**20

# GPT-2's pre-tokenizer, as first published (fancy-regex syntax: rustbpe and bpeasy compile it).
# HF's ByteLevel(use_regex=True) and subword's pattern="gpt2" split text the same way.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# rustbpe / bpeasy take an iterator of str.  They get the files in pieces of about CHUNK bytes,
# cut only after a "\n" that is followed by a printable ASCII character: the GPT-2 pattern always
# splits there, so the pieces give the same pre-tokens as the whole file.
CHUNK = 256 * 1024
BPEASY_MAX_TOKEN_LENGTH = 1_000_000  # i.e. no limit (HF, rustbpe and subword have none)

# What each contender is called with, for the report.
API = {
    "subword": (
        "subword.train(files, vocab_size, show_progress=False)  (pattern='gpt2', min_frequency=2)"
    ),
    "hf": (
        "Tokenizer(models.BPE()), "
        "pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True), "
        "BpeTrainer(vocab_size, min_frequency=2, initial_alphabet=ByteLevel.alphabet(), "
        "show_progress=False); tokenizer.train(files, trainer)  (reads the files line by line)"
    ),
    "rustbpe": (
        f"rustbpe.Tokenizer().train_from_iterator(chunks, vocab_size, pattern=GPT-2)  "
        f"(no min_frequency: merges pairs seen once; chunks of ~{CHUNK // 1024} KiB)"
    ),
    "bpeasy": (
        f"bpeasy.train_bpe(chunks, GPT-2, max_token_length={BPEASY_MAX_TOKEN_LENGTH:,}, "
        "vocab_size)  "
        f"(no min_frequency: merges pairs seen once; chunks of ~{CHUNK // 1024} KiB)"
    ),
}


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------


def corpus_files(corpora: Path) -> list[Path]:
    return sorted(corpora.glob("*.txt"))


def scaled_files(files: list[Path], k: int) -> list[Path]:
    """Each file repeated k times, in .cache/bench/train_scale_{k}x/ (made once, then reused)."""
    if k == 1:
        return files
    out_dir = BENCH_CACHE / f"train_scale_{k}x"
    out_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for f in files:
        dest = out_dir / f.name
        want = k * f.stat().st_size
        if not dest.exists() or dest.stat().st_size != want:
            print(f"writing {dest} ({want / MB:.0f} MB)", file=sys.stderr)
            tmp = dest.with_suffix(".tmp")
            with open(tmp, "wb") as w:
                for _ in range(k):
                    with open(f, "rb") as r:
                        shutil.copyfileobj(r, w, 1 << 22)
            tmp.replace(dest)
        out.append(dest)
    return out


def build_cases(selected: list[str], corpora: Path) -> list[dict]:
    files = corpus_files(corpora)
    en_docs = corpora / "en_docs.txt"
    cases = []
    for c in selected:
        if c == "1":
            cases.append(
                {"case": "1", "label": "1: en_docs @ 8,192", "files": [en_docs], "vocab": 8192}
            )
        elif c == "2":
            cases.append(
                {"case": "2", "label": "2: all six @ 32,768", "files": files, "vocab": 32768}
            )
        elif c == "3":
            cases.append(
                {"case": "3", "label": "3: all six @ 65,536", "files": files, "vocab": 65536}
            )
        elif c == "scale":
            for k in (1, 2, 4):
                cases.append(
                    {
                        "case": f"scale{k}x",
                        "label": f"scale {k}×: all six ×{k} @ 32,768",
                        "files": scaled_files(files, k),
                        "vocab": 32768,
                        "scale": k,
                        "only": ("subword",),
                    }
                )
    for case in cases:
        case["bytes"] = sum(f.stat().st_size for f in case["files"])
    return cases


# --------------------------------------------------------------------------
# Worker: one contender, one training run, in its own process
# --------------------------------------------------------------------------


def _safe_cut(buf: bytes) -> int:
    """Offset just after the last "\\n" in buf followed by printable ASCII, or -1."""
    end = len(buf)
    while True:
        nl = buf.rfind(b"\n", 0, end - 1)
        if nl < 0:
            return -1
        if 0x21 <= buf[nl + 1] <= 0x7E:
            return nl + 1
        end = nl + 1


def text_chunks(files: list[str], size: int = CHUNK):
    """The files as str pieces of about `size` bytes, cut where GPT-2's pattern splits anyway."""
    for path in files:
        with open(path, "rb") as f:
            rest = b""
            while True:
                block = f.read(size)
                if not block:
                    break
                buf = rest + block
                cut = _safe_cut(buf)
                if cut <= 0:
                    rest = buf
                    continue
                yield buf[:cut].decode("utf-8")
                rest = buf[cut:]
            if rest:
                yield rest.decode("utf-8")


def _byte_decoder() -> dict[str, int]:
    """GPT-2's printable stand-in for each byte value, inverted (HF vocab strings -> bytes)."""
    return {c: b for b, c in enumerate(byte_alphabet())}


def load_trainer(name: str, threads: int):
    """Import the library (outside the timing); return (version, train(files, vocab) -> result)."""
    if name == "subword":
        try:
            import subword
        except ImportError:  # maturin develop may have put the extension next to the sources
            sys.path.insert(0, str(REPO / "python"))
            import subword  # noqa: F811

        def train(files, vocab):
            return subword.train(files, vocab, show_progress=False, num_threads=threads)

        return dist_version("subword"), train
    if name == "hf":
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers

        def train(files, vocab):
            tok = Tokenizer(models.BPE())
            tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
            trainer = trainers.BpeTrainer(
                vocab_size=vocab,
                min_frequency=2,
                initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                show_progress=False,
            )
            tok.train(files, trainer)
            return tok

        return dist_version("tokenizers"), train
    if name == "rustbpe":
        import rustbpe

        def train(files, vocab):
            tok = rustbpe.Tokenizer()
            tok.train_from_iterator(text_chunks(files), vocab, pattern=GPT2_PATTERN)
            return tok

        return dist_version("rustbpe"), train
    if name == "bpeasy":
        import bpeasy

        def train(files, vocab):
            return bpeasy.train_bpe(
                text_chunks(files), GPT2_PATTERN, BPEASY_MAX_TOKEN_LENGTH, vocab
            )

        return dist_version("bpeasy"), train
    raise ValueError(f"unknown contender {name!r}")


def learned_tokens(name: str, result) -> tuple[list[bytes], int]:
    """(the learned multi-byte tokens in order, the vocab size) of a training result."""
    if name == "subword":
        return [a + b for a, b in result.merges], result.n_vocab
    if name == "hf":
        dec = _byte_decoder()
        model = json.loads(result.to_str())["model"]
        toks = []
        for m in model["merges"]:
            a, b = m if isinstance(m, list) else m.split(" ", 1)
            toks.append(bytes(dec[c] for c in a + b))
        return toks, result.get_vocab_size()
    if name == "rustbpe":
        ranks = sorted(
            ((bytes(k), v) for k, v in result.get_mergeable_ranks()), key=lambda kv: kv[1]
        )
        return [k for k, v in ranks if v >= 256], result.vocab_size
    if name == "bpeasy":
        ranks = sorted(result.items(), key=lambda kv: kv[1])
        return [k for k, v in ranks if v >= 256], len(result)
    raise ValueError(name)


def worker_main(args) -> int:
    say = protocol()
    name, files, vocab = args.worker, args.files, args.vocab
    try:
        t0 = time.perf_counter()
        version, train = load_trainer(name, args.threads)
        import_s = time.perf_counter() - t0
        result, stats = timed_call(train, files, vocab)
        # after the peak was read: learned_tokens may build big Python objects
        toks, n_vocab = learned_tokens(name, result)
    except Exception as exc:  # noqa: BLE001
        say({"ok": False, "error": error_text(exc)})
        return 1
    if args.tokens_out:
        with open(args.tokens_out, "w") as f:
            f.writelines(t.hex() + "\n" for t in toks)
    say(
        {
            "ok": True,
            "version": version,
            "import_s": import_s,
            **stats,
            "merges": len(toks),
            "n_vocab": n_vocab,
        }
    )
    return 0


# --------------------------------------------------------------------------
# Parent
# --------------------------------------------------------------------------


def run_worker(name: str, case: dict, args, env: dict[str, str], tokens_out: str | None) -> dict:
    cmd = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        name,
        "--vocab",
        str(case["vocab"]),
        "--threads",
        str(args.threads),
    ]
    if tokens_out:
        cmd += ["--tokens-out", tokens_out]
    cmd += ["--files", *map(str, case["files"])]
    return run_once(cmd, env, args.timeout)


def overlap(tok_dir: str, case: str, name: str, ref: str = "subword") -> float | None:
    """Share of `ref`'s learned tokens that `name` also learned (same case, first repeat)."""
    a, b = Path(tok_dir, f"{case}_{name}.txt"), Path(tok_dir, f"{case}_{ref}.txt")
    if not a.exists() or not b.exists():
        return None
    mine, theirs = set(a.read_text().split()), set(b.read_text().split())
    return len(mine & theirs) / len(theirs) if theirs else None


def parent_main(args) -> int:
    names = pick(args.contenders, CONTENDERS, "contender")
    if names is None:
        return 2
    selected = ["1"] if args.quick else pick(args.cases, ("1", "2", "3", "scale"), "case")
    if selected is None:
        return 2
    corpora = Path(args.corpora)
    if not (corpora / "en_docs.txt").is_file():
        print(f"no corpora in {corpora}", file=sys.stderr)
        return 2
    cases = build_cases(selected, corpora)

    env = dict(os.environ)
    env.setdefault("TOKENIZERS_PARALLELISM", "true")
    if args.threads:
        env.update(RAYON_NUM_THREADS=str(args.threads), RAYON_RS_NUM_CPUS=str(args.threads))

    load0 = os.getloadavg()
    t_start = time.perf_counter()
    rows: dict[tuple[str, str], dict] = {}
    tok_dir = tempfile.mkdtemp(prefix="bench_train_tokens_")
    try:
        for rep in range(args.repeat):
            for case in cases:
                who = [n for n in names if n in case.get("only", names)]
                for name in rotated(who, rep):
                    row = rows.setdefault(
                        (case["case"], name), {"case": case["case"], "contender": name, "runs": []}
                    )
                    tokens_out = (
                        str(Path(tok_dir, f"{case['case']}_{name}.txt")) if rep == 0 else None
                    )
                    train_step(
                        row,
                        f"[{time.perf_counter() - t_start:6.0f} s] {case['label']}: {name}",
                        rep,
                        args.repeat,
                        partial(run_worker, name, case, args, env, tokens_out),
                        lambda r: f"{r['merges']:,} merges / {r['n_vocab']:,}",
                    )
        # summarize: best wall, largest peak
        for (cid, name), row in rows.items():
            if summarize_runs(row, ("merges", "n_vocab")) and name != "subword":
                row["subword_tokens_shared"] = overlap(tok_dir, cid, name)
    finally:
        shutil.rmtree(tok_dir, ignore_errors=True)
    elapsed = time.perf_counter() - t_start
    load1 = os.getloadavg()

    for case in cases:
        base = rows.get((case["case"], BASELINE), {})
        for name in names:
            row = rows.get((case["case"], name))
            if row is None:
                continue
            versus_hf(row, base)
    targets = check_targets(cases, rows)
    report(args, cases, names, rows, targets, elapsed, load0, load1)

    if args.json:
        doc = {
            "config": {
                "cases": [
                    {k: (list(map(str, v)) if k == "files" else v) for k, v in c.items()}
                    for c in cases
                ],
                "contenders": names,
                "api": {n: API[n] for n in names},
                "repeat": args.repeat,
                "threads": args.threads,
                "timeout_s": args.timeout,
                "gpt2_pattern": GPT2_PATTERN,
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "loadavg_start": load0,
                "loadavg_end": load1,
            },
            "results": list(rows.values()),
            "targets": targets,
            "elapsed_s": elapsed,
        }
        write_json(args.json, doc)
    return 0


def check_targets(cases: list[dict], rows: dict) -> list[dict]:
    """Per main case: subword ≥ 1.5× rustbpe's speed, ≤ 0.3× HF's wall time, ≤ HF's peak memory."""
    out = []
    for case in cases:
        if "scale" in case:
            continue
        sw = rows.get((case["case"], "subword"), {})
        rb = rows.get((case["case"], "rustbpe"), {})
        hf = rows.get((case["case"], "hf"), {})
        checks = [
            ("speed vs rustbpe", ratio(rb.get("wall_s"), sw.get("wall_s")), ">=", 1.5),
            ("wall time vs HF", ratio(sw.get("wall_s"), hf.get("wall_s")), "<=", 0.3),
            ("peak memory vs HF", ratio(sw.get("peak_mb"), hf.get("peak_mb")), "<=", 1.0),
        ]
        for what, value, op, goal in checks:
            met = None if value is None else (value >= goal if op == ">=" else value <= goal)
            out.append(
                {
                    "case": case["case"],
                    "target": what,
                    "value": value,
                    "op": op,
                    "goal": goal,
                    "met": met,
                }
            )
    return out


def report(args, cases, names, rows, targets, elapsed, load0, load1) -> None:
    quick = " (--quick)" if args.quick else ""
    threads = f"{args.threads} threads" if args.threads else "library default threads"
    print(
        f"## BPE training{quick}: wall time and peak RSS, best of {args.repeat}, "
        f"{threads}, {os.cpu_count()} cores\n"
    )
    versions = {
        n: next(
            (r["version"] for r in rows.values() if r["contender"] == n and r.get("version")), "?"
        )
        for n in names
    }
    for n in names:
        print(f"- {n} {versions[n]}: {API[n]}")
    print(
        "- vocab_size: every contender is given the same number and all four count the 256 byte "
        "tokens in it (no special tokens), so a full run learns vocab_size − 256 merges; "
        "subword and HF stop early if no pair is seen twice"
    )
    print("- pre-tokenizer: GPT-2 pattern for all four")
    for c in cases:
        print(f"- case {c['label']}: {len(c['files'])} file(s), {c['bytes'] / MB:.1f} MB")
    busy = [r.get("others_busy_cores") for row in rows.values() for r in row["runs"]]
    busy = [b for b in busy if b is not None]
    if busy:
        print(
            f"- load from other processes before each run: mean {sum(busy) / len(busy):.1f}, "
            f"max {max(busy):.1f} of {os.cpu_count()} cores busy; load average "
            f"{load0[0]:.2f} at start, {load1[0]:.2f} at end"
        )
        if max(busy) > 0.25:
            print(
                "- **warning**: the machine was shared; times are longer and noisier than on an "
                "idle machine"
            )
    print()
    print("| case | contender | wall s | × HF time | peak MB | × HF memory | merges/vocab |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for c in cases:
        if "scale" in c:
            continue
        for n in names:
            row = rows.get((c["case"], n))
            if row is None:
                continue
            if row.get("wall_s") is None:
                print(f"| {c['label']} | {n} | failed | | | | {row.get('error', '?')[:80]} |")
                continue
            print(
                "| {case} | {n} | {w} | {xt} | {pk} | {xm} | {mg:,} / {nv:,} |".format(
                    case=c["label"],
                    n=n,
                    w=fmt(row["wall_s"], ".2f"),
                    xt=fmt(row.get("x_hf_time"), ".2f", "×"),
                    pk=fmt(row["peak_mb"], ".0f"),
                    xm=fmt(row.get("x_hf_memory"), ".2f", "×"),
                    mg=row["merges"],
                    nv=row["n_vocab"],
                )
            )
    print()
    base_rss = {}
    for row in rows.values():
        for r in row["runs"]:
            if r.get("import_rss_mb"):
                base_rss.setdefault(row["contender"], r["import_rss_mb"])
    print(
        "peak MB: VmHWM (MiB) of the worker, Python and the imported library included (RSS "
        "after the import: "
        + ", ".join(f"{n} {fmt(base_rss.get(n), '.0f')} MB" for n in names)
        + ")."
    )
    print()

    main_cases = [c for c in cases if "scale" not in c]
    if main_cases:
        print(
            "### CPU s (cores used = CPU s ÷ wall s), and the share of subword's learned tokens "
            "the peer learned too\n"
        )
        print("CPU seconds move less than wall seconds when other processes share the cores.\n")
        print("| case | " + " | ".join(names) + " |")
        print("|---|" + "---:|" * len(names))
        for c in main_cases:
            cells = []
            for n in names:
                row = rows.get((c["case"], n), {})
                cell = f"{fmt(row.get('cpu_s'), '.1f')} ({fmt(row.get('cores'), '.2f')})"
                if n != "subword" and row.get("subword_tokens_shared") is not None:
                    cell += f" / {100 * row['subword_tokens_shared']:.1f}%"
                cells.append(cell)
            print(f"| {c['label']} | " + " | ".join(cells) + " |")
        print()

    scale = [c for c in cases if "scale" in c]
    if scale:
        print("### scaling: subword on 1×, 2×, 4× the data of case 2, vocab 32,768\n")
        print("| data | MB | wall s | MB/s | × 1× time | peak MB | merges/vocab |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        one = rows.get((scale[0]["case"], "subword"), {}).get("wall_s")
        for c in scale:
            row = rows.get((c["case"], "subword"), {})
            if row.get("wall_s") is None:
                print(
                    f"| {c['scale']}× | {c['bytes'] / MB:.0f} | failed | | | | "
                    f"{row.get('error', '?')[:80]} |"
                )
                continue
            print(
                f"| {c['scale']}× | {c['bytes'] / MB:.0f} | {row['wall_s']:.2f} | "
                f"{c['bytes'] / MB / row['wall_s']:.1f} | "
                f"{fmt(ratio(row['wall_s'], one), '.2f', '×')} | "
                f"{row['peak_mb']:.0f} | {row['merges']:,} / {row['n_vocab']:,} |"
            )
        print()

    if targets:
        print("### subword targets\n")
        labels = {c["case"]: c["label"] for c in cases}
        for t in targets:
            flag = "not measured" if t["met"] is None else ("met" if t["met"] else "**MISSED**")
            what = {
                "speed vs rustbpe": "speed vs rustbpe (rustbpe s ÷ subword s)",
                "wall time vs HF": "wall time vs HF (subword s ÷ HF s)",
                "peak memory vs HF": "peak memory vs HF (subword MB ÷ HF MB)",
            }[t["target"]]
            print(
                f"- case {labels[t['case']]}: {what} = {fmt(t['value'], '.2f', '×')} "
                f"(target {t['op'].replace('>=', '≥').replace('<=', '≤')} {t['goal']:.1f}×): {flag}"
            )
        print()
    print(run_took(elapsed))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--cases", default="1,2,3,scale", help="comma list from 1, 2, 3, scale (default all)"
    )
    p.add_argument("--quick", action="store_true", help="case 1 only")
    p.add_argument(
        "--contenders",
        default=",".join(CONTENDERS),
        help="comma list from: " + ", ".join(CONTENDERS),
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per pair, each in a fresh process; best wall counts",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="threads for every library (RAYON_NUM_THREADS, subword num_threads); "
        "0 = their default (all cores)",
    )
    p.add_argument(
        "--timeout", type=float, default=600, help="seconds one worker may take (default 600)"
    )
    p.add_argument("--corpora", default=str(DEFAULT_CORPORA), help="directory of the *.txt corpora")
    p.add_argument("--json", metavar="OUT", help="also write every number to this JSON file")
    p.add_argument("--worker", metavar="CONTENDER", help=argparse.SUPPRESS)
    p.add_argument("--vocab", type=int, help=argparse.SUPPRESS)
    p.add_argument("--files", nargs="+", help=argparse.SUPPRESS)
    p.add_argument("--tokens-out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.worker:
        if not args.files or not args.vocab:
            p.error("--worker needs --vocab and --files")
        return worker_main(args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
