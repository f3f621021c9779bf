"""What both benchmark scripts need from the process they run in."""

from __future__ import annotations

import os
import resource
import sys
import time


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


def fmt(x, spec: str, suffix: str = "") -> str:
    return "—" if x is None else format(x, spec) + suffix
