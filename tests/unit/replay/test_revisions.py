"""plan_by_replay's loop: each side replayed --repeat times and combined; the sandbox faked."""

from __future__ import annotations

import typing as t

import pytest

from auditor.replay import revisions, synthetic
from auditor.replay.run import Observed, SideRun
from tests.unit.conftest import Revisions

MIX = [synthetic.TenantMix("team-a", "batch", 1.0, {"batch-low": 1.0})]


def test_each_side_is_replayed_repeat_times_and_reported_as_medians(
    revs: Revisions, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = synthetic.generate("gpu-staging", MIX, workloads=1, hours=1, seed=1)
    calls: list[str] = []

    def fake(*_a: t.Any, label: str, speed: float, **_k: t.Any) -> SideRun:
        calls.append(label)
        wait = float(len(calls))  # each replay a second slower than the last
        seen = Observed(0, made.workloads[0], submitted=0.0, admitted=wait)
        seen.cluster_queue, seen.finished = "team-a-cq", wait + 1
        return SideRun(label, "rev", speed, [seen], {}, kueue_version="v0.17.0")

    monkeypatch.setattr(revisions, "replay", fake)
    got = revisions.plan_by_replay(
        revs.root, "base", "HEAD", "gpu-staging", made, speed=10.0,
        toolchain=t.cast(t.Any, None), repeat=3,
    )  # fmt: skip
    assert calls == ["base"] * 3 + ["head"] * 3
    assert got.base.tenant("team-a").p95_range == (10.0, 30.0)
    assert got.head.tenant("team-a").wait_p95 == 50.0 and len(got.head.runs) == 3
