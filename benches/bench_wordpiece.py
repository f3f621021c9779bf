#!/usr/bin/env python3
"""WordPiece (BERT uncased) encode throughput and training time of subword against HF and tokie.

    python benches/bench_wordpiece.py                   # encode on every ../shared/corpora/*.txt,
                                                        # then training on en_docs.txt @ 30,522
    python benches/bench_wordpiece.py --quick           # first 1 MB of each file, 1 repeat
    python benches/bench_wordpiece.py --parts encode --contenders subword,tokie a.txt b.txt
    python benches/bench_wordpiece.py --json benches/results_wordpiece.json

encode: the BERT uncased ``tokenizer.json`` (from ``tests/refdata.py``: ``bert_uncased()``), loaded
by subword (``subword.Tokenizer.from_file``, its BERT path), subword's HF drop-in
(``subword.tokenizers.Tokenizer.from_file``, the general pipeline), HF tokenizers
(``tokenizers.Tokenizer.from_file``) and tokie (``tokie.Tokenizer.from_json``), padding and
truncation switched off, special tokens added ([CLS] ... [SEP], the default).  Each file is cut
into lines (``text.split("\\n")``, empty lines included) and encoded

* single: a Python loop, ``[tok.encode(line).ids for line in lines]``;
* batch: ``[e.ids for e in tok.encode_batch(lines)]`` on ``--threads`` threads (2;
  RAYON_NUM_THREADS for hf and tokie; subword's batch has no thread argument and uses a pool of
  every core).

Rates are MB/s (10^6 bytes of UTF-8 input), best of ``--repeat`` runs after a warm-up on the first
``--warmup-bytes`` of the file; ratios are against hf and tokie measured in the same run, and the
ids of every contender are compared with hf's (digest of all ids and line lengths).  Each
(contender, file) pair runs in its own worker process (``--worker encode CONTENDER FILE``) so that
its peak RSS (VmHWM) is its own; the parent asks the workers for one run at a time, round-robin,
the order rotated each repeat.

train: ``Tokenizer(models.WordPiece(unk_token="[UNK]"))`` with ``BertNormalizer(lowercase=True)``,
``BertPreTokenizer()`` and ``WordPieceTrainer(vocab_size=30522, special_tokens=[...],
show_progress=False)``, ``tok.train([en_docs.txt], trainer)``, written the same way for HF
``tokenizers`` and for ``subword``.  Every run is a fresh worker process (``--worker train``);
wall time of the train call (best of ``--repeat``) and peak RSS (largest seen).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from array import array
from functools import partial
from pathlib import Path

from benchutil import (
    MB,
    REPO,
    EncodeJob,
    Worker,
    add_ratios,
    aggregate,
    busy_warning,
    cores_table,
    dist_version,
    error_note,
    error_text,
    file_rows,
    flatten,
    fmt,
    import_subword,
    job_worker,
    module_version,
    pick,
    protocol,
    rate_table,
    read_text,
    rotated,
    run_once,
    run_took,
    size_note,
    summarize_runs,
    timed_call,
    train_step,
    versus_hf,
    warmup_items,
    write_json,
)
from benchutil import run_file as run_file_rows

DEFAULT_CORPORA = REPO.parent / "shared" / "corpora"
BENCH_CACHE = REPO / ".cache" / "bench"  # the --quick training file is written here

ENCODE_CONTENDERS = ("subword", "subword-tokenizers", "hf", "tokie")
TRAIN_CONTENDERS = ("subword", "hf")
BASELINE = "hf"  # ids are compared with hf's; ratios are against hf and tokie
PEER = "tokie"
RATIOS = {f"x_{BASELINE}": BASELINE, f"x_{PEER}": PEER}  # row["single_x_hf"]: its MB/s ÷ hf's
MODES = ("single", "batch")
PARTS = ("encode", "train")
QUICK_BYTES = 1_000_000
VOCAB_SIZE = 30522
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

ENCODE_API = {
    "subword": "subword.Tokenizer.from_file(json)",
    "subword-tokenizers": "subword.tokenizers.Tokenizer.from_file(json) (the HF drop-in)",
    "hf": "tokenizers.Tokenizer.from_file(json)",
    "tokie": "tokie.Tokenizer.from_json(json)",
}
TRAIN_API = (
    "Tokenizer(models.WordPiece(unk_token='[UNK]')), normalizers.BertNormalizer(lowercase=True), "
    "pre_tokenizers.BertPreTokenizer(), trainers.WordPieceTrainer(vocab_size, "
    "special_tokens=[PAD, UNK, CLS, SEP, MASK], show_progress=False); tok.train([file], trainer)"
)


# --------------------------------------------------------------------------
# The BERT uncased tokenizer.json
# --------------------------------------------------------------------------


def bert_tokenizer_json(override: str | None) -> Path:
    """tokenizer.json of BERT uncased: --tokenizer-json, else tests/refdata.py's bert_uncased()."""
    if override:
        path = Path(override)
        if path.is_dir():
            path = path / "tokenizer.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path} is not a file")
        return path
    tests = REPO / "tests"
    if str(tests) not in sys.path:
        sys.path.insert(0, str(tests))
    import refdata  # type: ignore[import-not-found]

    if not hasattr(refdata, "bert_uncased"):
        raise RuntimeError(
            "tests/refdata.py has no bert_uncased(); pass --tokenizer-json PATH "
            "(the tokenizer.json of BERT base uncased / all-MiniLM-L6-v2)"
        )
    path = Path(refdata.bert_uncased()) / "tokenizer.json"
    if not path.is_file():
        raise FileNotFoundError(f"refdata.bert_uncased() has no {path.name}: {path}")
    return path


