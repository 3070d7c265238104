"""The simulator process as plan sees it: a side that stops advancing is stopped at its deadline,
and a refused revision says which side and cluster. The program here stands in for the Go
simulator (built and tested against Kueue in tests/integration/test_replay_sim.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from auditor.errors import ConfigError, SandboxError
from auditor.replay.run import Observed
from auditor.replay.sim import Preemption, SimRun, SimSide, deadline, loops, simulate
from auditor.replay.trace import Trace, TracedWorkload

TRACE = Trace(
    cluster="gpu-prod",
    recorded={"source": "synthetic", "seconds": 60},
    workloads=[TracedWorkload("team-a", "default", None, {"nvidia.com/gpu": "1"}, 1, 0.0, 30.0)],
)


def _simulator(tmp_path: Path, body: str) -> Path:
    program = tmp_path / "kueuesim"
    program.write_text(f"#!{sys.executable}\nimport signal, sys\nsys.stdin.read()\n{body}\n")
    program.chmod(0o755)
    return program


def _side(binary: Path, label: str = "head") -> SimSide:
    return SimSide(label, "abc1234", "gpu-prod", binary, "v0.17.0", "{}")


def test_a_simulator_that_never_finishes_is_stopped_at_the_deadline(tmp_path: Path) -> None:
    hung = _simulator(tmp_path, "signal.pause()")
    started = time.monotonic()
    with pytest.raises(SandboxError, match=r"did not finish head \(abc1234\) within 2 s"):
        simulate([_side(hung)], TRACE, within=2.0)
    assert time.monotonic() - started < 30  # stopped, not waited out


def test_the_default_deadline_grows_with_the_trace_and_leaves_room_for_a_day() -> None:
    day = Trace("gpu-prod", {}, TRACE.workloads * 10_000)
    assert deadline(TRACE) >= 600
    assert deadline(day) > deadline(TRACE)
    assert deadline(day) >= 5 * 200  # five times what a 10,000-Workload side took (bench/replay)


def test_a_refused_revision_names_the_side_and_cluster(tmp_path: Path) -> None:
    refusing = _simulator(tmp_path, "sys.stderr.write('no LocalQueue team-a/default')\nsys.exit(2)")
    with pytest.raises(ConfigError, match=r"base \(abc1234\), cluster gpu-prod: no LocalQueue"):
        simulate([_side(refusing, "base")], TRACE)


def _run_with(preemptions: list[Preemption]) -> SimRun:
    workloads = [Observed(i, TRACE.workloads[0]) for i in range(2)]
    return SimRun("head", "abc1234", 1.0, workloads, {}, preemption_log=preemptions)


def _trading(start: float, gap: float, count: int) -> list[Preemption]:
    """Two queues taking the same GPUs back and forth, one preemption every `gap` seconds."""
    queues = ("team-a-cq", "team-b-cq")
    return [
        Preemption(start + i * gap, i % 2, (i + 1) % 2, "InCohortReclamation",
                   queues[(i + 1) % 2], queues[i % 2])
        for i in range(count)
    ]  # fmt: skip


def test_queues_trading_within_the_hour_are_a_loop_shown_from_its_start() -> None:
    quiet = [Preemption(10.0, 0, 1, "InCohortReclamation", "team-a-cq", "team-b-cq")]
    found = loops(_run_with(quiet + _trading(7200.0, 600.0, 5)), {})
    [loop] = [one for one in found if one.kind == "queues"]
    assert loop.key == "queues:team-a-cq<->team-b-cq"
    assert loop.cycle[0].startswith("7200s team-a-cq preempts #0")
    assert len(loop.cycle) == 5  # the five preemptions of the window, 4 changes of direction


def test_the_same_trades_spread_over_more_than_an_hour_are_not_a_loop() -> None:
    found = loops(_run_with(_trading(0.0, 1000.0, 5)), {})
    assert [one for one in found if one.kind == "queues"] == []  # 4 changes over 4,000 s


def test_a_day_of_many_trades_is_judged_in_one_pass() -> None:
    # 20,000 preemptions once took minutes (every window rebuilt from its start to the end)
    found = loops(_run_with(_trading(0.0, 4.0, 20_000)), {})
    [loop] = [one for one in found if one.kind == "queues"]
    assert loop.cycle[-1] == "... and 881 more (901 in all)"  # 3,600 s of events 4 s apart
    assert len(loop.cycle) == 21  # the report lists the first 20 steps


def test_a_workload_preempted_thousands_of_times_lists_twenty() -> None:
    # a livelock: one victim taken by one preemptor again and again at one instant
    storm = [Preemption(588.0, 0, 1, "InCohortReclaimWhileBorrowing", "team-b-cq", "team-a-cq")]
    [loop] = loops(_run_with(storm * 5000), {"team-a": "team-a"})
    assert loop.key == "workload:0"
    assert loop.cycle[0].startswith("588s preempted by #1 (")
    assert loop.cycle[:20] == [loop.cycle[0]] * 20
    assert loop.cycle[20:] == ["... and 4980 more (5000 in all)"]
