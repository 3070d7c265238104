"""plan_by_replay's loop: each side replayed --repeat times and combined; the sandbox faked."""

from __future__ import annotations

import typing as t

import pytest

from auditor.replay import revisions, synthetic
from auditor.replay.run import Observed, SideRun
from auditor.sandbox import releases
from tests.unit.conftest import Revisions

MIX = [synthetic.TenantMix("team-a", "batch", 1.0, {"batch-low": 1.0})]


def test_each_side_is_replayed_repeat_times_and_reported_as_medians(
    revs: Revisions, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = synthetic.generate("gpu-staging", MIX, workloads=1, hours=1, seed=1)
    calls: dict[str, int] = {}
    built: list[str] = []

    def fake(*_a: t.Any, label: str, speed: float, **_k: t.Any) -> SideRun:
        calls[label] = calls.get(label, 0) + 1  # the sides run at once, each in one thread
        # each of a side's replays a second slower than its last; the head's after the base's
        wait = float(calls[label] + (3 if label == "head" else 0))
        seen = Observed(0, made.workloads[0], submitted=0.0, admitted=wait)
        seen.cluster_queue, seen.finished = "team-a-cq", wait + 1
        return SideRun(label, "rev", speed, [seen], {}, kueue_version="v0.17.0")

    monkeypatch.setattr(revisions, "replay", fake)
    monkeypatch.setattr(releases, "release", lambda _tc, v, **_k: built.append(v))
    got = revisions.plan_by_replay(
        revs.root, "base", "HEAD", "gpu-staging", made, speed=10.0,
        toolchain=t.cast(t.Any, None), repeat=3,
    )  # fmt: skip
    assert calls == {"base": 3, "head": 3}
    assert len(built) == 2  # each side's Kueue release made ready before either sandbox starts
    assert got.base.tenant("team-a").p95_range == (10.0, 30.0)
    assert got.head.tenant("team-a").wait_p95 == 50.0 and len(got.head.runs) == 3