def id_to_token_table(tokenizer_json: Path) -> dict[int, str]:
    """id -> token string from a WordPiece tokenizer.json (for the notes on differing ids)."""
    doc = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    table = {i: t for t, i in doc["model"]["vocab"].items()}
    for added in doc.get("added_tokens") or []:
        table[added["id"]] = added["content"]
    return table


# --------------------------------------------------------------------------
# Encode worker: one contender, one file, in its own process
# --------------------------------------------------------------------------


def load_encoder(name: str, tokenizer_json: str):
    """Return (version, single(lines) -> list[list[int]], batch(lines) -> list[list[int]])."""
    if name == "subword":
        mod = import_subword()
        tok = mod.Tokenizer.from_file(tokenizer_json)
        version = module_version(mod)
    elif name == "subword-tokenizers":
        # The drop-in's pipeline (rust/pipeline/), not the BERT path subword.Tokenizer takes.
        mod = import_subword()
        import subword.tokenizers

        tok = subword.tokenizers.Tokenizer.from_file(tokenizer_json)
        version = module_version(mod)
    elif name == "hf":
        import tokenizers

        tok = tokenizers.Tokenizer.from_file(tokenizer_json)
        version = tokenizers.__version__
    elif name == "tokie":
        import tokie

        tok = tokie.Tokenizer.from_json(tokenizer_json)
        version = dist_version("tokie")
    else:
        raise ValueError(f"unknown contender {name!r}")
    # BERT's tokenizer.json pads and truncates to 128: switch both off everywhere.
    tok.no_padding()
    tok.no_truncation()
    encode, encode_batch = tok.encode, tok.encode_batch

    def single(lines: list[str]) -> list:
        return [encode(line).ids for line in lines]

    def batch(lines: list[str]) -> list:
        return [e.ids for e in encode_batch(lines)]

    return version, single, batch


