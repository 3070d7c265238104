"""Our verdict on each state of the side-by-side with Argo CD (bench/argocd/), asserted.

The same states bench/argocd/run.py puts a cluster synced by Argo CD through; here the cluster
is synced by server-side apply, which leaves the same objects (Argo CD's tracking marks aside,
which drift ignores). Argo CD's own verdicts are only observed, in the bench.
"""

from __future__ import annotations

import os
import typing as t
from pathlib import Path

import pytest

from auditor.drift import audit
from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from bench.argocd.states import STATES, State
from tests.conftest import start_sandbox
from tests.estate import ESTATE

CLUSTER = "gpu-prod"


@pytest.fixture(scope="module")
def synced(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    box = start_sandbox(toolchain, sandboxes_dir, f"side-by-side-{os.getpid()}")
    try:
        resources = Repository.open(ESTATE).load([CLUSTER]).for_cluster(CLUSTER)
        failed = [(str(r.resource.key), r.error) for r in apply_all(box.connect(), resources)]
        assert [f for f in failed if f[1]] == []
        yield box
    finally:
        box.down()


def rules(box: Sandbox) -> list[tuple[str, str | None, str | None]]:
    report = audit.audit(Repository.open(ESTATE), [CLUSTER], lambda _p: box.connect())
    assert not report.incomplete, report.clusters
    return sorted((f.rule.id, f.name, f.path) for f in report.findings)


def test_the_synced_cluster_is_clean(synced: Sandbox) -> None:
    assert rules(synced) == []


@pytest.mark.parametrize("state", STATES, ids=[s.name for s in STATES])
def test_drift_reports_exactly_what_changes_admission(synced: Sandbox, state: State) -> None:
    undo = state.apply(synced.connect())
    try:
        found = rules(synced)
        assert {rule for rule, _, _ in found} == state.ours, found
        assert bool(found) != state.equal
    finally:
        undo()
    assert rules(synced) == [], f"{state.name} was not undone"
