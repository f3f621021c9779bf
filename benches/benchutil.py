"""What the benchmark scripts share: measuring in a worker, driving workers, the common tables."""

from __future__ import annotations

import gc
import hashlib
import json
import os
import platform
import resource
import select
import signal
import subprocess
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
MB = 1e6


# --------------------------------------------------------------------------
# Measuring, in the process being measured
# --------------------------------------------------------------------------


def peak_rss() -> dict[str, float]:
    """Peak (and current) resident memory of this process, MiB.

    On Linux ru_maxrss is not reset by exec: a child starts with its parent's high-water mark.
    VmHWM is the peak of this process's own address space, so it is what "peak MB" reports;
    ru_maxrss is kept alongside.
    """
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    out = {"ru_maxrss_mb": kb / 1024 if sys.platform != "darwin" else kb / 2**20}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    out["peak_mb"] = int(line.split()[1]) / 1024
                elif line.startswith("VmRSS:"):
                    out["rss_mb"] = int(line.split()[1]) / 1024
    except OSError:
        pass
    out.setdefault("peak_mb", out["ru_maxrss_mb"])
    return out


def other_busy_cores(interval: float = 0.5) -> float | None:
    """Cores kept busy during `interval` (from /proc/stat) while the benchmark itself idles."""

    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v[:8]), v[3] + (v[4] if len(v) > 4 else 0)

    try:
        t0, i0 = sample()
        time.sleep(interval)
        t1, i1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    if t1 == t0:
        return 0.0
    return (1 - (i1 - i0) / (t1 - t0)) * (os.cpu_count() or 1)


def _cpu_between(u0, u1) -> float:
    return (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)


def timed_call(fn, *args) -> tuple[object, dict]:
    """fn(*args) once: (its result, wall/CPU seconds, cores, peak RSS and the RSS before it)."""
    before = peak_rss()
    u0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    result = fn(*args)
    wall = time.perf_counter() - t0
    u1 = resource.getrusage(resource.RUSAGE_SELF)
    # read now: turning the result into Python objects (vocab, merges) can build big ones
    peak = peak_rss()
    cpu = _cpu_between(u0, u1)
    return result, {
        "wall_s": wall,
        "cpu_s": cpu,
        "cores": cpu / wall if wall else None,
        "peak_mb": peak["peak_mb"],
        "ru_maxrss_mb": peak["ru_maxrss_mb"],
        "import_rss_mb": before.get("rss_mb"),
    }


# --------------------------------------------------------------------------
# Libraries and inputs
# --------------------------------------------------------------------------


def dist_version(dist: str) -> str:
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:  # noqa: BLE001
        return "?"


def module_version(mod) -> str:
    v = getattr(mod, "__version__", None)
    return str(v) if v else dist_version(mod.__name__)


def import_subword():
    try:
        import subword
    except ModuleNotFoundError as exc:
        if exc.name != "subword":
            raise
        # not installed: maybe built in place (maturin develop) next to the sources
        sys.path.insert(0, str(REPO / "python"))
        import subword  # noqa: F811
    return subword


def byte_alphabet() -> list[str]:
    """GPT-2's printable stand-in for each byte value (index = byte)."""
    keep = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAC + 1), *range(0xAE, 0xFF + 1)]
    table: dict[int, str] = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return [table[b] for b in range(256)]