class LinesJob(EncodeJob):
    def __init__(self, name: str, path: str, tokenizer_json: str, max_bytes: int, warmup: int):
        super().__init__()
        t0 = time.perf_counter()
        self.version, self._single, self._batch = load_encoder(name, tokenizer_json)
        self.load_s = time.perf_counter() - t0
        text = read_text(path, max_bytes)
        self.nbytes = len(text.encode("utf-8"))
        self.lines = text.split("\n")
        del text
        # Warm up (thread pools, caches, page faults) on the lines of a prefix of the file.
        head = warmup_items(self.lines, warmup, sep=1)
        self._single(head)
        self._batch(head)

    def call(self, mode: str):
        return (self._single if mode == "single" else self._batch), self.lines

    def ids(self, mode: str, out) -> tuple[array, array]:
        return flatten(out)


def encode_worker(name: str, path: str, mode: str, args) -> int:
    say = protocol()
    os.environ.setdefault("RAYON_NUM_THREADS", str(args.threads))
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    if mode == "probe":
        try:
            tokenizer_json = str(bert_tokenizer_json(args.tokenizer_json))
            version, single, batch = load_encoder(name, tokenizer_json)
            texts = ["Hello, world!", ""]
            sane = [list(x) for x in single(texts)] == [list(x) for x in batch(texts)]
            say({"ok": True, "version": version, "sane": sane})
        except Exception as exc:  # noqa: BLE001
            say({"ok": False, "error": error_text(exc)})
        return 0

    def make_job() -> LinesJob:
        tokenizer_json = str(bert_tokenizer_json(args.tokenizer_json))
        return LinesJob(name, path, tokenizer_json, args.max_bytes, args.warmup_bytes)

    def hello(job: LinesJob) -> dict:
        return {
            "version": job.version,
            "load_s": job.load_s,
            "bytes": job.nbytes,
            "lines": len(job.lines),
        }

    # by hand ("both"): one JSON line; otherwise serve the parent
    return job_worker(
        say, make_job, hello, mode=mode, modes=MODES, by_hand=("both",), repeat=args.repeat
    )


# --------------------------------------------------------------------------
# Train worker: one contender, one training run, in its own process
# --------------------------------------------------------------------------


def build_trainer(name: str, vocab_size: int):
    """(version, tokenizer, trainer) of the BERT WordPiece pipeline; nothing trained yet."""
    if name == "subword":
        mod = import_subword()
        version = module_version(mod)
    elif name == "hf":
        import tokenizers as mod

        version = mod.__version__
    else:
        raise ValueError(f"unknown contender {name!r}")
    tok = mod.Tokenizer(mod.models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = mod.normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = mod.pre_tokenizers.BertPreTokenizer()
    trainer = mod.trainers.WordPieceTrainer(
        vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS), show_progress=False
    )
    return version, tok, trainer


def train_worker(name: str, path: str, args) -> int:
    say = protocol()
    try:
        t0 = time.perf_counter()
        version, tok, trainer = build_trainer(name, args.vocab_size)
        import_s = time.perf_counter() - t0
        if path == "-":  # probe: the pipeline can be built
            say({"ok": True, "version": version})
            return 0
        _, stats = timed_call(tok.train, [path], trainer)
        vocab = tok.get_vocab()  # after the peak was read: it builds a big dict
    except Exception as exc:  # noqa: BLE001
        say({"ok": False, "error": error_text(exc)})
        return 1
    if args.tokens_out:
        with open(args.tokens_out, "w", encoding="utf-8") as f:
            json.dump(sorted(vocab, key=vocab.__getitem__), f, ensure_ascii=False)
    say({"ok": True, "version": version, "import_s": import_s, **stats, "n_vocab": len(vocab)})
    return 0


# --------------------------------------------------------------------------
# Parent: drive the encode workers
# --------------------------------------------------------------------------


def _worker_cmd(args, *worker: str) -> list[str]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", *worker]
    cmd += ["--threads", str(args.threads), "--vocab-size", str(args.vocab_size)]
    cmd += ["--max-bytes", str(args.max_bytes), "--warmup-bytes", str(args.warmup_bytes)]
    if args.tokenizer_path:
        cmd += ["--tokenizer-json", str(args.tokenizer_path)]
    return cmd


