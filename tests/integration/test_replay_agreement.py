"""The simulation (`plan replay --engine sim`) against the real Kueue (`--engine kueue`) on a
trace neither was tuned on (issue 45): a seed no other test uses, four bursts, both tenants at
two priority levels (batch-low and batch-standard), and a quota cut between base and head
(team-a's a100 GPUs halved on gpu-staging). Each side once through each engine, through the
Python API (the replays' own records, Workload by Workload): per tenant the GPU-hours agree
within 10 %, and per Workload whether it was preempted is the same (but for a Workload that
arrived as close to another's finish as the real replay can tell apart: `unordered`).

The real engine is kept short for CI: 16 Workloads over a quarter of an hour at 30x, base and
head on two sandboxes at once (each about two minutes after a 20-second start);
tests/integration/test_replay.py holds the real engine's own claims on a longer trace.

What the simulation is given, stated here and not read from the simulation under test: the
real replay holds each run's quota longer than the run by its latency (unsuspend, pods, the
Job's completion, the next read), 1.25-1.6 s of real time in the runs measured, which the
speed turns into trace time (38-47 s at 30x). A cluster at 1x adds that second, not the 40 s:
it is the compression's error, and on a busy trace it reorders a finish and an arrival that
far apart, from which the rest of the day follows (docs/replay.md, Compression). The real engine
measures it itself (auditor/replay/measured.py, hold_overhead), so the simulation replays the
trace with each run that much longer: both engines schedule the same holds, and what is
compared is what Kueue decides with them.
"""

from __future__ import annotations

import typing as t
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from auditor.replay import run, synthetic
from auditor.replay.comparison import tolerance
from auditor.replay.measured import hold_overhead
from auditor.replay.revisions import tenants_of
from auditor.replay.run import SideRun
from auditor.replay.sim import prepare, simulate
from auditor.replay.trace import Trace
from auditor.repo.gitsource import revision
from auditor.sandbox import Toolchain
from auditor.sandbox.kueuesim import ensure_sim
from tests.conftest import ROOT
from tests.estate import copy_estate
from tests.unit.conftest import Revisions

CLUSTER = "gpu-staging"
CQS = "clusters/gpu-staging/clusterqueues.yaml"
TEAM_A_GPUS = 'nominalQuota: "4"\n              borrowingLimit: "2"'
SPEED = 30.0  # the CLI's default
GPU_HOURS_WITHIN = 0.10  # the agreement goal (issue 28 item 5, issue 45)
MAX_DISTORTION = 0.10  # the speed within its bound, as tests/integration/test_replay.py holds
TWO_LEVELS = {"batch-low": 1.0, "batch-standard": 1.0}
MIXES = [
    synthetic.TenantMix("team-a", "batch", 0.6, TWO_LEVELS),
    synthetic.TenantMix("team-b", "batch", 0.4, TWO_LEVELS),
]
SEED = 31  # no other test's (0, 11, 12, 13); the first from 30 whose day has a livelock
Sides = t.Mapping[str, SideRun]
REVISIONS = {"base": "HEAD~1", "head": "HEAD"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Trace]:
    """A git copy of the estate: the base, then the head cutting team-a's a100 GPUs 4 -> 2."""
    root = tmp_path_factory.mktemp("agreement")
    copy_estate(root, "clusters", "tenants")
    (root / "testenv").symlink_to(ROOT / "testenv")  # the pinned control plane and Kueue
    revs = Revisions(root)
    try:
        revs.commit("base")
        revs.edit(CQS, TEAM_A_GPUS, TEAM_A_GPUS.replace('"4"', '"2"'))
        revs.commit("team-a's a100 GPUs halved")
    finally:
        revs.repo.close()
    made = synthetic.generate(
        CLUSTER, MIXES, workloads=16, hours=0.25, seed=SEED, bursts=4, median_run=600
    )
    return root, made


