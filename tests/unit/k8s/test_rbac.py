"""The RBAC model: rule matching, aggregation, binding scope and the powers subjects hold."""

from __future__ import annotations

import typing as t

import pytest

from auditor.k8s.rbac import (
    WATCHED,
    WRITE_VERBS,
    Policy,
    Power,
    Request,
    RoleRef,
    Rule,
    Subject,
    allows,
    grants,
    holds,
)

RBAC = "rbac.authorization.k8s.io/v1"
KUEUE = "kueue.x-k8s.io"
TEAM = Subject("Group", "example-org:team-a")


def cr(name: str, rules: list[t.Any], labels: dict[str, str] | None = None, **kw: t.Any) -> t.Any:
    return {"apiVersion": RBAC, "kind": "ClusterRole",
            "metadata": {"name": name, "labels": labels or {}}, "rules": rules, **kw}  # fmt: skip


def binding(
    kind: str, name: str, role_kind: str, role: str, ns: str | None = None, subjects: t.Any = None
) -> t.Any:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": meta,
            "roleRef": {"kind": role_kind, "name": role},
            "subjects": subjects or [{"kind": "Group", "name": TEAM.name}]}  # fmt: skip


def agg(name: str, *selectors: dict[str, t.Any], rules: list[t.Any] | None = None) -> t.Any:
    return cr(name, rules or [], aggregationRule={"clusterRoleSelectors": list(selectors)})


def rule(groups: str, resources: str, verbs: str, **extra: list[str]) -> dict[str, t.Any]:
    """A PolicyRule from comma-separated lists ("" is the core group)."""
    lists = {"apiGroups": groups, "resources": resources, "verbs": verbs}
    return {**{k: v.split(",") for k, v in lists.items()}, **extra}


def urls(verbs: str, *paths: str) -> dict[str, t.Any]:
    return {"verbs": verbs.split(), "nonResourceURLs": list(paths)}


CQ_PATCH = rule(KUEUE, "clusterqueues", "patch")


def test_clusterrolebinding_grants_cluster_wide() -> None:
    found = grants([cr("r", [CQ_PATCH]), binding("ClusterRoleBinding", "b", "ClusterRole", "r")])
    assert [(g.subject, g.power) for g in found] == [(TEAM, Power("patch", KUEUE, "clusterqueues"))]
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


def test_deletecollection_is_a_write_and_a_watched_power() -> None:
    rule = {"apiGroups": [KUEUE], "resources": ["clusterqueues"], "verbs": ["deletecollection"]}
    found = grants([cr("r", [rule]), binding("ClusterRoleBinding", "b", "ClusterRole", "r")])
    assert [str(g.power) for g in found] == [
        "deletecollection clusterqueues.kueue.x-k8s.io cluster-wide"
    ]
    assert "deletecollection" in WRITE_VERBS
    assert all("deletecollection" in w.verbs for w in WATCHED if w.resource == "clusterqueues")


def test_wildcards_and_aggregation() -> None:
    star = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    role = agg("agg", {"matchLabels": {"x": "y"}})
    policy = Policy([role, cr("part", [star], {"x": "y"}), cr("other", [CQ_PATCH])])
    assert policy.rules(RoleRef("ClusterRole", "agg")) == (Rule.of(star),)
    found = grants(
        [
            role,
            cr("part", [star], {"x": "y"}),
            binding("ClusterRoleBinding", "b", "ClusterRole", "agg"),
        ]
    )
    assert holds(found, TEAM, Power("impersonate", "", "users"))
    assert holds(found, TEAM, Power("escalate", "rbac.authorization.k8s.io", "clusterroles"))


META_MIDDLE = {"metadata": {"name": "middle", "labels": {"to": "top"}}}


def test_aggregation_reaches_a_fixed_point_and_replaces_the_written_rules() -> None:
    # top <- middle <- leaf, listed so that one pass in order would miss the leaf's rule.
    policy = Policy(
        [
            agg("top", {"matchLabels": {"to": "top"}}, rules=[CQ_PATCH]),
            agg("middle", {"matchLabels": {"to": "middle"}}) | META_MIDDLE,
            cr("leaf", [rule("", "users", "impersonate")], {"to": "middle"}),
        ]
    )
    [only] = policy.rules(RoleRef("ClusterRole", "top")) or ()
    assert only.verbs == ("impersonate",)  # CQ_PATCH, as written, is overwritten by the controller
    assert str(only.origin) == "ClusterRole leaf rules[0]"
    assert policy.rules(RoleRef("ClusterRole", "nowhere")) is None


def test_an_empty_selector_aggregates_every_other_clusterrole_and_nil_none() -> None:
    policy = Policy([agg("all", {}), agg("none"), cr("a", [CQ_PATCH])])
    assert policy.rules(RoleRef("ClusterRole", "all")) == (Rule.of(CQ_PATCH),)
    assert policy.rules(RoleRef("ClusterRole", "none")) == ()


NAMED_A = rule(KUEUE, "clusterqueues", "patch,list", resourceNames=["a"])