def start_worker(name: str, path: Path | str, mode: str, args, env: dict[str, str]) -> Worker:
    return Worker(_worker_cmd(args, "encode", name, str(path), mode), env, args.timeout)


def _load_dump(path: str) -> tuple[array, array]:
    flat, lengths = array("I"), array("Q")
    with open(path, "rb") as f:
        flat.frombytes(f.read())
    with open(path + ".len", "rb") as f:
        lengths.frombytes(f.read())
    return flat, lengths


def _tokens(ids, vocab: dict[int, str]) -> str:
    return " ".join(vocab.get(t, f"<{t}>") for t in ids)


def first_difference(
    name: str, mine_path: str, ref_path: str, lines: list[str], vocab: dict[int, str]
) -> str:
    """The first line whose ids differ from hf's, with the tokens there."""
    a, alen = _load_dump(mine_path)
    b, blen = _load_dump(ref_path)
    if len(alen) != len(blen):
        return f"{name} returned {len(alen)} encodings for {len(blen)} lines"
    pa = pb = 0
    for i, (na, nb) in enumerate(zip(alen, blen)):
        x, y = a[pa : pa + na], b[pb : pb + nb]
        if x != y:
            j = next((k for k in range(min(na, nb)) if x[k] != y[k]), min(na, nb))
            lo, hi = max(0, j - 2), j + 6
            text = lines[i] if i < len(lines) else "?"
            return (
                f"first at line {i + 1} ({len(text)} chars: {text[:100]!r}"
                f"{'...' if len(text) > 100 else ''}), token #{j}: "
                f"hf [{_tokens(y[lo:hi], vocab)}] ({nb} ids) vs "
                f"{name} [{_tokens(x[lo:hi], vocab)}] ({na} ids)"
            )
        pa += na
        pb += nb
    return "digests differ but no line does (?)"


def run_file(
    path: Path, names: list[str], args, env: dict[str, str], vocab: dict[int, str]
) -> list[dict]:
    lines: list[str] | None = None

    def diff(name: str, mine: str, ref: str) -> str:
        nonlocal lines
        if lines is None:
            lines = read_text(str(path), args.max_bytes).split("\n")
        return first_difference(name, mine, ref, lines, vocab)

    rows = run_file_rows(
        path.name,
        names,
        lambda name: start_worker(name, path, "serve", args, env),
        hello_keys=("bytes", "lines", "load_s"),
        modes=MODES,
        baseline=BASELINE,
        repeat=args.repeat,
        diff=diff,
        tmp_prefix="bench_wp_ids_",
    )
    add_ratios(rows, MODES, RATIOS)
    return [{"file": path.name, "contender": name, **rows[name]} for name in names]


def probe(kind: str, names: list[str], args, env: dict[str, str]):
    """Which contenders load; (ok names, versions, skipped: name -> why)."""
    ok, versions, skipped = [], {}, {}
    for name in names:
        if kind == "encode":
            r = start_worker(name, "-", "probe", args, env).probe()
        else:
            r = run_train_worker(name, "-", args, env, None)
        if r.get("ok") and r.get("sane", True):
            ok.append(name)
            versions[name] = r["version"]
        else:
            why = r.get("error") or "encode and encode_batch disagree on ['Hello, world!', '']"
            skipped[name] = why
            print(f"skipping {name} ({kind}): {why}", file=sys.stderr)
    return ok, versions, skipped


def encode_part(args, files: list[Path], env: dict[str, str]) -> dict:
    names = list(args.encode_contenders)
    try:
        args.tokenizer_path = bert_tokenizer_json(args.tokenizer_json)
    except Exception as exc:  # noqa: BLE001
        why = f"no BERT tokenizer.json: {error_text(exc)}"
        print(f"skipping encode: {why}", file=sys.stderr)
        return {"skipped_part": why, "contenders": {}, "skipped": {}, "results": [], "totals": []}
    names, versions, skipped = probe("encode", names, args, env)
    if BASELINE not in names:
        print("warning: hf is not available: no id checks, no × hf", file=sys.stderr)
    vocab = id_to_token_table(args.tokenizer_path)
    rows: list[dict] = []
    if names:
        for f in files:
            print(f"{f.name}: {', '.join(names)}", file=sys.stderr)
            rows.extend(run_file(f, names, args, env, vocab))
    return {
        "tokenizer_json": str(args.tokenizer_path),
        "contenders": {n: {"version": versions[n], "api": ENCODE_API[n]} for n in names},
        "skipped": skipped,
        "results": rows,
        "totals": aggregate(rows, names, len(files), MODES, RATIOS, with_bytes=True),
    }


