"""The parallel seam: forked work gives what the same work in this process gives, in its
order; a child that fails leaves its share to this process, errors and all; no fork while
another thread runs."""

from __future__ import annotations

import os
import threading

import pytest

from auditor.speed import parallel


def _pid_and_square(item: int) -> tuple[int, int]:
    return os.getpid(), item * item


def test_forked_results_are_the_in_process_results_in_the_items_order() -> None:
    assert parallel.may_fork()  # these tests fork: a second core, no other thread
    items = list(range(7))
    alone = parallel.run(_pid_and_square, items, jobs=1)
    forked = parallel.run(_pid_and_square, items, jobs=3)
    assert [r for _, r in forked] == [r for _, r in alone] == [i * i for i in items]
    assert {pid for pid, _ in alone} == {os.getpid()}
    # this process took items 0, 3, 6; two children the others
    assert [pid == os.getpid() for pid, _ in forked] == [i % 3 == 0 for i in items]
    assert len({pid for pid, _ in forked}) == 3


def test_a_closure_reaches_the_children_without_being_sent() -> None:
    lock = threading.Lock()  # what no pickle can carry, in the work and its inputs
    items = [lock, lock, lock]
    got = parallel.run(lambda held: (os.getpid(), held is lock), items, jobs=3)
    assert [same for _, same in got] == [True, True, True]
    assert len({pid for pid, _ in got}) == 3


def _fails_in_a_child(parent: int) -> list[int]:
    def work(item: int) -> int:
        if os.getpid() != parent:
            os._exit(9)  # a crash, as a killed worker
        return item + 1

    return parallel.run(work, [1, 2, 3, 4], jobs=2)


def test_a_child_that_crashes_leaves_its_share_to_this_process() -> None:
    assert _fails_in_a_child(os.getpid()) == [2, 3, 4, 5]


def test_a_result_that_does_not_pickle_is_computed_here() -> None:
    parent = os.getpid()
    got = parallel.run(
        lambda item: threading.Lock() if os.getpid() != parent else item, [1, 2], jobs=2
    )
    assert got == [1, 2]  # the child's lock did not pickle: item 2 computed here


class Refused(Exception):
    pass


def _refuse_three(item: int) -> int:
    if item == 3:
        raise Refused(f"item {item}")
    return item


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_error_in_the_work_surfaces_as_in_process(jobs: int) -> None:
    with pytest.raises(Refused, match="item 3"):  # item 3 is a child's with two jobs
        parallel.run(_refuse_three, [0, 1, 2, 3], jobs=jobs)


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.may_fork()
        assert parallel.processes(4, 10) == 1
        got = parallel.run(_pid_and_square, [1, 2, 3], jobs=3)
        assert {pid for pid, _ in got} == {os.getpid()}
    finally:
        stop.set()
        thread.join()
    assert parallel.processes(4, 10) == 4
    assert parallel.processes(4, 3) == 3  # at most one process per item


def test_work_started_without_a_share_runs_while_this_process_does_something_else() -> None:
    running = parallel.start(_pid_and_square, [5, 6], 2, share=False)
    assert running.forked
    meanwhile = os.getpid()  # this process's own work, done while the children compute
    got = running.results()
    assert [r for _, r in got] == [25, 36]
    assert meanwhile not in {pid for pid, _ in got}


def test_no_child_asked_for_all_is_computed_here_when_collected() -> None:
    seen: list[int] = []

    def note(item: int) -> int:
        seen.append(item)
        return item

    running = parallel.start(note, [1, 2], 0, share=False)
    assert not running.forked and seen == []
    assert running.results() == [1, 2] and seen == [1, 2]
