"""RBAC powers checked against the real RBAC authorizer: SubjectAccessReview for every subject."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.k8s import rbac as k8s_rbac
from auditor.k8s.rbac import Power, Subject
from auditor.sandbox import Sandbox, Toolchain
from tests.integration.drift_live import drift_json, synced_sandbox

RBAC = "rbac.authorization.k8s.io/v1"
Json = dict[str, t.Any]
NAMESPACES = ("team-a", "team-b", "team-c")


def rule(groups: list[str], resources: list[str], verbs: list[str]) -> Json:
    return {"apiGroups": groups, "resources": resources, "verbs": verbs}


def role(kind: str, name: str, rules: list[Json], ns: str | None = None, **kw: t.Any) -> Json:
    meta: Json = {"name": name, **({"namespace": ns} if ns else {}), **kw.pop("meta", {})}
    return {"apiVersion": RBAC, "kind": kind, "metadata": meta, "rules": rules, **kw}


def bind(kind: str, name: str, ref: tuple[str, str], subject: Json, ns: str | None = None) -> Json:
    return {
        "apiVersion": RBAC,
        "kind": kind,
        "metadata": {"name": name, **({"namespace": ns} if ns else {})},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": ref[0], "name": ref[1]},
        "subjects": [subject],
    }


def user(name: str) -> Json:
    return {"kind": "User", "name": name, "apiGroup": "rbac.authorization.k8s.io"}


def group(name: str) -> Json:
    return {"kind": "Group", "name": name, "apiGroup": "rbac.authorization.k8s.io"}


AGG_LABEL = {"labels": {"example.com/aggregate-to-quota-admin": "true"}}
PART_RULES = [
    rule(["scheduling.k8s.io"], ["priorityclasses"], ["create"]),
    rule(["kueue.x-k8s.io"], ["workloadpriorityclasses"], ["patch"]),
]
FIXTURES: list[Json] = [
    role("ClusterRole", "fx:cq-editor", [rule(["kueue.x-k8s.io"], ["clusterqueues"], ["update"])]),
    bind(
        "ClusterRoleBinding", "fx:cq-editors", ("ClusterRole", "fx:cq-editor"), group("fx:team-a")
    ),
    role("ClusterRole", "fx:kueue-star", [rule(["kueue.x-k8s.io"], ["*"], ["*"])]),
    bind("ClusterRoleBinding", "fx:alice", ("ClusterRole", "fx:kueue-star"), user("fx:alice")),
    role("Role", "fx:ns-patch", [rule([""], ["namespaces"], ["patch"])], "team-b"),
    bind("RoleBinding", "fx:ns-patchers", ("Role", "fx:ns-patch"), group("fx:team-b"), "team-b"),
    role("ClusterRole", "fx:ns-update", [rule([""], ["namespaces"], ["update", "get"])]),
    bind(
        "RoleBinding",
        "fx:robot",
        ("ClusterRole", "fx:ns-update"),
        {"kind": "ServiceAccount", "name": "robot", "namespace": "team-c"},
        "team-c",
    ),
    role("ClusterRole", "fx:impersonator", [rule([""], ["users", "groups"], ["impersonate"])]),
    bind("ClusterRoleBinding", "fx:bob", ("ClusterRole", "fx:impersonator"), user("fx:bob")),
    role(
        "ClusterRole",
        "fx:binder",
        [rule(["rbac.authorization.k8s.io"], ["clusterroles", "roles"], ["bind", "escalate"])],
    ),
    bind("ClusterRoleBinding", "fx:ops", ("ClusterRole", "fx:binder"), group("fx:ops")),
    role("ClusterRole", "fx:quota-part", PART_RULES, meta=AGG_LABEL),
    # Aggregated; its rules are written as the aggregation controller writes them.
    role(
        "ClusterRole",
        "fx:quota-admin",
        PART_RULES,
        aggregationRule={"clusterRoleSelectors": [{"matchLabels": AGG_LABEL["labels"]}]},
    ),
    bind("ClusterRoleBinding", "fx:carol", ("ClusterRole", "fx:quota-admin"), user("fx:carol")),
    role(
        "Role",
        "fx:role-binder",
        [rule(["rbac.authorization.k8s.io"], ["roles"], ["bind"])],
        "team-a",
    ),
    bind("RoleBinding", "fx:dave", ("Role", "fx:role-binder"), user("fx:dave"), "team-a"),
    # A RoleBinding to a ClusterRole over a cluster-scoped kind grants nothing there.
    bind("RoleBinding", "fx:erin", ("ClusterRole", "fx:cq-editor"), user("fx:erin"), "team-a"),
    role("ClusterRole", "fx:reader", [rule(["kueue.x-k8s.io"], ["*"], ["get", "list"])]),
    bind("ClusterRoleBinding", "fx:frank", ("ClusterRole", "fx:reader"), user("fx:frank")),
]
SUBJECTS = [
    Subject("Group", "fx:team-a"),
    Subject("User", "fx:alice"),
    Subject("Group", "fx:team-b"),
    Subject("ServiceAccount", "robot", "team-c"),
    Subject("User", "fx:bob"),
    Subject("Group", "fx:ops"),
    Subject("User", "fx:carol"),
    Subject("User", "fx:dave"),
    Subject("User", "fx:erin"),
    Subject("User", "fx:frank"),
    Subject("Group", "system:masters"),
]
HOLDERS = {str(s) for s in SUBJECTS[:8]}  # erin, frank and system:masters are not reported


@pytest.fixture(scope="module")
def rbac_box(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    repo_dir = tmp_path_factory.mktemp("rbac-repo")
    with synced_sandbox(toolchain, sandboxes_dir, repo_dir, "drift-rbac") as (box, repo):
        cluster = box.connect()
        cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-c"}})
        for obj in FIXTURES:
            cluster.create(obj)
        yield box, repo


def review(box: Sandbox, subject: Subject, power: Power) -> bool:
    if subject.kind == "ServiceAccount":
        who: Json = {
            "user": f"system:serviceaccount:{subject.namespace}:{subject.name}",
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{subject.namespace}"],
        }
    elif subject.kind == "User":
        who = {"user": subject.name}
    else:
        who = {"user": "fx:probe", "groups": [subject.name]}
    attrs: Json = {"verb": power.verb, "group": power.group, "resource": power.resource}
    if power.namespace:
        attrs["namespace"] = power.namespace
        if power.resource == "namespaces":
            attrs["name"] = power.namespace  # a namespace object's request carries itself
    answer = box.connect().create(
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {**who, "resourceAttributes": attrs},
        }
    )
    return bool(answer["status"].get("allowed"))


def questions() -> list[Power]:
    out = []
    for grp, resource, verbs, namespaced in k8s_rbac.WATCHED:
        for verb in verbs:
            out.append(Power(verb, grp, resource))
            if namespaced:
                out.extend(Power(verb, grp, resource, ns) for ns in NAMESPACES)
    return out


def test_computed_powers_agree_with_subject_access_review(rbac_box: tuple[Sandbox, Path]) -> None:
    box, _ = rbac_box
    cluster = box.connect()
    live = [o for kind in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
            for o in cluster.list(RBAC, kind)]  # fmt: skip
    found = k8s_rbac.grants(live)
    disagreements = []
    asked = 0
    for subject in SUBJECTS:
        for power in questions():
            ours, theirs = k8s_rbac.holds(found, subject, power), review(box, subject, power)
            asked += 1
            if ours != theirs:
                disagreements.append((str(subject), str(power), ours, theirs))
    assert disagreements == []
    assert asked > 300
    granted = {str(s) for s in SUBJECTS if any(k8s_rbac.holds(found, s, p) for p in questions())}
    assert granted == HOLDERS | {"Group system:masters"}


def test_drift_reports_every_subject_holding_a_power_the_repo_does_not_give(
    rbac_box: tuple[Sandbox, Path],
) -> None:
    box, repo = rbac_box
    code, report = drift_json(repo, box.kubeconfig)
    assert code == 1
    power_findings = [f for f in report["findings"] if f["rule"] == "rbac-power"]
    assert {f["subject"] for f in power_findings} == HOLDERS
    assert all(f["category"] == "rbac" and f["change"] == "unmanaged" for f in power_findings)
    robot = next(f for f in power_findings if f["subject"] == "ServiceAccount team-c/robot")
    assert robot["live"] == "update namespaces in namespace team-c"
    assert [f for f in report["findings"] if f["rule"] != "rbac-power"] == []
