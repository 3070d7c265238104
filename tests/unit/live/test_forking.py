"""Forking stays possible once the deadline watchdog runs, and a forked child watches anew."""

from __future__ import annotations

import os
import threading
import time

from auditor.live import bounded, forking


def test_the_watchdog_does_not_forbid_a_fork_and_another_thread_does() -> None:
    before = forking.alone()
    with bounded.deadline(time.monotonic() + 60):
        pass
    assert forking.WATCHDOG in [thread.name for thread in threading.enumerate()]
    assert forking.alone() == before  # the watchdog outlives its requests and changes nothing
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert not forking.alone()
    finally:
        release.set()
        other.join()


def test_a_forked_child_fires_its_own_deadlines() -> None:
    with bounded.deadline(time.monotonic() + 60):  # the parent's watchdog is running
        pid = os.fork()
        if pid == 0:  # the child: a fresh watchdog, whose watch fires at its time
            code = 1
            try:
                with bounded.deadline(time.monotonic() + 0.05) as watch:
                    assert watch is not None
                    give_up = time.monotonic() + 10
                    while not watch.cut and time.monotonic() < give_up:
                        time.sleep(0.01)
                    code = 0 if watch.cut else 2
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