# --------------------------------------------------------------------------
# Parent: the training runs
# --------------------------------------------------------------------------


def run_train_worker(
    name: str, path: str, args, env: dict[str, str], tokens_out: str | None
) -> dict:
    cmd = _worker_cmd(args, "train", name, path)
    if tokens_out:
        cmd += ["--tokens-out", tokens_out]
    return run_once(cmd, env, args.timeout)


def train_input(path: Path, max_bytes: int) -> Path:
    """`path`, or (with a byte limit) its first lines up to max_bytes, written once to the cache."""
    if not max_bytes or path.stat().st_size <= max_bytes:
        return path
    dest = BENCH_CACHE / f"wordpiece_train_{path.stem}_{max_bytes}.txt"
    data = path.read_bytes()[:max_bytes]
    cut = data.rfind(b"\n")
    data = data[: cut + 1] if cut > 0 else data
    if not dest.exists() or dest.read_bytes() != data:
        BENCH_CACHE.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".tmp")
        tmp.write_bytes(data)
        tmp.replace(dest)
    return dest


def train_part(args, env: dict[str, str]) -> dict:
    path = train_input(Path(args.train_file), args.max_bytes)
    names, versions, skipped = probe("train", list(args.train_contenders), args, env)
    rows: dict[str, dict] = {n: {"contender": n, "runs": []} for n in names}
    tok_dir = tempfile.mkdtemp(prefix="bench_wp_vocab_")
    try:
        for rep in range(args.repeat):
            for name in rotated(names, rep):
                tokens_out = str(Path(tok_dir, f"{name}.json")) if rep == 0 else None
                train_step(
                    rows[name],
                    f"train {path.name} @ {args.vocab_size:,}: {name}",
                    rep,
                    args.repeat,
                    partial(run_train_worker, name, str(path), args, env, tokens_out),
                    lambda r: f"vocab {r['n_vocab']:,}",
                )
        vocabs = {}
        for name in names:
            f = Path(tok_dir, f"{name}.json")
            if f.exists():
                vocabs[name] = json.loads(f.read_text(encoding="utf-8"))
    finally:
        for f in Path(tok_dir).glob("*"):
            f.unlink()
        os.rmdir(tok_dir)

    for row in rows.values():
        summarize_runs(row, ("n_vocab",))
    base = rows.get(BASELINE, {})
    for row in rows.values():
        versus_hf(row, base)
    vocab_check = None
    if "subword" in vocabs and BASELINE in vocabs:
        mine, theirs = vocabs["subword"], vocabs[BASELINE]
        same_prefix = next(
            (i for i, (x, y) in enumerate(zip(mine, theirs)) if x != y), min(len(mine), len(theirs))
        )
        vocab_check = {
            "identical": mine == theirs,
            "same_set": set(mine) == set(theirs),
            "shared_share": len(set(mine) & set(theirs)) / len(mine) if mine else None,
            "same_ids_prefix": same_prefix,
        }
    return {
        "file": str(path),
        "bytes": path.stat().st_size,
        "contenders": {n: {"version": versions[n], "api": TRAIN_API} for n in names},
        "skipped": skipped,
        "results": list(rows.values()),
        "vocab_check": vocab_check,
    }


# --------------------------------------------------------------------------
# Targets and report
# --------------------------------------------------------------------------


