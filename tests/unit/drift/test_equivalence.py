"""Drift's comparison as the command runs it (each kind put to a forked child as its LIST
ends, auditor/speed/stream.py) finds what `engine.compare_cluster` finds over the whole read,
in this process: the same findings in the same order, a bug the same cluster's error."""

from __future__ import annotations

import os
import time
import typing as t
from pathlib import Path

import pytest

from auditor.drift import audit, comparer, engine, findings, normalize, reading
from auditor.k8s.objects import KUEUE_GROUP, RBAC_API, RBAC_GROUP, Json
from auditor.live.credentials import ContextMissing
from auditor.model import Finding, Report
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from tests.estate import ESTATE
from tests.unit.drift.repo_as_live import RepoAsLive, live_objects

CLUSTERS = ["gpu-prod", "gpu-staging"]


def _drifted(repo: Repository, name: str) -> list[Json]:
    """The cluster's objects with drift: one missing, one changed, one extra; and RBAC: a role
    the repository lacks, bound cluster-wide to mallory and in default to eve (powers the
    repository does not give) and to trent by a binding of the API server's own (explained)."""
    objects = live_objects(repo, name)
    del objects[3]
    queue = next(o for o in objects if o["kind"] == "LocalQueue")
    queue["spec"]["clusterQueue"] = "changed"
    extra = {
        "apiVersion": repo.cluster(name).kueue_api,
        "kind": "Cohort",
        "metadata": {"name": "x"},
    }
    role = {
        "apiVersion": RBAC_API,
        "kind": "ClusterRole",
        "metadata": {"name": "queue-admin"},
        "rules": [
            {"apiGroups": [KUEUE_GROUP], "resources": ["clusterqueues"], "verbs": ["patch"]},
            {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]},
        ],
    }
    bootstrap = {"kubernetes.io/bootstrapping": "rbac-defaults"}
    bindings = [
        _binding("ClusterRoleBinding", "queue-admins", None, "mallory"),
        _binding("RoleBinding", "queue-admins", "default", "eve"),
        _binding("RoleBinding", "system:queue-admins", "default", "trent", bootstrap),
    ]
    return [*objects, extra, role, *bindings]


def _binding(
    kind: str, name: str, namespace: str | None, user: str, labels: dict[str, str] | None = None
) -> Json:
    meta = {"name": name, "namespace": namespace, "labels": labels or {}}
    return {
        "apiVersion": RBAC_API,
        "kind": kind,
        "metadata": {k: v for k, v in meta.items() if v},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": "queue-admin"},
        "subjects": [{"apiGroup": RBAC_GROUP, "kind": "User", "name": user}],
    }


def _audited(repo_copy: Path, fork: bool) -> Report:
    repo = Repository.open(repo_copy)
    objects = {name: _drifted(repo, name) for name in CLUSTERS}
    comparing = comparer.start(repo, CLUSTERS, ESTATE / "schemas", fork=fork)
    assert comparing.forked is fork  # this machine has two cores: the child is forked
    return audit.audit(
        repo, CLUSTERS, lambda p: RepoAsLive(p.name, objects[p.name]), comparing=comparing
    )


def _sequential(repo_copy: Path) -> list[Finding]:
    """engine.compare_cluster over each cluster's whole read, its repository side made here."""
    repo = Repository.open(repo_copy)
    work = comparer.RepoSide(repo, CLUSTERS, ESTATE / "schemas", cache=False)
    prepared = work.prepare()
    found = list(prepared.loaded)
    for name in CLUSTERS:
        side = prepared.comparisons[name].side
        live = reading.read(
            RepoAsLive(name, _drifted(repo, name)), [(p.api_version, p.kind) for p in side.plan]
        )
        found += engine.compare_cluster(side, live)
    return found


