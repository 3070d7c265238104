"""The resident validates a test starts (auditor/lsp/resident.py), each stopped at its end:
`stopped` waits for a process's exit under a deadline (a pidfd, no polling)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
from pathlib import Path

from auditor.lsp import ask

DEADLINE = 60.0  # seconds for a resident to exit once told to, or once idle


def exited(pid: int, deadline: float = DEADLINE) -> bool:
    """Whether process `pid` ends within `deadline` seconds (True if it is gone already)."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], deadline)
    finally:
        os.close(fd)
    if ready:
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # ours: reaped, no zombie left
    return bool(ready)


def running() -> dict[Path, int]:
    """Each resident of this cache directory that holds its lock: its lock file and pid."""
    import fcntl

    found = {}
    for lock in sorted(ask.folder().glob("*.lock")) if ask.folder().exists() else []:
        with open(lock) as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                found[lock] = int(lock.read_text().split()[0])
    return found


def stop_all() -> list[int]:
    """SIGTERM every resident that runs; the pids of those that did not exit in time."""
    stuck = []
    for pid in running().values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        if not exited(pid):
            os.kill(pid, signal.SIGKILL)
            stuck.append(pid)
    return stuck
