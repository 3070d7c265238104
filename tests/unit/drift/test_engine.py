"""engine.compare_cluster on what a reader returned (our own Live model, no cluster): scope."""

from __future__ import annotations

import typing as t

from auditor.drift import engine, reading
from auditor.model import Resource
from tests.unit.drift.objects import PROFILE, RBAC, live_of, obj


def compare(desired: list[dict[str, t.Any]], live: reading.Live) -> list[tuple[t.Any, ...]]:
    resources = [Resource(body=b, file="clusters/c/x.yaml", line=1, cluster="c") for b in desired]
    found = engine.compare_cluster(engine.RepoSide(PROFILE, resources), live)
    return [(f.rule.id, f.change, f.kind, f.name) for f in found]


def test_what_a_cluster_holds_of_its_own_is_not_unmanaged() -> None:
    star = [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]
    cluster_admin = obj(RBAC, "ClusterRole", "cluster-admin",
                        meta={"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
                        rules=star)  # fmt: skip
    masters = obj(RBAC, "ClusterRoleBinding", "cluster-admin",
                  meta={"labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
                  roleRef={"kind": "ClusterRole", "name": "cluster-admin"},
                  subjects=[{"kind": "Group", "name": "system:masters"}])  # fmt: skip
    kueue = obj(RBAC, "ClusterRoleBinding", "kueue", roleRef={"kind": "ClusterRole",
                "name": "cluster-admin"}, subjects=[{"kind": "User",
                "name": "kueue-controller-manager"}])  # fmt: skip
    live = live_of(
        obj("v1", "Namespace", "kube-system"),
        obj("v1", "Namespace", "apps"),
        obj("scheduling.k8s.io/v1", "PriorityClass", "system-node-critical", value=2000001000),
        cluster_admin,
        masters,
        kueue,
    )
    assert compare([], live) == []


def test_unmanaged_objects_that_matter() -> None:
    live = live_of(
        obj("v1", "Namespace", "rogue", meta={"labels": {"platform.example.com/kueue": "enabled"}}),
        obj("kueue.x-k8s.io/v1beta2", "ResourceFlavor", "spare"),
        obj("scheduling.k8s.io/v1", "PriorityClass", "urgent", value=10),
    )
    assert compare([], live) == [
        ("drift-admission-label", "unmanaged", "Namespace", "rogue"),
        ("drift-priority", "unmanaged", "PriorityClass", "urgent"),
        ("drift-flavor", "unmanaged", "ResourceFlavor", "spare"),
    ]  # live-only objects (no file) by kind, in engine.order


def test_an_unread_kind_is_never_reported_missing_or_clean() -> None:
    desired = [obj("kueue.x-k8s.io/v1beta2", "LocalQueue", "batch", meta={"namespace": "t"})]
    assert compare(desired, live_of(unread=("LocalQueue",))) == []
    assert compare(desired, live_of()) == [("drift-quota", "missing", "LocalQueue", "batch")]
