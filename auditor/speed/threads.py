"""I/O in threads: each item's work in a thread of its own (drift reads each cluster so).

Reading a cluster waits on the network; threads wait together. Every thread has ended when
`each` returns, but on Ctrl-C or SIGTERM: the process ends at once (auditor/cli/signals.py), and
a read in flight would hold it until its deadline (each read has one: auditor/live/bounded.py).
"""

from __future__ import annotations

import typing as t
from concurrent.futures import Future, ThreadPoolExecutor

I = t.TypeVar("I")  # noqa: E741 - an item
R = t.TypeVar("R")  # its result
X = t.TypeVar("X", bound=BaseException)


def each(
    work: t.Callable[[I], R], items: t.Sequence[I], caught: tuple[type[X], ...]
) -> list[R | X]:
    """`work(item)` for every item at once, in the items' order: its result, or the exception
    of `caught` it raised; any other raises here, once every thread has ended."""
    pool = ThreadPoolExecutor(max_workers=max(1, len(items)))
    try:
        running = [pool.submit(work, item) for item in items]
        out = [_outcome(job, caught) for job in running]
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    except BaseException:
        pool.shutdown(wait=True)
        raise
    pool.shutdown(wait=True)
    return out


def _outcome(job: Future[R], caught: tuple[type[X], ...]) -> R | X:
    try:
        return job.result()
    except caught as exc:
        return exc


F = t.TypeVar("F")  # the foreground's result


def meanwhile(
    background: t.Sequence[t.Callable[[], R]], foreground: t.Callable[[], F]
) -> tuple[F, list[R]]:
    """`foreground()` here while every `background` call runs in a thread of its own (verify
    watches a namespace while it makes Jobs); its result and theirs, in order, once all ended.
    An exception of any is raised once every thread has ended."""
    with ThreadPoolExecutor(max_workers=max(1, len(background))) as pool:
        running = [pool.submit(call) for call in background]
        here = foreground()
        return here, [job.result() for job in running]
