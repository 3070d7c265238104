"""Ctrl-C and SIGTERM: exit 130 and 143 at once, never 1 ("findings"), never a traceback.

The first signal is raised in the main thread as Interrupted (a KeyboardInterrupt, so code
that cleans up after Ctrl-C, as verify's scratch namespaces do, cleans up after SIGTERM too);
the process's forked workers are stopped at once (they get the default action: a loader or a
comparison has nothing to clean up). The command line then writes the report the run would
have written, marked incomplete, unless a report was already written, and the process ends
without waiting for threads still reading a cluster (os._exit: their reads would hold the exit
until their own deadline). A report being written is never cut: the signal waits until it is
whole (`held`). A second signal ends the process at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import typing as t

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A signal asked the run to stop."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by signal {signum} ({signal.Signals(signum).name})")

    @property
    def exit_code(self) -> int:
        return 128 + self.signum  # what a shell reports for a process the signal ended


class _State:
    installed = False
    received: int | None = None  # the first signal's number
    holding = 0  # > 0 while a report is written
    reported = False  # a report is written whole: no other may follow it


_STATE = _State()


def install() -> None:
    """In the console script's process only: a test runner keeps its own handlers."""
    for signum in HANDLED:
        signal.signal(signum, _on_signal)
    if not _STATE.installed:
        os.register_at_fork(after_in_child=_in_child)
    _STATE.installed = True


def starting() -> None:
    """A command starts: nothing reported yet (a test runner runs many in one process)."""
    _STATE.reported = False


def _on_signal(signum: int, _frame: object) -> None:
    if _STATE.received is not None:
        leave(128 + signum)  # asked twice: now
    _STATE.received = signum
    processes = sys.modules.get("multiprocessing")  # its children exist once it is imported
    for child in processes.active_children() if processes is not None else ():
        with contextlib.suppress(OSError, AttributeError):
            child.terminate()
    if not _STATE.holding:
        raise Interrupted(signum)


def _in_child() -> None:
    """A forked worker: the default actions, so a signal ends it without a traceback."""
    for signum in HANDLED:
        signal.signal(signum, signal.SIG_DFL)
    _STATE.installed, _STATE.received = False, None


@contextlib.contextmanager
def held() -> t.Iterator[None]:
    """Write a report whole: a signal arriving meanwhile is raised once it is written."""
    before = _STATE.received
    _STATE.holding += 1
    try:
        yield
    finally:
        _STATE.holding -= 1
    if before is None and _STATE.received is not None and not _STATE.holding:
        raise Interrupted(_STATE.received)


def mark_reported() -> None:
    _STATE.reported = True


def reported() -> bool:
    return _STATE.reported


def exit_code() -> int | None:
    """128 + the signal's number once one arrived."""
    return None if _STATE.received is None else 128 + _STATE.received


def installed() -> bool:
    return _STATE.installed


def leave(code: int) -> t.NoReturn:
    """End the process now: what is written is flushed; threads still reading are not waited
    for, nor are the interpreter's exit handlers run."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)
