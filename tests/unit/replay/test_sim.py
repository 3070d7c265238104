"""The simulator process as plan sees it: a side that stops advancing is stopped at its deadline,
and a refused revision says which side and cluster. The program here stands in for the Go
simulator (built and tested against Kueue in tests/integration/test_replay_sim.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from auditor.errors import ConfigError, SandboxError
from auditor.replay.sim import SimSide, deadline, simulate
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
