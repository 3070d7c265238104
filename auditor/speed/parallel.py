"""Parallel execution, in one place: pieces of pure-Python work shared among forked processes.

Reading clusters is I/O and runs in threads; comparing, validating and loading manifests are
pure Python, which threads would run in turns on one core. A pipeline hands this module a
function and the items to apply it to; the results come back in the items' order, the same as
a plain `[work(item) for item in items]` in this process, which is also what runs when forking
is not for here (`processes` says 1):

- the guard: a fork only on a platform that forks, with a second core, and while no other
  thread runs (one holding a lock at the fork would leave it held in the child for good; the
  deadline watchdog is the exception, auditor/live/forking.py);
- how work reaches a worker: a child is forked with the function and the items in its memory,
  so nothing is sent to it; it sends back only its results, pickled, through a pipe;
- the fallback: a child that fails in any way (an exception in the work, a result that does
  not pickle, a crash) has its items computed again in this process, so an error surfaces
  exactly as it would without the fork, and nothing is lost.

The caller's work must not start threads that outlive it, nor depend on which process runs it.
This module imports nothing heavy: drift forks its repository side before it imports the
Kubernetes client (auditor/drift/comparer.py).

Runs of a program (an executable, its flags, what it reads on stdin: a sweep's simulations) can
also go beyond this machine: `engine` is the one place that says where a batch of them runs,
on the local cores (through `run`) by default, or as Ray tasks (auditor/speed/ray.py) when
asked; either way each run's `Finished` comes back in the runs' order, so what the caller makes
of them is the same bytes. A run itself is auditor/speed/programs.py's, which both engines
import (neither imports the other's module: an import-linter contract).
"""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
import typing as t
from dataclasses import dataclass

from auditor.errors import ConfigError
from auditor.live import forking
from auditor.speed.programs import Finished as Finished
from auditor.speed.programs import Program as Program
from auditor.speed.programs import execute as execute

I = t.TypeVar("I")  # noqa: E741 - an item
R = t.TypeVar("R")  # its result


def may_fork() -> bool:
    """Whether this process may fork now: a second core, and no thread but the watchdog."""
    return (os.cpu_count() or 1) > 1 and forking.alone()


def processes(wanted: int | None, items: int) -> int:
    """How many processes (this one among them) should share `items` pieces of work: `wanted`,
    else one per core, at most one per item; 1 when this process may not fork."""
    count = min(items, wanted or os.cpu_count() or 1)
    return count if count > 1 and may_fork() else 1


def run(work: t.Callable[[I], R], items: t.Sequence[I], *, jobs: int | None = None) -> list[R]:
    """`[work(item) for item in items]`, shared among `processes(jobs, ...)` processes: this
    one takes every n-th item, a forked child each of the other shares."""
    return start(work, items, processes(jobs, len(items)), share=True).results()


def start(
    work: t.Callable[[I], R], items: t.Sequence[I], count: int, *, share: bool
) -> Running[I, R]:
    """Fork the children that will compute `items` now; `Running.results` collects them.
    With `share`, this process is one of `count` and computes its share in `results`; without,
    `count` children compute everything while this process does something else meanwhile.
    No child (nothing to share, or forking not for here): all is computed in `results`."""
    children = count - 1 if share else count
    if children < 1 or not may_fork():
        return Running(work, items, list(range(len(items))), [])
    ways = children + 1 if share else children
    shares = [list(range(k, len(items), ways)) for k in range(ways)]
    mine = shares.pop(0) if share else []
    sys.stdout.flush()  # what is buffered would be written twice, once by each process
    sys.stderr.flush()
    gc.freeze()  # the collector neither walks nor copies (on write) what the children inherit
    forked = [_fork(work, items, indexes) for indexes in shares if indexes]
    return Running(work, items, mine, forked, frozen=True)


@dataclass
class _Child:
    pid: int
    pipe: int  # the read end of what it sends back
    indexes: list[int]  # of the items it computes


def _fork(work: t.Callable[[I], R], items: t.Sequence[I], indexes: list[int]) -> _Child:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running the parent's exit code
        code = 1
        with contextlib.suppress(BaseException):
            os.close(read_end)
            gc.disable()  # short-lived: its garbage goes with it
            data = pickle.dumps([work(items[i]) for i in indexes], pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            code = 0
        os._exit(code)
    os.close(write_end)  # before the next fork: that child's EOF must not wait on this end
    return _Child(pid, read_end, indexes)


class Running(t.Generic[I, R]):
    """Work started by `start`: its results, collected once."""

    def __init__(
        self,
        work: t.Callable[[I], R],
        items: t.Sequence[I],
        mine: list[int],
        children: list[_Child],
        *,
        frozen: bool = False,
    ) -> None:
        self._work, self._items, self._mine, self._children = work, items, mine, children
        self._frozen = frozen
        self.forked = bool(children)  # whether children were forked for the work

    def results(self) -> list[R]:
        """Each item's result, in the items' order: this process's share, then the children's,
        each failed child's items computed here."""
        out: dict[int, R] = {}
        try:
            for i in self._mine:
                out[i] = self._work(self._items[i])
            while self._children:
                child = self._children.pop(0)
                got = _collect(child)
                indexes = child.indexes
                if got is None:  # the child failed: compute here, errors and all
                    got = [self._work(self._items[i]) for i in indexes]
                out.update(zip(indexes, got, strict=True))
        finally:
            self.close()
        return [out[i] for i in range(len(self._items))]

    def close(self) -> None:
        """End the children not collected (this process failed meanwhile)."""
        for child in self._children:
            with contextlib.suppress(OSError):
                os.kill(child.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.close(child.pipe)
            with contextlib.suppress(OSError):
                os.waitpid(child.pid, 0)
        self._children = []
        if self._frozen:
            gc.unfreeze()
            self._frozen = False


def _collect(child: _Child) -> list[t.Any] | None:
    """What `child` sent back, once it ended; None when it failed."""
    with os.fdopen(child.pipe, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(child.pid, 0)
    if status != 0 or not data:
        return None
    try:
        got = pickle.loads(data)  # our own child's bytes
    except Exception:
        return None
    return t.cast(list[t.Any], got) if len(got) == len(child.indexes) else None


class Engine(t.Protocol):
    def programs(self, runs: t.Sequence[Program]) -> list[Finished]:
        """Each run's end, in the runs' order."""
        ...


class Local:
    """The local cores: the runs shared among forked processes, as `run` shares any work."""

    def programs(self, runs: t.Sequence[Program]) -> list[Finished]:
        return run(execute, runs)


ENGINES = "local, ray or ray=ADDRESS"


@contextlib.contextmanager
def engine(on: str) -> t.Iterator[Engine]:
    """The engine `on` names, ready (a Ray cluster connected) until the block ends: `local`,
    the default; `ray`, the Ray cluster `ray.init()` finds (RAY_ADDRESS, one started on this
    machine, else a local instance for the run); `ray=ADDRESS`, that Ray cluster."""
    kind, sep, address = on.partition("=")
    if on == "local":
        yield Local()
    elif kind == "ray" and (address or not sep):
        from auditor.speed import ray  # Ray is an extra: imported only when asked for

        with ray.connected(address or None) as cluster:
            yield cluster
    else:
        raise ConfigError(f"--on {on}: an engine is {ENGINES}")
