"""Harmless extra metadata is not drift; a flavor list in another order is (Kueue tries them in
order); resource groups are still compared by position."""

from __future__ import annotations

import typing as t

from auditor.drift import engine
from auditor.model import Finding, Resource
from tests.unit.drift.objects import PROFILE, live_of, obj

CQ = "kueue.x-k8s.io/v1beta2"
ADMIT = {"platform.example.com/kueue": "enabled"}


def cq(flavors: list[str], *, labels: dict[str, str] | None = None, **spec: t.Any) -> t.Any:
    group = {
        "coveredResources": ["nvidia.com/gpu"],
        "flavors": [{"name": f, "resources": [{"name": "nvidia.com/gpu", "nominalQuota": 8}]}
                    for f in flavors],
    }  # fmt: skip
    meta = {"labels": labels} if labels else {}
    return obj(CQ, "ClusterQueue", "team-a-cq", meta=meta,
               spec={"resourceGroups": [group], "namespaceSelector": {"matchLabels": ADMIT},
                     **spec})  # fmt: skip


def ns(name: str, labels: dict[str, str], annotations: dict[str, str] | None = None) -> t.Any:
    meta: dict[str, t.Any] = {"labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return obj("v1", "Namespace", name, meta=meta)


def findings(desired: list[t.Any], *live: t.Any) -> list[Finding]:
    resources = [Resource(body=b, file="clusters/c/x.yaml", line=1, cluster="c") for b in desired]
    return engine.compare_cluster(engine.RepoSide(PROFILE, resources), live_of(*live))


def test_a_label_and_an_annotation_the_repo_never_sets_and_nothing_reads_are_not_drift() -> None:
    desired = [cq(["a100"]), ns("team-a", ADMIT)]
    live = [
        cq(["a100"], labels={"cost-center": "ml"}),
        ns("team-a", ADMIT, annotations={"owner": "alice"}),
    ]
    assert findings(desired, *live) == []


def test_a_label_a_selector_reads_is_drift_even_when_the_repo_does_not_set_it() -> None:
    reads_gpu_class = cq(["a100"])
    reads_gpu_class["spec"]["namespaceSelector"] = {
        "matchLabels": ADMIT,
        "matchExpressions": [{"key": "gpu-class", "operator": "NotIn", "values": ["none"]}],
    }
    [found] = findings(
        [reads_gpu_class, ns("team-a", ADMIT)],
        reads_gpu_class,
        ns("team-a", {**ADMIT, "gpu-class": "none"}),
    )
    assert (found.rule.id, found.kind, found.path) == (
        "drift-label",
        "Namespace",
        "metadata.labels.gpu-class",
    )


def test_labels_an_aggregation_rule_or_an_admission_policy_reads_are_drift() -> None:
    aggregate = obj(
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        "kueue-admin",
        aggregationRule={"clusterRoleSelectors": [{"matchLabels": {"kueue/aggregate": "true"}}]},
    )
    role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "quota-reader", rules=[])
    policy = obj(
        "admissionregistration.k8s.io/v1",
        "ValidatingAdmissionPolicy",
        "p",
        spec={"validations": [{"expression": "namespaceObject.metadata.labels['tier'] != ''"}]},
    )
    live_role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "quota-reader", rules=[],
                    meta={"labels": {"kueue/aggregate": "true"}})  # fmt: skip
    found = findings(
        [aggregate, role, policy, ns("team-a", ADMIT)],
        aggregate,
        live_role,
        policy,
        ns("team-a", {**ADMIT, "tier": "gold", "unread": "x"}),
    )
    paths = {(f.kind, f.path) for f in found if f.change == "modified"}
    assert paths == {
        ("ClusterRole", "metadata.labels.kueue/aggregate"),
        ("Namespace", "metadata.labels.tier"),
    }


def test_a_key_the_repo_sets_on_other_objects_of_the_kind_counts_and_so_do_changes() -> None:
    desired = [ns("team-a", {**ADMIT, "team": "a"}), ns("team-b", ADMIT)]
    live = [ns("team-a", {**ADMIT, "team": "b"}), ns("team-b", {**ADMIT, "team": "a"})]
    assert sorted((f.name, f.path, f.live) for f in findings(desired, *live)) == [
        ("team-a", "metadata.labels.team", "b"),
        ("team-b", "metadata.labels.team", "a"),
    ]


def test_a_node_selector_annotation_on_a_namespace_is_drift() -> None:
    key = "scheduler.alpha.kubernetes.io/node-selector"
    [found] = findings([ns("team-a", ADMIT)], ns("team-a", ADMIT, annotations={key: "pool=spot"}))
    assert found.path == f"metadata.annotations.{key}"


def test_flavors_in_another_order_are_drift_with_both_orders_named() -> None:
    [found] = findings([cq(["h100", "a100"])], cq(["a100", "h100"]))
    assert (found.rule.id, found.path) == ("drift-flavor", "spec.resourceGroups[0].flavors")
    assert (found.desired, found.live) == (["h100", "a100"], ["a100", "h100"])
    assert "Kueue tries them in this order" in found.message


def test_a_flavor_added_at_the_end_is_one_finding_not_an_order_change() -> None:
    found = findings([cq(["h100", "a100"])], cq(["h100", "a100", "l4"]))
    assert [(f.path, f.change) for f in found] == [
        ("spec.resourceGroups[0].flavors[l4]", "modified")
    ]


def test_resource_groups_are_compared_by_position() -> None:
    def two(first: str, second: str) -> t.Any:
        body = cq(["a100"])
        quota = [{"name": "cpu", "nominalQuota": 4}]
        cpu = {"coveredResources": ["cpu"], "flavors": [{"name": "cpu", "resources": quota}]}
        groups = body["spec"]["resourceGroups"] + [cpu]
        body["spec"]["resourceGroups"] = groups if first == "gpu" else groups[::-1]
        return body

    assert findings([two("gpu", "cpu")], two("gpu", "cpu")) == []
    assert findings([two("gpu", "cpu")], two("cpu", "gpu")) != []


def test_sets_written_as_lists_in_another_order_are_not_drift() -> None:
    def two_resources(order: list[str]) -> t.Any:
        body = cq(["a100"])
        group = body["spec"]["resourceGroups"][0]
        group["coveredResources"] = order
        group["flavors"][0]["resources"] = [{"name": r, "nominalQuota": 8} for r in order]
        return body

    assert findings([two_resources(["cpu", "memory"])], two_resources(["memory", "cpu"])) == []

    def role(resources: list[str], verbs: list[str]) -> t.Any:
        rule = {"apiGroups": ["kueue.x-k8s.io"], "resources": resources, "verbs": verbs}
        return obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r", rules=[rule])

    written = role(["localqueues", "workloads"], ["get", "list", "watch"])
    shuffled = role(["workloads", "localqueues"], ["watch", "get", "list"])
    assert [f for f in findings([written], shuffled) if f.change == "modified"] == []
    grown = role(["localqueues", "workloads"], ["watch", "get", "list", "patch"])
    [found] = [f for f in findings([written], grown) if f.change == "modified"]
    assert (found.path, found.live) == ("rules[0].verbs", ["watch", "get", "list", "patch"])