def _stepped(repo_copy: Path) -> tuple[list[Finding], list[str | None], int]:
    """Each cluster's comparison fed kind by kind in the plan's order, every step ahead taken
    after each kind (as the child takes them while it waits): the findings, each cluster's
    error and the steps taken."""
    repo = Repository.open(repo_copy)
    prepared = comparer.RepoSide(repo, CLUSTERS, ESTATE / "schemas", cache=False).prepare()
    found, errors, steps = list(prepared.loaded), list[str | None](), 0
    for name in CLUSTERS:
        comparison = prepared.comparisons[name]
        live = reading.read(
            RepoAsLive(name, _drifted(repo, name)),
            [(p.api_version, p.kind) for p in comparison.side.plan],
        )
        for listed in engine.listed_of(live, comparison.side.plan):
            comparison.add(listed)
            while comparison.ahead():
                steps += 1
        got, error = comparison.findings()
        found += got
        errors.append(error)
    return found, errors, steps


def test_the_steps_ahead_change_nothing_found(repo_copy: Path) -> None:
    """The repository's objects normalized and its RBAC resolved before their kinds come."""
    found, errors, steps = _stepped(repo_copy)
    assert _shown(found) == _shown(_sequential(repo_copy))
    assert errors == [None, None] and steps > 4
    powers = {f.extra["subject"] for f in found if f.rule.id == "rbac-power"}
    assert powers == {"User mallory", "User eve"}  # trent's: the API server's own binding