def check_targets(enc: dict | None, train: dict | None, files: list[Path]) -> list[dict]:
    """subword: faster than tokie with hf's ids on every file (both modes); training ≤ 2× HF's
    time and ≤ HF's peak memory."""
    out = []
    if enc is not None and not enc.get("skipped_part"):
        by = {(r["file"], r["contender"]): r for r in enc["results"]}
        for f in files:
            sw = by.get((f.name, "subword"), {})
            for mode in MODES:
                x = sw.get(f"{mode}_x_{PEER}")
                eq = sw.get(f"{mode}_ids_equal")
                met = None if x is None or eq is None else (x > 1.0 and eq)
                out.append(
                    {
                        "part": "encode",
                        "target": "faster than tokie, ids == hf",
                        "file": f.name,
                        "mode": mode,
                        "value": x,
                        "ids_equal": eq,
                        "met": met,
                    }
                )
    if train is not None:
        rows = {r["contender"]: r for r in train["results"]}
        sw = rows.get("subword", {})
        for what, key, goal in (
            ("training time vs HF (subword s ÷ HF s)", "x_hf_time", 2.0),
            ("training peak memory vs HF (subword MB ÷ HF MB)", "x_hf_memory", 1.0),
        ):
            v = sw.get(key)
            out.append(
                {
                    "part": "train",
                    "target": f"{what} ≤ {goal:.1f}×",
                    "value": v,
                    "goal": goal,
                    "met": None if v is None else v <= goal,
                }
            )
    return out


def report_encode(args, files: list[Path], enc: dict) -> None:
    print(
        f"## WordPiece encode (BERT uncased) — {size_note(args.max_bytes)}, best of {args.repeat}, "
        f"batch on {args.threads} threads ({os.cpu_count()} cores)\n"
    )
    if enc.get("skipped_part"):
        print(f"- not run: {enc['skipped_part']}\n")
        return
    print(
        f"- tokenizer.json: {enc['tokenizer_json']}; no padding, no truncation, "
        "add_special_tokens=True"
    )
    print(
        '- lines = text.split("\\n") (empty lines included); single = '
        "`[tok.encode(line).ids for line in lines]`, batch = "
        "`[e.ids for e in tok.encode_batch(lines)]`"
    )
    for name, c in enc["contenders"].items():
        print(f"- {name} {c['version']}: {c['api']}")
    for name, why in enc["skipped"].items():
        print(f"- {name}: skipped ({why})")
    names = list(enc["contenders"])
    rows, totals = enc["results"], enc["totals"]
    for fname, r in file_rows(files, rows).items():
        print(f"- {fname}: {r['bytes'] / MB:.1f} MB, {r['lines']:,} lines")
    busy_warning(rows)
    print()
    if not rows:
        print("nothing ran\n")
        return
    print(rate_table(rows + totals, MODES, RATIOS, BASELINE))
    print()
    for r in rows:
        error_note(r, MODES)
        for m in MODES:
            if r.get(m + "_diff"):
                print(f"- ids differ: {r['contender']} on {r['file']} ({m}): {r[m + '_diff']}")
    for r in rows:  # hf's own single and batch should agree
        if r["contender"] == BASELINE and r.get("single_digest") != r.get("batch_digest"):
            print(f"- note: hf's single and batch ids differ on {r['file']}")
    print()
    cores_table([f.name for f in files], names, rows, MODES)