@pytest.mark.parametrize(
    ("raw", "asked", "allowed"),
    [
        (rule("batch", "jobs", "get"), Request("get", "batch", "jobs"), True),
        (rule("batch", "jobs", "get"), Request("get", "batch", "jobs/status"), False),
        (rule("*", "*/status", "patch"), Request("patch", "batch", "jobs/status"), True),
        (rule("*", "*/status", "patch"), Request("patch", "batch", "jobs"), False),
        (rule("", "pods", "*"), Request("deletecollection", "", "pods"), True),
        (rule("", "pods", "get"), Request("get", "apps", "pods"), False),
        # resourceNames: only requests naming one of them (a LIST or a create names nothing).
        (NAMED_A, Request("patch", KUEUE, "clusterqueues", name="a"), True),
        (NAMED_A, Request("patch", KUEUE, "clusterqueues", name="b"), False),
        (NAMED_A, Request("list", KUEUE, "clusterqueues"), False),
        # nonResourceURLs match paths, a trailing * as a prefix, and never resources.
        (urls("get", "/metrics"), Request("get", path="/metrics"), True),
        (urls("get", "/apis/*"), Request("get", path="/apis/batch/v1"), True),
        (urls("get", "/apis/*"), Request("get", path="/api"), False),
        (urls("get", "*"), Request("get", "", "pods"), False),
        (rule("*", "*", "get"), Request("get", path="/healthz"), False),
        ("not a rule", Request("get", "", "pods"), False),
    ],
)
def test_rule_matching_as_the_authorizer_does(raw: t.Any, asked: Request, allowed: bool) -> None:
    assert allows(Rule.of(raw), asked) is allowed


def test_resource_names_give_named_powers() -> None:
    named = rule("", "users", "impersonate", resourceNames=["alice", "bob"])
    found = grants([cr("r", [named]), binding("ClusterRoleBinding", "b", "ClusterRole", "r")])
    assert sorted(str(g.power) for g in found) == [
        "impersonate users named alice cluster-wide",
        "impersonate users named bob cluster-wide",
    ]
    assert holds(found, TEAM, Power("impersonate", "", "users", name="alice"))
    assert not holds(found, TEAM, Power("impersonate", "", "users", name="carol"))
    assert not holds(found, TEAM, Power("impersonate", "", "users"))


def test_a_namespace_rolebinding_on_named_namespaces_reaches_only_its_own() -> None:
    named = rule("", "namespaces", "patch", resourceNames=["team-a"])
    objects = [cr("r", [named]), binding("RoleBinding", "a", "ClusterRole", "r", "team-a"),
               binding("RoleBinding", "b", "ClusterRole", "r", "team-b")]  # fmt: skip
    assert [str(g.power) for g in grants(objects)] == ["patch namespaces in namespace team-a"]


def test_service_accounts_default_to_the_rolebinding_namespace_and_their_groups() -> None:
    role = {"apiVersion": RBAC, "kind": "Role", "metadata": {"name": "r", "namespace": "team-a"},
            "rules": [rule("", "namespaces", "update")]}  # fmt: skip
    robot = [{"kind": "ServiceAccount", "name": "robot"}]
    every_sa = [{"kind": "Group", "name": "system:serviceaccounts:team-a"}]
    policy = Policy(
        [
            role,
            binding("RoleBinding", "a", "Role", "r", "team-a", robot),
            binding("RoleBinding", "b", "Role", "r", "team-a", every_sa),
            # A Role is looked up in the binding's own namespace only.
            binding("RoleBinding", "c", "Role", "r", "team-b", robot),
        ]
    )
    [by_name, by_group] = policy.grants()
    assert str(by_name.subject) == "ServiceAccount team-a/robot"
    assert str(by_group.subject) == "Group system:serviceaccounts:team-a"
    other = Subject("ServiceAccount", "other", "team-a")
    update = Request("update", "", "namespaces", "team-a", "team-a")
    assert policy.allowed(other, update)  # through its namespace's service-account group
    assert not policy.allowed(Subject("ServiceAccount", "robot", "team-b"), update)
    assert holds(policy.grants(), other, Power("update", "", "namespaces", "team-a"))


def test_allowed_follows_binding_scope() -> None:
    policy = Policy(
        [cr("r", [CQ_PATCH]), binding("RoleBinding", "b", "ClusterRole", "r", "team-a")]
    )
    assert policy.allowed(TEAM, Request("patch", KUEUE, "clusterqueues", "team-a"))
    assert not policy.allowed(TEAM, Request("patch", KUEUE, "clusterqueues"))
    assert not policy.allowed(
        Subject("Group", "other"), Request("patch", KUEUE, "clusterqueues", "team-a")
    )


def test_the_grant_path_names_binding_role_and_rule() -> None:
    part = cr("part", [rule("x", "y", "get"), CQ_PATCH], {"a": "b"})
    objects = [agg("agg", {"matchLabels": {"a": "b"}}), part, cr("direct", [CQ_PATCH]),
               binding("ClusterRoleBinding", "via-agg", "ClusterRole", "agg"),
               binding("RoleBinding", "direct", "ClusterRole", "direct", "team-a")]  # fmt: skip
    paths = {g.path for g in grants(objects)}
    assert paths == {"ClusterRoleBinding via-agg -> ClusterRole agg -> ClusterRole part rules[1]"}
    ns_patch = rule("", "namespaces", "patch")
    [direct] = grants([cr("direct", [CQ_PATCH, ns_patch]), objects[-1]])
    assert direct.path == "RoleBinding team-a/direct -> ClusterRole direct -> rules[1]"


def test_system_masters_holds_everything() -> None:
    masters = Subject("Group", "system:masters")
    assert holds([], masters, Power("bind", "", "roles"))
    assert Policy([]).allowed(masters, Request("deletecollection", KUEUE, "clusterqueues"))
