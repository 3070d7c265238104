"""The stream seam: work fed message by message to a forked child gives what the same work in
this process gives; a child that fails leaves all of it to this process, errors and all; no
fork while another thread runs. And the reading threads: each item's outcome, in order."""

from __future__ import annotations

import os
import select
import signal
import threading
import typing as t

import pytest

from auditor.speed import stream, threads


class Summing(stream.Work[list[t.Any], t.Any, int, list[t.Any]]):
    """The state: the preparing pid, then (pid, message) for each message taken."""

    def __init__(self, crash_at: t.Any = None, parent: int = 0) -> None:
        self.crash_at, self.parent = crash_at, parent

    def prepare(self) -> list[t.Any]:
        return [os.getpid()]

    def early(self, state: list[t.Any]) -> int:
        return 41

    def take(self, state: list[t.Any], message: t.Any) -> None:
        if message == self.crash_at and os.getpid() != self.parent:
            os._exit(9)  # a crash, as a killed child
        state.append((os.getpid(), message))

    def finish(self, state: list[t.Any]) -> list[t.Any]:
        if state[-1] == (os.getpid(), "refuse"):
            raise ValueError("refused")
        return state


def _fed(work: Summing, messages: list[t.Any], *, fork: bool) -> tuple[bool, int, list[t.Any]]:
    fed = stream.Stream(work, fork=fork)
    early = fed.early()
    for message in messages:
        fed.put(message)
    return fed.forked, early, fed.result()


def test_a_forked_stream_gives_what_this_process_gives_in_the_messages_order() -> None:
    forked, early, got = _fed(Summing(), [1, 2, 3], fork=True)
    _, _, here = _fed(Summing(), [1, 2, 3], fork=False)
    assert forked and early == 41
    assert [m for _, m in got[1:]] == [m for _, m in here[1:]] == [1, 2, 3]
    assert {got[0], *(pid for pid, _ in got[1:])} == {got[0]} != {os.getpid()}
    assert {here[0], *(pid for pid, _ in here[1:])} == {os.getpid()}


def test_the_result_without_the_early_answer_asked_for() -> None:
    fed = stream.Stream(Summing(), fork=True)
    got = fed.result()
    assert got[0] != os.getpid() and got[1:] == []  # the child's, its early answer passed by


def test_a_child_that_crashes_leaves_the_work_to_this_process() -> None:
    forked, _, got = _fed(Summing(crash_at=2, parent=os.getpid()), [1, 2, 3], fork=True)
    assert forked and got == [os.getpid(), *((os.getpid(), m) for m in (1, 2, 3))]


def test_a_message_that_does_not_pickle_is_worked_on_here() -> None:
    lock = threading.Lock()
    forked, _, got = _fed(Summing(), [1, lock], fork=True)
    assert forked and got == [os.getpid(), (os.getpid(), 1), (os.getpid(), lock)]


@pytest.mark.parametrize("fork", [True, False])
def test_an_error_in_the_work_surfaces_as_in_process(fork: bool) -> None:
    with pytest.raises(ValueError, match="refused"):
        _fed(Summing(), [1, "refuse"], fork=fork)


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        forked, _, got = _fed(Summing(), [1], fork=True)
    finally:
        stop.set()
        thread.join()
    assert not forked and got == [os.getpid(), (os.getpid(), 1)]


class SteppingAhead(Summing):
    """Three steps ahead, each said on a pipe (the child's own pid) and kept in the state."""

    def __init__(self, said: int) -> None:
        super().__init__()
        self.said = said

    def ahead(self, state: list[t.Any]) -> bool:
        steps = sum(1 for s in state if s == "ahead")
        if steps == 3:
            return False
        state.append("ahead")
        os.write(self.said, b"%d\n" % os.getpid())
        return True


def test_a_child_steps_ahead_while_no_message_waits_and_this_process_never() -> None:
    """The parent puts nothing until the child has said its three steps: they are taken while
    it waits for messages, before the first one."""
    said_read, said = os.pipe()
    try:
        fed = stream.Stream(SteppingAhead(said), fork=True)
        assert fed.forked and fed.early() == 41
        lines = b""
        while lines.count(b"\n") < 3:
            ready, _, _ = select.select([said_read], [], [], 10)
            assert ready, "the child took no step ahead within 10 s"
            lines += os.read(said_read, 100)
        fed.put(1)
        got = fed.result()
        assert got[1:] == ["ahead"] * 3 + [(got[0], 1)] and got[0] != os.getpid()
        assert set(lines.split()) == {str(got[0]).encode()}
        _, _, here = _fed(SteppingAhead(said), [1], fork=False)
        assert here == [os.getpid(), (os.getpid(), 1)]  # in this process: no step ahead
    finally:
        os.close(said_read)
        os.close(said)


class TellsItsPid(Summing):
    def early(self, state: list[t.Any]) -> int:
        return int(state[0])  # the pid that prepared: the child's


def test_a_put_never_waits_for_the_child_to_take_its_message_in() -> None:
    """The child stopped (as a child busy comparing, or descheduled), a message larger than
    the pipe holds is put: the reader goes on at once; the child takes it once it runs."""
    fed = stream.Stream(TellsItsPid(), fork=True)
    child = fed.early()
    assert fed.forked and child != os.getpid()
    big = "x" * (4 << 20)
    os.kill(child, signal.SIGSTOP)
    try:
        putting = threading.Thread(target=fed.put, args=(big,), daemon=True)
        putting.start()
        putting.join(timeout=10)
        assert not putting.is_alive(), "put waited for a stopped child"
    finally:
        os.kill(child, signal.SIGCONT)
    got = fed.result()
    assert got[0] == child and got[1:] == [(child, big)]


class Refused(Exception):
    pass


def test_each_items_outcome_in_order_a_caught_error_among_them() -> None:
    together = threading.Barrier(3, timeout=10)  # passed only when all three run at once

    def work(item: int) -> int:
        together.wait()
        if item == 2:
            raise Refused("two")
        return item * 10

    got = threads.each(work, [1, 2, 3], (Refused,))
    assert got[::2] == [10, 30] and isinstance(got[1], Refused)

    def refuse(item: int) -> int:
        raise Refused(str(item))

    with pytest.raises(Refused):  # not among those caught: raised here
        threads.each(refuse, [2], (KeyError,))
