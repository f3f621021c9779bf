"""Atomic file writes, shared by every ``save`` in the package.

A file is written to a temporary beside it, ``<file>.subword-tmp-<pid>``, flushed to disk
(fsync), then renamed over the target, and the folder is synced so that the rename itself
survives a crash. A reader sees either the old file or the new one, never a torn one. A process
killed mid-write leaves only a temporary with that recognisable name; the next save to the same
file removes it (``remove_strays``).
"""

from __future__ import annotations

import contextlib
import glob
import os

TMP_MARK = ".subword-tmp-"


def tmp_path(path: str) -> str:
    """The temporary this process writes before renaming it to ``path``."""
    return f"{path}{TMP_MARK}{os.getpid()}"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return False  # our own earlier, failed save: nothing is still writing it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: the process exists
        return True
    return True


def remove_strays(path: str) -> list[str]:
    """Remove temporaries of earlier saves to ``path`` whose process is gone; returns them."""
    removed = []
    for stray in glob.glob(glob.escape(path + TMP_MARK) + "*"):
        pid = stray[len(path) + len(TMP_MARK) :]
        if pid.isdigit() and _pid_alive(int(pid)):
            continue  # another process's save in progress
        with contextlib.suppress(OSError):
            os.remove(stray)
            removed.append(stray)
    return removed


def fsync_file(path: str) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def fsync_dir(path: str) -> None:
    """Make renames in the folder of ``path`` durable (best effort: not every OS allows it)."""
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_tmp(path: str, data: str | bytes) -> str:
    """Write ``data`` to ``tmp_path(path)`` and fsync it; returns the temporary's name. On an
    error nothing is left behind."""
    remove_strays(path)
    tmp = tmp_path(path)
    try:
        if isinstance(data, str):
            f = open(tmp, "w", encoding="utf-8")
        else:
            f = open(tmp, "wb")
        with f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    return tmp


def write_atomic(path: str | os.PathLike, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` (str is written as UTF-8) atomically and durably."""
    path = os.fspath(path)
    tmp = write_tmp(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    fsync_dir(path)
