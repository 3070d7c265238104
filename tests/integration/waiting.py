"""`eventually`: how an integration test waits for a condition. It polls the condition until it
holds or the deadline passes, and then fails loudly with what it waited for and what it saw
last, never returning silently and never standing in a sleep for the condition."""

from __future__ import annotations

import time
import typing as t

T = t.TypeVar("T")
POLL = 0.25  # seconds between two looks


def eventually(
    check: t.Callable[[], T | None],
    *,
    what: str,
    seconds: float = 60,
    seen: t.Callable[[], object] | None = None,
) -> T:
    """The first truthy answer of `check`, polled every POLL seconds for at most `seconds`.

    At the deadline: AssertionError naming `what` was waited for and, when `seen` is given,
    what it says about the last look (a count, the states of the objects)."""
    deadline = time.monotonic() + seconds
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() >= deadline:
            break
        time.sleep(POLL)
    last = f"; last seen: {seen()!r}" if seen is not None else ""
    raise AssertionError(f"not within {seconds:.0f}s: {what}{last}")
