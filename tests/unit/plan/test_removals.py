"""Offline `plan`: removing a queue or an admitted namespace is an error at its line in base."""

from __future__ import annotations

from tests.unit.conftest import Revisions
from tests.unit.plan.offline_plan import CQS, plan

LQS = "tenants/team-b/gpu-prod/localqueues.yaml"
NS = "tenants/team-b/gpu-prod/namespace.yaml"


def findings(revs: Revisions, message: str) -> tuple[int, list[tuple[str, str, str, int, str]]]:
    head = revs.commit(message)
    code, doc = plan(revs, "--base", "base", "--head", head)
    return code, sorted(
        (f["rule"], f["kind"], f["file"], f["line"], f["message"]) for f in doc["findings"]
    )


def test_removing_a_local_queue_is_an_error_at_its_line_in_base(revs: Revisions) -> None:
    line = revs.line_of(LQS, "kind: LocalQueue") - 1
    (revs.root / LQS).unlink()
    code, found = findings(revs, "drop team-b's queue")
    assert code == 1
    assert found == [
        (
            "plan-removes-queue",
            "LocalQueue",
            LQS,
            line,
            "LocalQueue team-b/batch is removed: Argo CD would delete it, stranding the Jobs "
            "pending in it; queues and admitted namespaces are never deleted by a sync: keep the "
            "object (hold admission with `kueue-gitops hold` to retire it)",
        )
    ]


def test_renaming_a_cluster_queue_removes_the_old_one(revs: Revisions) -> None:
    line = revs.line_of(CQS, "kind: ClusterQueue") - 1
    revs.edit(CQS, "name: team-a-cq", "name: team-a-cq-v2")
    code, found = findings(revs, "rename")
    assert code == 1
    assert [(r, k, f, n) for r, k, f, n, _ in found] == [
        ("plan-removes-queue", "ClusterQueue", CQS, line)
    ]
    assert "evicting every Workload it admitted" in found[0][4]


def test_removing_an_admitted_namespace_is_an_error_a_plain_one_is_not(revs: Revisions) -> None:
    revs.write(
        "clusters/gpu-prod/scratch.yaml", "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"
    )
    base = revs.commit("a namespace nobody admits")
    (revs.root / "clusters/gpu-prod/scratch.yaml").unlink()
    (revs.root / NS).unlink()
    head = revs.commit("drop both")
    code, doc = plan(revs, "--base", base, "--head", head)
    assert code == 1
    assert [(f["rule"], f["kind"], f["name"]) for f in doc["findings"]] == [
        ("plan-removes-queue", "Namespace", "team-b")
    ]
    assert doc["findings"][0]["message"].startswith(
        "admitted namespace team-b is removed: Argo CD would delete it with every Job"
    )