def read_text(path: str, max_bytes: int) -> str:
    data = Path(path).read_bytes()
    if max_bytes and len(data) > max_bytes:
        data = data[:max_bytes]
        for cut in range(4):  # do not split a UTF-8 sequence
            try:
                return data[: len(data) - cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
    return data.decode("utf-8")


def warmup_items(items: list[str], budget: int, sep: int = 0) -> list[str]:
    """The first items up to `budget` characters (each counted with `sep` more; budget < 0: all),
    at least one."""
    acc, k = 0, 0
    while k < len(items) and (budget < 0 or acc < budget):
        acc += len(items[k]) + sep
        k += 1
    return items[: max(k, 1)]


# --------------------------------------------------------------------------
# Ids: fingerprints and dumps
# --------------------------------------------------------------------------


def ids_array(ids) -> array:
    a = array("I")
    a.extend(ids)
    return a


def flatten(batch) -> tuple[array, array]:
    flat, lengths = array("I"), array("Q")
    for ids in batch:
        flat.extend(ids)
        lengths.append(len(ids))
    return flat, lengths


def digest(*arrays: array) -> str:
    h = hashlib.blake2b(digest_size=16)
    for a in arrays:
        h.update(a.tobytes())
    return h.hexdigest()


# --------------------------------------------------------------------------
# Encode worker: one contender, one file, in its own process
# --------------------------------------------------------------------------


class EncodeJob:
    """A loaded encoder and its input, timed one mode at a time.

    A subclass sets `nbytes` (UTF-8 bytes of the input) and defines call(mode) -> (fn, arg) and
    ids(mode, fn(arg)) -> (flat ids, per-item counts, or None for a single text).
    """

    def __init__(self) -> None:
        self.checked: dict[str, dict] = {}

    def call(self, mode: str):
        raise NotImplementedError

    def ids(self, mode: str, out) -> tuple[array, array | None]:
        raise NotImplementedError

    def run(self, mode: str) -> dict:
        fn, arg = self.call(mode)
        gc.collect()
        gc.disable()
        try:
            u0 = resource.getrusage(resource.RUSAGE_SELF)
            t0 = time.perf_counter()
            out = fn(arg)
            secs = time.perf_counter() - t0
            u1 = resource.getrusage(resource.RUSAGE_SELF)
        finally:
            gc.enable()
        cpu = _cpu_between(u0, u1)
        # cores: CPU time / wall time, all threads; shows whether a call ran in parallel
        res = {"mode": mode, "secs": secs, "mbps": self.nbytes / MB / secs, "cores": cpu / secs}
        if mode not in self.checked:  # fingerprint the ids once per mode, outside the timing
            flat, lengths = self.ids(mode, out)
            arrays = (flat,) if lengths is None else (flat, lengths)
            self.checked[mode] = {"digest": digest(*arrays), "n_ids": len(flat)}
            res.update(self.checked[mode])
        del out
        return res

    def dump(self, mode: str, dest: str) -> dict:
        """Write the ids (uint32, flattened) and the per-item counts (uint64) for a diff."""
        fn, arg = self.call(mode)
        flat, lengths = self.ids(mode, fn(arg))
        if lengths is None:
            lengths = array("Q", [len(flat)])
        with open(dest, "wb") as f:
            flat.tofile(f)
        with open(dest + ".len", "wb") as f:
            lengths.tofile(f)
        return {"dumped": dest, "n_ids": len(flat)}


def error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def protocol() -> Callable[[dict], None]:
    """say(obj): one JSON line on the real stdout; whatever the libraries print goes to stderr."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def say(obj: dict) -> None:
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    return say


def job_worker(
    say,
    make_job: Callable[[], EncodeJob],
    hello: Callable[[EncodeJob], dict],
    *,
    mode: str,
    modes: tuple[str, ...],
    by_hand: tuple[str, ...],
    repeat: int,
) -> int:
    """The worker after its set-up: load the job (or say why not) and say hello(job); then, for
    a `mode` in by_hand, print the best of `repeat` runs of that mode (of every mode for "both")
    with the peak in the same JSON line, else serve the parent."""
    try:
        job = make_job()
    except Exception as exc:  # noqa: BLE001
        say({"ready": False, "error": error_text(exc)})
        return 1
    hi = {"ready": True, **hello(job)}
    if mode in by_hand:
        best: dict[str, dict] = {}
        for _ in range(repeat):
            for m in modes if mode == "both" else (mode,):
                r = job.run(m)
                if m not in best or r["secs"] < best[m]["secs"]:
                    best[m] = {**best.get(m, {}), **r}
        say({**hi, "results": best, **peak_rss()})
        return 0
    say(hi)
    return serve(job, say, modes)


def serve(job: EncodeJob, say, modes) -> int:
    """Answer the parent's commands on stdin (a mode, dump, peak, quit) until quit or EOF."""
    for line in sys.stdin:
        cmd = line.split()
        if not cmd:
            continue
        try:
            if cmd[0] in modes:
                say(job.run(cmd[0]))
            elif cmd[0] == "dump":
                say(job.dump(cmd[1], cmd[2]))
            elif cmd[0] == "peak":
                say(peak_rss())
            elif cmd[0] == "quit":
                say({"bye": True})
                return 0
            else:
                say({"error": f"unknown command {cmd[0]!r}"})
        except Exception as exc:  # noqa: BLE001
            say({"error": error_text(exc)})
    return 0


# --------------------------------------------------------------------------
# Parent: workers
# --------------------------------------------------------------------------


class WorkerError(RuntimeError):
    pass


def exit_status(code: int) -> str:
    if code >= 0:
        return f"exited with {code}"
    try:
        sig = signal.Signals(-code).name
    except ValueError:
        sig = f"signal {-code}"
    hint = (
        " (was its extension module rebuilt during the run?)"
        if sig in ("SIGBUS", "SIGSEGV")
        else ""
    )
    return f"killed by {sig}{hint}"


class Worker:
    """A serving worker process, spoken to in JSON lines over its stdin and stdout."""

    def __init__(self, cmd: list[str], env: dict[str, str], timeout: float):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=env
        )
        self.buf = b""
        self.timeout = timeout

    def stderr_tail(self, n: int = 800) -> str:
        """': <last lines of the worker's stderr>', or '' if it said nothing."""
        self.err.seek(0)
        tail = self.err.read().decode("utf-8", "replace")[-n:].strip()
        return f": {tail}" if tail else ""

    def read(self) -> dict:
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + self.timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerError(f"no answer in {self.timeout:g} s")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise WorkerError(f"worker {exit_status(self.proc.wait())}{self.stderr_tail()}")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def ask(self, cmd: str) -> dict:
        try:
            self.proc.stdin.write(cmd.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError as exc:
            raise WorkerError(f"worker is gone{self.stderr_tail()}") from exc
        reply = self.read()
        if "error" in reply:
            raise WorkerError(reply["error"])
        return reply

    def peak(self) -> dict:
        try:
            return self.ask("peak")
        except WorkerError as exc:
            return {"peak_error": str(exc)}

    def close(self) -> None:
        try:
            self.ask("quit")
        except WorkerError:
            pass
        self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.err.close()

    def probe(self) -> dict:
        """The one line a probing worker prints (or why there is none); the worker is ended."""
        try:
            r = self.read()
        except WorkerError as exc:
            r = {"ok": False, "error": str(exc)}
        self.kill()
        return r


def run_once(cmd: list[str], env: dict[str, str], timeout: float) -> dict:
    """Run a worker that prints one JSON line and exits; that line, or ok=False and why."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return {"ok": False, "error": f"timeout after {timeout:.0f} s"}
        err.seek(0)
        tail = err.read().decode("utf-8", "replace")[-600:].strip()
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if not lines:
        return {"ok": False, "error": f"worker {exit_status(proc.returncode)}: {tail}"}
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        return {"ok": False, "error": f"bad worker output {lines[-1][:200]!r}: {tail}"}


def rotated(names: list[str], rep: int) -> list[str]:
    """`names` rotated by `rep`, so that no contender always goes first."""
    k = rep % max(len(names), 1)
    return names[k:] + names[:k]


_STANDARD_KEYS = frozenset(("mode", "secs", "mbps", "cores", "digest", "n_ids"))


def run_file(
    fname: str,
    names: list[str],
    start: Callable[[str], Worker],
    *,
    hello_keys: tuple[str, ...],
    modes: tuple[str, ...],
    baseline: str,
    repeat: int,
    diff: Callable[[str, str, str], str],
    tmp_prefix: str,
) -> dict[str, dict]:
    """Every contender on one file: a serving worker each, `repeat` rounds of every mode taken
    in turns, then the peaks and the ids against `baseline`'s (diff(name, mine, theirs) is the
    note on dumps that differ).  A worker whose hello has "modes" is asked only for those (a
    contender without some API); keys of a reply beyond the standard ones are kept, from the
    best run, as row[f"{mode}_{key}"].  Returns name -> row."""
    workers: dict[str, Worker] = {}
    rows: dict[str, dict] = {}
    supported: dict[str, tuple[str, ...]] = {}
    for name in names:  # start one at a time so loads and warm-ups do not overlap
        w = start(name)
        try:
            hello = w.read()
        except WorkerError as exc:
            hello = {"ready": False, "error": str(exc)}
        if not hello.get("ready"):
            print(f"  {name}: cannot run on {fname}: {hello.get('error')}", file=sys.stderr)
            rows[name] = {"error": hello.get("error")}
            w.kill()
            continue
        workers[name] = w
        rows[name] = {k: hello[k] for k in hello_keys if k in hello}
        supported[name] = tuple(hello.get("modes", modes))

    live = list(workers)
    for rep in range(repeat):
        noise = other_busy_cores()  # all workers idle now: whatever runs is someone else
        if noise is not None:
            for row in rows.values():
                row["others_busy_cores"] = max(row.get("others_busy_cores", 0.0), noise)
        order = rotated(live, rep)
        for mode in modes:
            for name in order:
                if name not in workers or mode not in supported[name]:
                    continue
                try:
                    r = workers[name].ask(mode)
                except WorkerError as exc:
                    print(f"  {name}: {exc}", file=sys.stderr)
                    rows[name]["error"] = str(exc)
                    workers.pop(name).kill()
                    continue
                row = rows[name]
                row.setdefault(f"{mode}_all_secs", []).append(r["secs"])
                if f"{mode}_secs" not in row or r["secs"] < row[f"{mode}_secs"]:
                    row[f"{mode}_secs"] = r["secs"]
                    row[f"{mode}_mbps"] = r["mbps"]
                    row[f"{mode}_cores"] = r["cores"]
                    for k, v in r.items():
                        if k not in _STANDARD_KEYS:
                            row[f"{mode}_{k}"] = v
                if "digest" in r:
                    row[f"{mode}_digest"] = r["digest"]
                    row[f"{mode}_n_ids"] = r["n_ids"]
        print(f"  {fname}: repeat {rep + 1}/{repeat} done", file=sys.stderr)

    for name, w in workers.items():  # before any dump below re-encodes
        rows[name].update(w.peak())

    base = rows.get(baseline, {})
    with tempfile.TemporaryDirectory(prefix=tmp_prefix) as tmp:
        for name, row in rows.items():
            for mode in modes:
                d, bd = row.get(f"{mode}_digest"), base.get(f"{mode}_digest")
                if d is None or bd is None:
                    row[f"{mode}_ids_equal"] = None
                    continue
                row[f"{mode}_ids_equal"] = d == bd
                if d != bd and name in workers and baseline in workers:
                    try:
                        mine = workers[name].ask(f"dump {mode} {tmp}/{name}_{mode}")["dumped"]
                        ref = f"{tmp}/{baseline}_{mode}"
                        if not os.path.exists(ref):
                            workers[baseline].ask(f"dump {mode} {ref}")
                        row[f"{mode}_diff"] = diff(name, mine, ref)
                    except WorkerError as exc:
                        row[f"{mode}_diff"] = f"(diff failed: {exc})"
    for w in workers.values():
        w.close()
    return rows


def add_ratios(rows: dict[str, dict], modes, refs: dict[str, str]) -> None:
    """row[f"{mode}_{key}"] = its MB/s ÷ that of contender refs[key], for every row and mode."""
    for row in rows.values():
        for mode in modes:
            mine = row.get(f"{mode}_mbps")
            for key, ref in refs.items():
                theirs = rows.get(ref, {}).get(f"{mode}_mbps")
                row[f"{mode}_{key}"] = mine / theirs if mine and theirs else None


def aggregate(
    rows: list[dict],
    names: list[str],
    nfiles: int,
    modes,
    refs: dict[str, str],
    with_bytes: bool = False,
) -> list[dict]:
    """Per contender over all files: total bytes / total best seconds (only if every file ran)."""
    totals = {}
    for name in names:
        mine = [
            r
            for r in rows
            if r["contender"] == name and all(r.get(f"{mode}_secs") for mode in modes)
        ]
        if len(mine) != nfiles or nfiles < 2:
            continue
        nbytes = sum(r["bytes"] for r in mine)
        t = {"file": "**all files**", "contender": name}
        if with_bytes:
            t["bytes"] = nbytes
        for mode in modes:
            t[f"{mode}_mbps"] = nbytes / MB / sum(r[f"{mode}_secs"] for r in mine)
            eqs = [r.get(f"{mode}_ids_equal") for r in mine]
            t[f"{mode}_ids_equal"] = None if None in eqs else all(eqs)
        t["peak_mb"] = max((r.get("peak_mb") or 0) for r in mine) or None
        totals[name] = t
    add_ratios(totals, modes, refs)
    return list(totals.values())


# --------------------------------------------------------------------------
# Parent: training runs, one fresh worker each
# --------------------------------------------------------------------------


def ratio(a, b):
    return a / b if a is not None and b else None


def train_step(
    row: dict,
    label: str,
    rep: int,
    repeat: int,
    run: Callable[[], dict],
    done: Callable[[dict], str],
) -> None:
    """Repeat `rep` of one training run for `row` ("runs", "error"), the load of the machine
    sampled before it.  label: what runs, for the progress line; run(): the worker's reply;
    done(reply): its vocab, for the progress line."""
    if row.get("error"):
        return  # failed once: do not retry every repeat
    busy = other_busy_cores()
    print(
        f"{label} (repeat {rep + 1}/{repeat}, others busy {fmt(busy, '.1f')} cores)",
        file=sys.stderr,
    )
    r = run()
    r["others_busy_cores"] = busy
    row["runs"].append(r)
    if not r.get("ok"):
        row["error"] = r.get("error", "?")
        print(f"    failed: {row['error']}", file=sys.stderr)
    else:
        print(f"    {r['wall_s']:.2f} s, {r['peak_mb']:.0f} MB, {done(r)}", file=sys.stderr)


def summarize_runs(row: dict, keys: tuple[str, ...]) -> bool:
    """Best wall time, largest peak, and `keys` of the best run, into `row`; False if none ran."""
    ok = [r for r in row["runs"] if r.get("ok")]
    if not ok:
        return False
    best = min(ok, key=lambda r: r["wall_s"])
    row.update(
        version=best["version"],
        wall_s=best["wall_s"],
        cpu_s=best["cpu_s"],
        cores=best["cores"],
        peak_mb=max(r["peak_mb"] for r in ok),
        import_rss_mb=best.get("import_rss_mb"),
        **{k: best[k] for k in keys},
        all_wall_s=[r["wall_s"] for r in ok],
    )
    return True


def versus_hf(row: dict, base: dict) -> None:
    row["x_hf_time"] = ratio(row.get("wall_s"), base.get("wall_s"))
    row["x_hf_memory"] = ratio(row.get("peak_mb"), base.get("peak_mb"))


# --------------------------------------------------------------------------
# Command line and report
# --------------------------------------------------------------------------


def pick(text: str, known, what: str) -> list[str] | None:
    """The comma list `text`; None (and a message) if it names something not in `known`."""
    items = [c.strip() for c in text.split(",") if c.strip()]
    for n in items:
        if n not in known:
            print(f"unknown {what} {n!r} (know {', '.join(known)})", file=sys.stderr)
            return None
    return items


def fmt(x, spec: str, suffix: str = "") -> str:
    return "—" if x is None else format(x, spec) + suffix


def size_note(max_bytes: int) -> str:
    return "first %.1f MB of each file" % (max_bytes / MB) if max_bytes else "whole files"


def busy_warning(rows: list[dict]) -> None:
    """A report line when other processes kept the cores busy between the encode runs."""
    busy = max((r.get("others_busy_cores") or 0.0 for r in rows), default=0.0)
    if busy > 0.25:
        print(
            f"- **warning**: other processes kept up to {busy:.1f} of {os.cpu_count()} cores busy "
            "between runs; rates are lower and noisier than on an idle machine"
        )


def file_rows(files: list[Path], rows: list[dict]) -> dict[str, dict]:
    """File name -> the first of its rows that knows its size (the hello of a worker)."""
    first = {}
    for f in files:
        r = next((r for r in rows if r["file"] == f.name and r.get("bytes")), None)
        if r:
            first[f.name] = r
    return first


def error_note(r: dict, modes) -> None:
    """A report line for a row whose worker failed."""
    if r.get("error"):
        before = " (numbers are from the runs before)" if r.get(f"{modes[0]}_mbps") else ""
        print(f"- {r['contender']} on {r['file']}: {r['error']}{before}")


def _eq_cell(row: dict, modes, baseline: str) -> str:
    if row.get("contender") == baseline:
        return "(baseline)"
    cells = []
    for mode in modes:
        eq = row.get(f"{mode}_ids_equal")
        cells.append("—" if eq is None else ("yes" if eq else "**NO**"))
    return " / ".join(cells)


def rate_table(rows: list[dict], modes, refs: dict[str, str], baseline: str) -> str:
    """Markdown: MB/s of each mode with its ratios (refs: key -> column label), peak MB, ids."""
    head = ["file", "contender"]
    for mode in modes:
        head += [f"{mode} MB/s", *(f"× {label}" for label in refs.values())]
    head += ["peak MB", f"ids == {baseline} ({' / '.join(modes)})"]
    lines = [
        "| " + " | ".join(head) + " |",
        "|---|---|" + "---:|" * (len(head) - 3) + "---|",
    ]
    for r in rows:
        if r.get("error") and r.get(f"{modes[0]}_mbps") is None:
            lines.append(
                f"| {r['file']} | {r['contender']} | failed |"
                + " |" * (len(head) - 4)
                + f" {r['error'][:60]} |"
            )
            continue
        cells = [r["file"], r["contender"]]
        for mode in modes:
            cells.append(fmt(r.get(f"{mode}_mbps"), ".2f"))
            cells += [fmt(r.get(f"{mode}_{key}"), ".2f", "×") for key in refs]
        cells.append(fmt(r.get("peak_mb"), ".0f"))
        cells.append(
            _eq_cell(r, modes, baseline) + (" · worker died, see below" if r.get("error") else "")
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cores_table(fnames: list[str], names: list[str], rows: list[dict], modes) -> None:
    by = {(r["file"], r["contender"]): r for r in rows}
    print(f"### cores used (CPU time ÷ wall time of the best run), {' / '.join(modes)}\n")
    print("| file | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for fname in fnames:
        cells = []
        for n in names:
            r = by.get((fname, n), {})
            cells.append(" / ".join(fmt(r.get(f"{m}_cores"), ".1f") for m in modes))
        print(f"| {fname} | " + " | ".join(cells) + " |")
    print()


def run_took(elapsed: float) -> str:
    return (
        f"_run took {elapsed:.0f} s on {platform.machine()} / Python {platform.python_version()}_"
    )


def write_json(path: str, doc: dict, ensure_ascii: bool = True) -> None:
    Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=ensure_ascii) + "\n")
    print(f"wrote {path}", file=sys.stderr)