@pytest.fixture(scope="module")
def real(toolchain: Toolchain, repo: tuple[Path, Trace]) -> Sides:
    """Base and head through the real Kueue, each on its own sandbox, both at once."""
    root, made = repo

    def side(label: str) -> SideRun:
        with revision(root, REVISIONS[label]) as at:
            return run.replay(toolchain, at, CLUSTER, made, speed=SPEED, label=label)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip(REVISIONS, pool.map(side, REVISIONS), strict=True))


@pytest.fixture(scope="module")
def simulated(repo: tuple[Path, Trace], real: Sides) -> Sides:
    """Each side simulated with each run lengthened by the latency its real replay measured."""
    root, made = repo
    prepared = []
    for label, rev in REVISIONS.items():
        latency = hold_overhead(real[label].workloads, SPEED) or 0.0
        held = Trace(made.cluster, made.recorded, [
            replace(w, run_seconds=w.run_seconds + latency * SPEED) for w in made.workloads
        ])  # fmt: skip
        with revision(root, rev) as at:
            binary, release = ensure_sim(ROOT / "testenv", at.cluster(CLUSTER).kueue_version)
            prepared.append(prepare(binary, release, at, CLUSTER, held, label=label))
    return simulate(prepared, made)


def gpu_hours(side: SideRun, tenant_of: t.Mapping[str, str]) -> dict[str, float]:
    """GPU-hours per tenant, in trace time."""
    out: dict[str, float] = {}
    for s in side.workloads:
        name = tenant_of.get(s.traced.namespace, s.traced.namespace)
        out[name] = out.get(name, 0.0) + s.gpu_seconds * side.speed / 3600
    return out


def test_each_tenants_gpu_hours_agree_within_ten_percent(
    repo: tuple[Path, Trace], simulated: Sides, real: Sides
) -> None:
    root, made = repo
    with revision(root, "HEAD") as at:
        tenant_of = tenants_of(at, CLUSTER)
    median_run = sorted(w.run_seconds for w in made.workloads)[len(made.workloads) // 2]
    for label in REVISIONS:
        assert not real[label].deadline_passed
        latency = hold_overhead(real[label].workloads, SPEED) or 0.0
        assert latency * SPEED <= MAX_DISTORTION * median_run, (label, latency)
        sim, kueue = gpu_hours(simulated[label], tenant_of), gpu_hours(real[label], tenant_of)
        print(label, "latency", round(latency, 3), "sim", sim, "real", kueue)
        assert set(sim) == set(kueue) == {"team-a", "team-b"}
        for name, hours in kueue.items():
            assert abs(sim[name] - hours) <= GPU_HOURS_WITHIN * hours, (label, name, sim, kueue)


def unordered(real: SideRun) -> set[int]:
    """The Workloads submitted within the real engine's resolution (comparison.tolerance: four
    reads at the speed) of another's finish in the real replay: whether that quota was free when
    it arrived is below what the replay can order. Each finish is late by the hold's latency
    times the speed, and the latency varies from hold to hold around the median the simulation
    was given."""
    window = tolerance(real.speed)
    ends = [(s.index, s.finished * real.speed) for s in real.workloads if s.finished is not None]
    return {
        s.index
        for s in real.workloads
        if any(j != s.index and abs(end - s.traced.submitted_at) <= window for j, end in ends)
    }


def test_each_workload_is_preempted_or_not_as_in_the_real_kueue(
    simulated: Sides, real: Sides
) -> None:
    for label in REVISIONS:
        sim = [s.preemptions > 0 for s in simulated[label].workloads]
        kueue = [s.preemptions > 0 for s in real[label].workloads]
        excused = unordered(real[label])
        differ = [i for i, (a, b) in enumerate(zip(sim, kueue, strict=True)) if a != b]
        print(label, "preempted sim", [i for i, p in enumerate(sim) if p], "real",
              [i for i, p in enumerate(kueue) if p], "unordered", sorted(excused))  # fmt: skip
        assert [i for i in differ if i not in excused] == [], (label, differ)
        assert len(excused) <= len(sim) // 3  # two in three at least held one by one
        assert all(s.admitted is not None for s in simulated[label].workloads)
        assert all(s.admitted is not None for s in real[label].workloads)
