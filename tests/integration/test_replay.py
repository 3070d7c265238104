"""`plan replay --engine kueue`: a synthetic trace through the real Kueue on kwok's nodes,
base → head (the simulation, the default engine, is tests/integration/test_replay_sim.py).

gpu-staging's tree: team-a-cq (4 a100 GPUs, lends 2, may borrow 2) and team-b-cq (3, lends 1)
in cohort ai-shared under example-org's pool of 1. The trace keeps both busy: team-a's batch-low
work (65 %, 15-minute runs) more than fills its 4 GPUs and borrows, team-b's batch-standard work
(35 %) needs back what it lent: in the base, Kueue preempts team-a's borrowed Workloads. At 40x
the latencies the speed multiplies stay under 5 % of a run (docs/replay.md). Two heads: team-a's
nominal GPU quota halved, and reclaimWithinCohort: Never on both queues. The base is replayed
once per head (two CLI runs), which is also the determinism check.
"""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.replay import synthetic, trace
from auditor.sandbox import Toolchain
from tests.conftest import ROOT
from tests.estate import copy_estate
from tests.unit.conftest import Revisions

CQS = "clusters/gpu-staging/clusterqueues.yaml"
TEAM_A_GPUS = 'nominalQuota: "4"\n              borrowingLimit: "2"'
RECLAIM = (
    "    reclaimWithinCohort: LowerPriority\n"
    "    borrowWithinCohort:\n"
    "      policy: LowerPriority\n"
    "      maxPriorityThreshold: 100   # borrowed capacity evicts only batch-low work\n"
)
SPEED = 40
# What two replays of one configuration may differ by, stated here (docs/replay.md measures
# them), not read from the report under test: four reads (0.25 s apart) at the speed, 20 % of a
# wait behind a tenant's own work, 50 % of a wait to reclaim what it lent; the latencies the
# speed multiplies at most 10 % of a median run.
TOLERANCE_SECONDS = 4 * 0.25 * SPEED
AGREEMENT = {"team-a": 0.20, "team-b": 0.50}
MAX_DISTORTION = 0.10
MIXES = [
    synthetic.TenantMix("team-a", "batch", 0.65, {"batch-low": 1.0}),  # as `make demo` makes it
    synthetic.TenantMix("team-b", "batch", 0.35, {"batch-standard": 1.0}),
]
Doc = dict[str, t.Any]


@pytest.fixture(scope="module")
def revisions(tmp_path_factory: pytest.TempPathFactory) -> t.Iterator[tuple[Path, dict[str, str]]]:
    """A git copy of the repository: base, team-a's GPUs halved, and reclaim turned off."""
    root = tmp_path_factory.mktemp("replay-repo")
    copy_estate(root, "clusters", "tenants")
    (root / "testenv").symlink_to(ROOT / "testenv")  # the pinned control plane
    revs = Revisions(root)
    try:
        shas = {"base": revs.commit("base")}
        revs.edit(CQS, TEAM_A_GPUS, TEAM_A_GPUS.replace('"4"', '"2"'))
        shas["halved"] = revs.commit("team-a's a100 GPUs halved")
        revs.edit(CQS, TEAM_A_GPUS.replace('"4"', '"2"'), TEAM_A_GPUS)
        revs.edit(CQS, RECLAIM, "    reclaimWithinCohort: Never\n", count=2)
        shas["no-reclaim"] = revs.commit("no reclaim within the cohort")
    finally:
        revs.repo.close()
    made = synthetic.generate(
        "gpu-staging", MIXES, workloads=24, hours=0.5, seed=11, bursts=2, median_run=900
    )
    trace.write(made, root / "trace.json")
    yield root, shas


def _replay(root: Path, base: str, head: str) -> Doc:
    argv = ["--repo", str(root), "plan", "replay", str(root / "trace.json"), "--base", base,
            "--head", head, "--cluster", "gpu-staging", "--engine", "kueue",
            "--speed", str(SPEED)]  # fmt: skip
    result = CliRunner().invoke(cli, [*argv, "-o", "json"], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    doc: Doc = report["replay"]  # the report's replay section (report.schema.json)
    doc["exitCode"] = result.exit_code
    doc["findings"] = report["findings"]
    return doc


@pytest.fixture(scope="module")
def halved(toolchain: Toolchain, revisions: tuple[Path, dict[str, str]]) -> Doc:
    root, shas = revisions
    return _replay(root, shas["base"], shas["halved"])


@pytest.fixture(scope="module")
def no_reclaim(toolchain: Toolchain, revisions: tuple[Path, dict[str, str]]) -> Doc:
    root, shas = revisions
    return _replay(root, shas["base"], shas["no-reclaim"])


def tenant(side: Doc, name: str) -> Doc:
    return next(g for g in side["tenants"] if g["name"] == name)


def queue(side: Doc, name: str) -> Doc:
    return next(g for g in side["clusterQueues"] if g["name"] == name)


def test_the_base_preempts_team_as_borrowed_work_when_team_b_reclaims(halved: Doc) -> None:
    base = halved["base"]
    assert not base["deadlinePassed"]
    assert all(g["neverAdmitted"] == 0 for g in base["tenants"])
    a = tenant(base, "team-a")
    assert a["preemptions"] > 0 and tenant(base, "team-b")["preemptions"] == 0
    # "unseen": preempted and re-admitted between two reads; every cause seen is a reclaim.
    reclaims = {"InCohortReclamation", "InCohortReclaimWhileBorrowing"}
    assert set(a["preemptionReasons"]) <= reclaims | {"unseen"}
    assert queue(base, "team-a-cq")["borrowedGpus"]["peak"] > 0


def test_halving_team_as_gpus_raises_its_p95_wait_and_its_borrowing(halved: Doc) -> None:
    before, after = tenant(halved["base"], "team-a"), tenant(halved["head"], "team-a")
    assert after["waitSeconds"]["p95"] > before["waitSeconds"]["p95"] + TOLERANCE_SECONDS
    assert after["borrowedGpus"]["mean"] > before["borrowedGpus"]["mean"]
    assert halved["exitCode"] == 1
    assert {"tenant": "team-a", "kind": "wait-p95-rises"}.items() <= halved["flags"][0].items()
    assert ("replay-wait-rises", "team-a") in {(f["rule"], f["tenant"]) for f in halved["findings"]}


def test_reclaim_never_makes_preemptions_fall_to_zero(no_reclaim: Doc) -> None:
    assert no_reclaim["base"]["preemptions"] > 0
    assert no_reclaim["head"]["preemptions"] == 0
    assert all(g["neverAdmitted"] == 0 for g in no_reclaim["head"]["tenants"])


def test_the_same_trace_twice_on_the_base_agrees_within_the_tolerance(
    halved: Doc, no_reclaim: Doc
) -> None:
    # team-a waits behind its own backlog; team-b waits to reclaim what it lent (docs/replay.md).
    for name, agreement in AGREEMENT.items():
        one, two = tenant(halved["base"], name), tenant(no_reclaim["base"], name)
        p95 = one["waitSeconds"]["p95"], two["waitSeconds"]["p95"]
        assert abs(p95[0] - p95[1]) <= max(TOLERANCE_SECONDS, agreement * max(p95)), (name, p95)
        assert abs(one["gpuHours"] - two["gpuHours"]) <= 0.1 * max(one["gpuHours"], 1)
        assert (one["preemptions"] > 0) == (two["preemptions"] > 0)  # counts vary: docs/replay.md
    for side in (halved["base"], halved["head"], no_reclaim["base"], no_reclaim["head"]):
        assert side["distortion"] <= MAX_DISTORTION  # the speed is within its bound