def report_train(args, train: dict) -> None:
    quick = " (--quick)" if args.quick else ""
    print(
        f"## WordPiece training{quick} — {Path(train['file']).name} "
        f"({train['bytes'] / MB:.1f} MB) @ vocab_size {args.vocab_size:,}, "
        f"best of {args.repeat}, {os.cpu_count()} cores\n"
    )
    print(f"- both: {TRAIN_API}")
    for name, c in train["contenders"].items():
        print(f"- {name} {c['version']}")
    for name, why in train["skipped"].items():
        print(f"- {name}: skipped ({why})")
    busy = [r.get("others_busy_cores") for row in train["results"] for r in row["runs"]]
    busy = [b for b in busy if b is not None]
    if busy and max(busy) > 0.25:
        print(
            f"- **warning**: other processes kept up to {max(busy):.1f} of {os.cpu_count()} "
            "cores busy before the runs; times are longer and noisier than on an idle machine"
        )
    print()
    if not train["results"]:
        print("nothing ran\n")
        return
    print("| contender | wall s | × HF time | CPU s (cores) | peak MB | × HF memory | vocab |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in train["results"]:
        n = row["contender"]
        if row.get("wall_s") is None:
            print(f"| {n} | failed | | | | | {row.get('error', '?')[:80]} |")
            continue
        print(
            f"| {n} | {row['wall_s']:.2f} | {fmt(row.get('x_hf_time'), '.2f', '×')} | "
            f"{row['cpu_s']:.2f} ({fmt(row.get('cores'), '.2f')}) | {row['peak_mb']:.0f} | "
            f"{fmt(row.get('x_hf_memory'), '.2f', '×')} | {row['n_vocab']:,} |"
        )
    print()
    base = ", ".join(
        f"{r['contender']} {fmt(r.get('import_rss_mb'), '.0f')} MB" for r in train["results"]
    )
    print(
        f"peak MB: VmHWM (MiB) of the worker, Python and the library included (RSS after the "
        f"import: {base}); wall s: the `tok.train` call, best of {args.repeat}."
    )
    vc = train.get("vocab_check")
    if vc:
        print(
            f"vocab: subword's and HF's are {'identical' if vc['identical'] else 'not identical'}; "
            f"{100 * (vc['shared_share'] or 0):.1f}% of subword's tokens are in HF's, the first "
            f"{vc['same_ids_prefix']:,} ids agree (HF's WordPieceTrainer picks pairs by count, "
            "subword's by count(ab) / (count(a)·count(b)), so they need not match)."
        )
    print()


def report_targets(targets: list[dict], enc: dict | None, train: dict | None) -> None:
    if not targets:
        return
    print("### subword targets\n")

    def flag(met) -> str:
        return "not measured" if met is None else ("met" if met else "**MISSED**")

    enc_t = [t for t in targets if t["part"] == "encode"]
    if enc_t and all(t["value"] is None for t in enc_t):
        why = (enc or {}).get("skipped", {}).get("subword", "no numbers")
        print(f"- encode faster than tokie with hf's ids: not measured ({why})")
    elif enc_t:
        print("encode: faster than tokie (× tokie > 1) with hf's ids, every file, both modes\n")
        print("| file | mode | subword × tokie | ids == hf | |")
        print("|---|---|---:|---|---|")
        for t in enc_t:
            eq = t["ids_equal"]
            print(
                f"| {t['file']} | {t['mode']} | {fmt(t['value'], '.2f', '×')} | "
                f"{'—' if eq is None else ('yes' if eq else '**NO**')} | {flag(t['met'])} |"
            )
        n = sum(1 for t in enc_t if t["met"])
        print(f"\n- encode: {n} of {len(enc_t)} met")
    for t in targets:
        if t["part"] == "train":
            why = ""
            if t["value"] is None:
                rows = {r["contender"]: r for r in (train or {}).get("results", [])}
                why = (train or {}).get("skipped", {}).get("subword") or rows.get(
                    "subword", {}
                ).get("error", "no numbers")
                why = f" ({why})"
            print(f"- {t['target']}: {fmt(t['value'], '.2f', '×')}: {flag(t['met'])}{why}")
    print()


# --------------------------------------------------------------------------


def parent_main(args) -> int:
    parts = pick(args.parts, PARTS, "part")
    names = pick(args.contenders, ENCODE_CONTENDERS, "contender") if parts is not None else None
    if names is None:
        return 2
    args.encode_contenders = [n for n in ENCODE_CONTENDERS if n in names]
    args.train_contenders = [n for n in TRAIN_CONTENDERS if n in names]
    files = [Path(p) for p in args.paths] or sorted(DEFAULT_CORPORA.glob("*.txt"))
    if "encode" in parts and not files:
        print(f"no input files (looked in {DEFAULT_CORPORA})", file=sys.stderr)
        return 2
    for f in files + ([Path(args.train_file)] if "train" in parts else []):
        if not f.is_file():
            print(f"not a file: {f}", file=sys.stderr)
            return 2

    env = dict(os.environ)
    threads = str(args.threads)
    env.update(RAYON_NUM_THREADS=threads, RAYON_RS_NUM_CPUS=threads, TOKENIZERS_PARALLELISM="true")
    args.tokenizer_path = args.tokenizer_json  # resolved by encode_part

    t0 = time.perf_counter()
    enc = encode_part(args, files, env) if "encode" in parts else None
    train = train_part(args, env) if "train" in parts else None
    elapsed = time.perf_counter() - t0
    targets = check_targets(enc, train, files)

    if enc is not None:
        report_encode(args, files, enc)
    if train is not None:
        report_train(args, train)
    report_targets(targets, enc, train)
    print(run_took(elapsed))

    if args.json:
        doc = {
            "config": {
                "parts": parts,
                "threads": args.threads,
                "repeat": args.repeat,
                "max_bytes": args.max_bytes,
                "warmup_bytes": args.warmup_bytes,
                "vocab_size": args.vocab_size,
                "train_file": args.train_file,
                "cpu_count": os.cpu_count(),
                "python": platform.python_version(),
                "machine": platform.machine(),
                "files": [str(f) for f in files],
            },
            "encode": enc,
            "train": train,
            "targets": targets,
            "elapsed_s": elapsed,
        }
        write_json(args.json, doc, ensure_ascii=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "paths", nargs="*", help="text files to encode (default: every *.txt in ../shared/corpora)"
    )
    p.add_argument("--parts", default="encode,train", help="comma list from: encode, train")
    p.add_argument(
        "--contenders",
        default=",".join(ENCODE_CONTENDERS),
        help="comma list from: subword, subword-tokenizers, hf, tokie (only subword and hf train)",
    )
    p.add_argument(
        "--repeat", type=int, default=3, help="timed runs per mode / per trainer (default 3)"
    )
    p.add_argument("--threads", type=int, default=2, help="threads for encode_batch (default 2)")
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"first {QUICK_BYTES / MB:.0f} MB of each file (training too), 1 repeat",
    )
    p.add_argument("--max-bytes", type=int, default=0, help="use only the first N bytes of files")
    p.add_argument(
        "--warmup-bytes", type=int, default=500_000, help="warm-up prefix size; -1 = whole file"
    )
    p.add_argument(
        "--tokenizer-json",
        metavar="PATH",
        help="BERT uncased tokenizer.json or its folder (default: tests/refdata.py bert_uncased())",
    )
    p.add_argument(
        "--train-file",
        default=str(DEFAULT_CORPORA / "en_docs.txt"),
        help="training corpus (default ../shared/corpora/en_docs.txt)",
    )
    p.add_argument("--vocab-size", type=int, default=VOCAB_SIZE, help="default 30,522 (BERT's)")
    p.add_argument(
        "--timeout", type=float, default=900, help="seconds a worker may take for one step"
    )
    p.add_argument("--json", metavar="OUT", help="also write every number to this JSON file")
    p.add_argument("--worker", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    p.add_argument("--tokens-out", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.max_bytes = args.max_bytes or QUICK_BYTES
        args.repeat = 1
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.worker:
        kind, rest = args.worker[0], args.worker[1:]
        if kind == "encode" and len(rest) in (2, 3):
            return encode_worker(rest[0], rest[1], rest[2] if len(rest) > 2 else "both", args)
        if kind == "train" and len(rest) == 2:
            return train_worker(rest[0], rest[1], args)
        p.error("--worker encode CONTENDER FILE [serve|both|probe] | --worker train CONTENDER FILE")
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