def test_a_step_ahead_that_fails_is_the_error_the_comparison_meets(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug met ahead is met again in its kind's turn: the same cluster's error, the same
    one-line message, as without any step ahead."""
    real = normalize.normalize

    def broken(obj: Json, schema: t.Any = None) -> t.Any:
        if obj.get("kind") == "LocalQueue":
            raise KeyError("broken")
        return real(obj, schema)

    for module in (engine, findings):
        monkeypatch.setattr(module, "normalize", broken)
    _, errors, _ = _stepped(repo_copy)
    assert errors == [
        f"internal error while comparing cluster {name}: KeyError: 'broken' "
        "(a bug in kueue-gitops; -v shows the traceback)"
        for name in CLUSTERS
    ]
    with pytest.raises(RuntimeError, match="gpu-prod: KeyError: 'broken'"):
        _sequential(repo_copy)


def _shown(found: t.Iterable[Finding]) -> list[dict[str, t.Any]]:
    return [f.to_json() for f in found]


def test_compared_in_a_child_as_the_lists_arrive_is_compare_cluster(repo_copy: Path) -> None:
    forked, here = _audited(repo_copy, True), _audited(repo_copy, False)
    assert _shown(forked.findings) == _shown(here.findings) == _shown(_sequential(repo_copy))
    assert {f.change for f in forked.findings} >= {"missing", "modified", "unmanaged"}
    assert [c.status for c in forked.clusters] == ["ok", "ok"]


@pytest.mark.parametrize("fork", [True, False])
def test_a_bug_in_one_clusters_comparison_is_that_clusters_error(
    repo_copy: Path, fork: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = engine.compare_kind

    def compare_kind(comparison: engine.Comparison, kind: str) -> list[Finding]:
        if comparison.side.profile.name == "gpu-staging" and kind == "LocalQueue":
            raise KeyError(kind)
        return real(comparison, kind)

    monkeypatch.setattr(engine, "compare_kind", compare_kind)
    report = _audited(repo_copy, fork)
    prod, staging = report.clusters
    assert (prod.status, staging.status) == ("ok", "incomplete")
    assert staging.errors == [
        "internal error while comparing cluster gpu-staging: KeyError: 'LocalQueue' "
        "(a bug in kueue-gitops; -v shows the traceback)"
    ]
    assert {f.cluster for f in report.findings} == {"gpu-prod"}


def test_no_cluster_reached_each_is_incomplete_the_childs_plan_never_asked_for(
    repo_copy: Path,
) -> None:
    def connect(profile: ClusterProfile) -> RepoAsLive:
        raise ContextMissing(f"cluster {profile.name}: no context")

    repo = Repository.open(repo_copy)
    comparing = comparer.start(repo, CLUSTERS, None, fork=True)
    report = audit.audit(repo, CLUSTERS, connect, comparing=comparing)
    assert [(c.status, c.errors) for c in report.clusters] == [
        ("incomplete", [f"cluster {name}: no context"]) for name in CLUSTERS
    ]
    assert report.findings == []


def test_a_child_that_fails_leaves_this_process_to_compare(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent, real = os.getpid(), engine.Comparison.findings

    def findings(self: engine.Comparison) -> t.Any:
        if os.getpid() != parent:
            os._exit(9)  # a crash, as a killed child
        return real(self)

    monkeypatch.setattr(engine.Comparison, "findings", findings)
    assert _shown(_audited(repo_copy, True).findings) == _shown(_sequential(repo_copy))


def test_each_kind_is_compared_in_the_child_while_the_next_ones_are_read(
    repo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster holds each LIST after the Namespaces until the child says it compared the
    Namespaces: a comparison after the last LIST would never come (the run would stop at the
    cluster's 9 s deadline, its kinds unread)."""
    said = tmp_path / "compared"
    real = engine.compare_kind

    def compare_kind(comparison: engine.Comparison, kind: str) -> list[Finding]:
        found = real(comparison, kind)
        with said.open("a") as out:
            out.write(f"{os.getpid()} {kind}\n")
        return found

    monkeypatch.setattr(engine, "compare_kind", compare_kind)

    def hold(asked: list[str], kind: str) -> None:
        if "Namespace" in asked and kind != "Namespace":
            _wait_for(said, " Namespace\n", within=8)

    report = _held_in_a_child(repo_copy, hold)
    assert report.clusters[0].status == "ok" and report.findings == []
    assert str(os.getpid()) not in said.read_text()  # compared in the child only


def _held_in_a_child(repo_copy: Path, hold: t.Callable[[list[str], str], None]) -> Report:
    """The audit of gpu-prod, compared in a forked child, against a cluster holding what the
    repository says that calls `hold(kinds asked so far, kind)` before answering each LIST."""
    repo = Repository.open(repo_copy)

    class Holding(RepoAsLive):
        def list(
            self, api_version: str, kind: str, *, page_size: int = 500, selector: str = ""
        ) -> list[Json]:
            hold(self.asked, kind)
            return super().list(api_version, kind, page_size=page_size, selector=selector)

    def connect(profile: ClusterProfile) -> Holding:
        return Holding(profile.name, live_objects(repo, profile.name))

    comparing = comparer.start(repo, ["gpu-prod"], None, fork=True)
    return audit.audit(repo, ["gpu-prod"], connect, comparing=comparing)


def _wait_for(path: Path, text: str, within: float) -> None:
    deadline = time.monotonic() + within
    while not (path.exists() and text in path.read_text()):
        assert time.monotonic() < deadline, f"{text.strip()} not compared within {within} s"
        time.sleep(0.01)


def test_the_child_normalizes_a_kinds_repository_objects_before_its_list_is_asked(
    repo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster answers no LIST of LocalQueues until the child says it normalized the
    repository's LocalQueues: done while it waited, it is not left to do after that LIST."""
    said = tmp_path / "normalized"
    real = engine.Comparison.normalized

    def normalized(self: engine.Comparison, kind: str) -> t.Any:
        got = real(self, kind)
        with said.open("a") as out:
            out.write(f"{os.getpid()} {kind}\n")
        return got

    monkeypatch.setattr(engine.Comparison, "normalized", normalized)

    def hold(_asked: list[str], kind: str) -> None:
        if kind == "LocalQueue":
            _wait_for(said, " LocalQueue\n", within=8)

    report = _held_in_a_child(repo_copy, hold)
    assert report.clusters[0].status == "ok" and report.findings == []
    assert str(os.getpid()) not in said.read_text()  # in the child only
