"""The garbage collector's pace, for runs that build many long-lived objects and few cycles.

A validate run builds hundreds of thousands of long-lived objects and next to no cycles: the
collector's default pace (a pass every 700 allocations) costs about a tenth of a cached run.
What a drift run read stays alive until the process ends: the collector's last pass over it
at exit would cost ~0.1 s of a 6,000-object run, and frees nothing the exit does not.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import gc
import typing as t

P = t.ParamSpec("P")
R = t.TypeVar("R")


@contextlib.contextmanager
def seldom() -> t.Iterator[None]:
    """Collect seldom until the block ends (the pace before restored)."""
    before = gc.get_threshold()
    gc.set_threshold(200_000, 30, 30)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def seldom_during(function: t.Callable[P, R]) -> t.Callable[P, R]:
    """`function`, collecting seldom while it runs."""

    @functools.wraps(function)
    def seldom_collected(*args: P.args, **kwargs: P.kwargs) -> R:
        with seldom():
            return function(*args, **kwargs)

    return seldom_collected


def seldom_to_exit() -> None:
    """Collect seldom from now on, and not at the exit: for a command whose process ends with
    it and whose objects live to its end (drift: its imports, what it read). Restoring the
    pace would walk all it built at once (~40 ms after a 6,000-object drift run); an in-process
    caller (a test) keeps the slower pace, which only collects less often."""
    gc.set_threshold(200_000, 30, 30)
    spare_at_exit()


def spare_at_exit() -> None:
    """No collection over what is alive when the process exits (registered once)."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
