#!/usr/bin/env python3
"""Encode throughput on the open models' vocabularies: subword against HF tokenizers,
gigatoken and tiktoken, one thread, list out, on every corpus file.

    python benches/bench_open_models.py                  # 4 models x 6 files, first 2 MB, ~5 min
    python benches/bench_open_models.py --models qwen2 --files en_docs,ko --max-mb 0.5
    python benches/bench_open_models.py --json benches/results_open_models.json

Models and how each contender loads them (the files come from tests/refdata.py, offline):

* llama3, qwen2, tekken: subword ``get_encoding(model)``; tiktoken ``Encoding`` built from the
  same file and the model's pattern (what each model's own package does: it is the baseline the
  ids are checked against; Qwen's NFC is applied before timing, the corpora are NFC already);
  HF tokenizers and gigatoken load a ``tokenizer.json`` exported by subword (``save_hf``), which
  the ids check vouches for or not.
* subword-tokenizers: ``subword.tokenizers.Tokenizer`` (the HF drop-in, its general pipeline)
  loading the same ``tokenizer.json`` as HF tokenizers.
* subword-Tokenizer: ``subword.Tokenizer`` (subword's own HF-style class, the same pipeline)
  loading that file too.
* deepseek_v3: subword ``get_encoding``; HF tokenizers (the baseline) and gigatoken load the
  shipped ``tokenizer.json``; tiktoken cannot express its three pre-tokenizer regexes.

Every contender runs in its own process (benchutil), the contenders take turns, best of
``--repeat``; MB = 10^6 bytes of UTF-8 input. The summary gives subword ÷ the fastest peer with
exact ids (subword's other classes are not peers).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import tempfile
import time
from array import array
from pathlib import Path

from benchutil import (
    MB,
    REPO,
    EncodeJob,
    Worker,
    busy_warning,
    fmt,
    import_subword,
    job_worker,
    module_version,
    pick,
    protocol,
    rate_table,
    read_text,
    run_file,
    run_took,
    write_json,
)

CORPORA = REPO.parent / "shared" / "corpora"
REFDATA = REPO / ".cache" / "refdata"
MODELS = ("llama3", "qwen2", "tekken", "deepseek_v3")
CONTENDERS = ("subword", "subword-tokenizers", "subword-Tokenizer", "tiktoken", "hf", "gigatoken")
MODES = ("list",)
FILES = {
    "llama3": "llama3.tiktoken",
    "qwen2": "qwen2.tiktoken",
    "tekken": "tekken_240911.json",
    "deepseek_v3": "deepseek_v3.json",
}


def baseline(model: str) -> str:
    return "hf" if model == "deepseek_v3" else "tiktoken"


def hf_json_path(model: str, workdir: str) -> str:
    """The tokenizer.json the HF-format contenders load for `model`."""
    if model == "deepseek_v3":
        return str(REFDATA / FILES[model])
    path = os.path.join(workdir, f"{model}.tokenizer.json")
    if not os.path.exists(path):
        import_subword().get_encoding(model).save_hf(path)
    return path


def tiktoken_encoding(model: str):
    import tiktoken
    import tiktoken.load

    sw = import_subword().get_encoding(model)
    if model == "tekken":
        doc = json.loads((REFDATA / FILES[model]).read_text(encoding="utf-8"))
        n = doc["config"]["default_vocab_size"] - doc["config"]["default_num_special_tokens"]
        ranks = {base64.b64decode(v["token_bytes"]): v["rank"] + 1000 for v in doc["vocab"][:n]}
    else:
        ranks = tiktoken.load.load_tiktoken_bpe(str(REFDATA / FILES[model]))
    return tiktoken.Encoding(
        model, pat_str=sw._pat_str, mergeable_ranks=ranks, special_tokens=sw._special_tokens
    )


class Job(EncodeJob):
    def __init__(self, contender: str, model: str, path: str, max_bytes: int, hf_json: str):
        super().__init__()
        text = read_text(path, max_bytes)
        if model == "qwen2" and contender == "tiktoken":
            import unicodedata

            text = unicodedata.normalize("NFC", text)  # Qwen's own rule, outside the timing
        self.text, self.nbytes = text, len(text.encode("utf-8"))
        if contender == "subword":
            mod = import_subword()
            mod.set_num_threads(1)
            enc = mod.get_encoding(model)
            self.fn, self.api, self.version = enc.encode_ordinary, "encode_ordinary", mod
        elif contender == "subword-tokenizers":
            # The HF drop-in (the general pipeline) on the same tokenizer.json HF loads.
            mod = import_subword()
            mod.set_num_threads(1)
            import subword.tokenizers

            tok = subword.tokenizers.Tokenizer.from_file(hf_json)
            self.fn = lambda t: tok.encode(t, add_special_tokens=False).ids
            self.api, self.version = "tokenizers.Tokenizer.encode(...).ids", mod
        elif contender == "subword-Tokenizer":
            mod = import_subword()
            mod.set_num_threads(1)
            tok = mod.Tokenizer.from_file(hf_json)
            self.fn = lambda t: tok.encode(t, add_special_tokens=False).ids
            self.api, self.version = "subword.Tokenizer.encode(...).ids", mod
        elif contender == "tiktoken":
            import tiktoken

            enc = tiktoken_encoding(model)
            self.fn, self.api, self.version = enc.encode_ordinary, "encode_ordinary", tiktoken
        elif contender == "hf":
            import tokenizers

            os.environ["RAYON_NUM_THREADS"] = "1"
            tok = tokenizers.Tokenizer.from_file(hf_json)
            self.fn = lambda t: tok.encode(t, add_special_tokens=False).ids
            self.api, self.version = "Tokenizer.encode(...).ids", tokenizers
        elif contender == "gigatoken":
            import gigatoken

            tok = gigatoken.Tokenizer.from_json(Path(hf_json).read_text(encoding="utf-8"))
            self.fn = tok.as_tiktoken().encode_ordinary
            self.api, self.version = "from_json(...).as_tiktoken().encode_ordinary", gigatoken
        self.fn(self.text[:20000])  # warm up

    def call(self, mode: str):
        return self.fn, self.text

    def ids(self, mode: str, out):
        return array("I", out), None


def worker(argv: list[str]) -> int:
    contender, model, path, max_bytes, hf_json = argv
    say = protocol()
    return job_worker(
        say,
        lambda: Job(contender, model, path, int(max_bytes), hf_json),
        lambda job: {
            "bytes": job.nbytes,
            "version": module_version(job.version),
            "api": job.api,
        },
        mode="serve",
        modes=MODES,
        by_hand=(),
        repeat=1,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--files", default=None, help="corpus file stems (default: all)")
    ap.add_argument("--max-mb", type=float, default=2.0, help="first MB of each file")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--worker", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    models = pick(args.models, MODELS, "model")
    names = pick(args.contenders, CONTENDERS, "contender")
    if models is None or names is None:
        return 2
    files = sorted(CORPORA.glob("*.txt"))
    if args.files:
        stems = set(args.files.split(","))
        files = [f for f in files if f.stem in stems]
    if not files:
        print(f"no corpus files in {CORPORA}", file=sys.stderr)
        return 2
    env = dict(os.environ, SUBWORD_CACHE_DIR=str(REFDATA), SUBWORD_OFFLINE="1")
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "benches"), env.get("PYTHONPATH", "")])
    max_bytes = int(args.max_mb * MB)
    started = time.time()
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="subword-bench-open-") as work:
        for model in models:
            os.environ.update(SUBWORD_CACHE_DIR=str(REFDATA))
            hf_json = hf_json_path(model, work)
            base = baseline(model)
            for f in files:
                present = [n for n in names if not (n == "tiktoken" and model == "deepseek_v3")]

                def start(name, f=f, model=model, hf_json=hf_json):
                    cmd = [sys.executable, __file__, "--worker", name, model, str(f)]
                    return Worker(cmd + [str(max_bytes), hf_json], env, timeout=600)

                got = run_file(
                    f"{model}/{f.name}",
                    present,
                    start,
                    hello_keys=("bytes", "version", "api"),
                    modes=MODES,
                    baseline=base,
                    repeat=args.repeat,
                    diff=lambda *a: "ids differ",
                    tmp_prefix="subword-bench-open-diff-",
                )
                for name, row in got.items():
                    rows.append({"model": model, "file": f.name, "contender": name, **row})
    summarize(rows, models, files)
    print(f"\n{run_took(time.time() - started)}")
    if args.json:
        write_json(args.json, {"rows": rows, "max_bytes": max_bytes, "repeat": args.repeat})
    return 0


def summarize(rows: list[dict], models: list[str], files: list[Path]) -> None:
    print("## open models, one thread, list out (MB/s; ids checked against the baseline)\n")
    for model in models:
        mine = [r for r in rows if r["model"] == model]
        base = baseline(model)
        for r in mine:
            r["list_vs_base"] = None
        print(f"### {model} (baseline: {base})\n")
        print(rate_table(mine, MODES, {}, base))
        print()
    print("### subword ÷ the fastest peer with exact ids\n")
    print("| model | " + " | ".join(f.stem for f in files) + " |")
    print("|---|" + "---:|" * len(files))
    for model in models:
        cells = []
        for f in files:
            group = [r for r in rows if r["model"] == model and r["file"] == f.name]
            ours = next((r for r in group if r["contender"] == "subword"), {})
            peers = [
                r.get("list_mbps")
                for r in group
                if not r["contender"].startswith("subword")
                and r.get("list_mbps")
                and (r.get("list_ids_equal") or r["contender"] == baseline(model))
            ]
            exact = ours.get("list_ids_equal") or baseline(model) == "subword"
            ratio = ours.get("list_mbps") / max(peers) if peers and ours.get("list_mbps") else None
            cells.append(fmt(ratio, ".2f", "×") + ("" if exact else " (ids differ)"))
        print(f"| {model} | " + " | ".join(cells) + " |")
    busy_warning(rows)


if __name__ == "__main__":
    sys.exit(main())
