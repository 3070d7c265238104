"""Effective RBAC powers, including aggregation and RoleBinding scope."""

from __future__ import annotations

import typing as t

from auditor.k8s.rbac import Power, Subject, cluster_role_rules, grants, holds

RBAC = "rbac.authorization.k8s.io/v1"
TEAM = Subject("Group", "example-org:team-a")


def cr(name: str, rules: list[t.Any], labels: dict[str, str] | None = None, **kw: t.Any) -> t.Any:
    return {"apiVersion": RBAC, "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels or {}}, "rules": rules, **kw}  # fmt: skip


def binding(kind: str, name: str, role_kind: str, role: str, ns: str | None = None) -> t.Any:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": meta,
            "roleRef": {"kind": role_kind, "name": role},
            "subjects": [{"kind": "Group", "name": TEAM.name}]}  # fmt: skip


CQ_PATCH = {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues"], "verbs": ["patch"]}


def test_clusterrolebinding_grants_cluster_wide() -> None:
    found = grants([cr("r", [CQ_PATCH]), binding("ClusterRoleBinding", "b", "ClusterRole", "r")])
    assert [(g.subject, g.power) for g in found] == [
        (TEAM, Power("patch", "kueue.x-k8s.io", "clusterqueues"))
    ]
    assert holds(found, TEAM, Power("patch", "", "namespaces", "x")) is False


def test_a_rolebinding_cannot_reach_cluster_scoped_kinds_but_reaches_its_namespace() -> None:
    ns_patch = {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["*"]}
    found = grants(
        [cr("r", [CQ_PATCH, ns_patch]), binding("RoleBinding", "b", "ClusterRole", "r", "team-a")]
    )
    assert {g.power for g in found} == {
        Power("update", "", "namespaces", "team-a"),
        Power("patch", "", "namespaces", "team-a"),
    }
    assert holds(found, TEAM, Power("patch", "", "namespaces", "team-a"))
    assert not holds(found, TEAM, Power("patch", "", "namespaces", "team-b"))


def test_wildcards_and_aggregation() -> None:
    star = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    agg = cr("agg", [], aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]})
    rules = cluster_role_rules([agg, cr("part", [star], {"x": "y"}), cr("other", [CQ_PATCH])])
    assert rules["agg"] == [star]
    found = grants(
        [
            agg,
            cr("part", [star], {"x": "y"}),
            binding("ClusterRoleBinding", "b", "ClusterRole", "agg"),
        ]
    )
    assert holds(found, TEAM, Power("impersonate", "", "users"))
    assert holds(found, TEAM, Power("escalate", "rbac.authorization.k8s.io", "clusterroles"))


def test_system_masters_holds_everything() -> None:
    assert holds([], Subject("Group", "system:masters"), Power("bind", "", "roles"))
