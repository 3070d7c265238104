"""speed/threads.py: I/O at once, results in order, every thread ended before an error is raised."""

from __future__ import annotations

import threading

import pytest

from auditor.speed import threads

WAIT = 10.0  # seconds: far past what a thread takes to start; reached only if the calls ran in turn


def test_each_runs_the_items_at_once_and_keeps_their_order() -> None:
    started = threading.Barrier(3, timeout=WAIT)  # passes only when all three wait together

    def work(item: int) -> int:
        started.wait()
        return item * 10

    assert threads.each(work, [1, 2, 3], caught=()) == [10, 20, 30]


def test_each_returns_a_caught_error_in_its_place_and_raises_any_other() -> None:
    def work(item: int) -> int:
        if item == 2:
            raise LookupError("two")
        if item == 3:
            raise ValueError("three")
        return item

    with pytest.raises(ValueError, match="three"):
        threads.each(work, [1, 2, 3], caught=(LookupError,))
    out = threads.each(work, [1, 2], caught=(LookupError,))
    assert out[0] == 1 and isinstance(out[1], LookupError)


def test_meanwhile_runs_the_foreground_while_the_background_runs() -> None:
    """verify's watches must be open while its Jobs are made: a background call that waits for
    the foreground would never end if the calls ran in turn."""
    made = threading.Event()
    seen: list[bool] = []

    def watch() -> str:
        seen.append(made.wait(WAIT))
        return "events"

    def submit() -> list[str]:
        made.set()
        return ["job-1"]

    assert threads.meanwhile([watch, watch], submit) == (["job-1"], ["events", "events"])
    assert seen == [True, True]


def test_meanwhile_raises_a_background_error_after_the_foreground_ran() -> None:
    ran: list[str] = []

    def broken() -> str:
        raise ConnectionError("watch refused")

    with pytest.raises(ConnectionError, match="watch refused"):
        threads.meanwhile([broken], lambda: ran.append("submitted"))
    assert ran == ["submitted"]
