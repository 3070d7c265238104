"""auditor.kueue.webhooks: Kueue v0.17.0's webhook rules beyond the CRDs, one at a time."""

from __future__ import annotations

import typing as t

from auditor.kueue.webhooks import violations

Json = dict[str, t.Any]


def cq(spec: Json, kind: str = "ClusterQueue") -> Json:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": {"name": "q"},
            "spec": spec}  # fmt: skip


def group(covered: list[str], flavors: int = 1, **fields: t.Any) -> Json:
    return {
        "coveredResources": covered,
        "flavors": [
            {
                "name": f"f{i}-{covered[0]}",
                "resources": [{"name": r, "nominalQuota": "1", **fields} for r in covered],
            }
            for i in range(flavors)
        ],
    }


def found(obj: Json) -> list[tuple[str, str]]:
    return [(v.rule.id, ".".join(str(p) for p in v.path)) for v in violations(obj)]


def test_a_sound_queue_cohort_and_flavor_have_none() -> None:
    spec = {
        "cohortName": "c",
        "resourceGroups": [group(["cpu", "nvidia.com/gpu"])],
        "namespaceSelector": {"matchLabels": {"a": "b"}},
        "fairSharing": {"weight": "0"},
    }
    assert violations(cq(spec)) == []
    assert violations(cq({"resourceGroups": [group(["cpu"])]}, "Cohort")) == []
    assert violations({"kind": "ResourceFlavor", "spec": {"nodeLabels": {"a/b": "c"}}}) == []
    assert violations({"kind": "LocalQueue", "spec": {"clusterQueue": "-1"}}) == []


def test_negative_quotas_and_weights() -> None:
    rgs = [group(["cpu"], borrowingLimit="-1")]
    rgs[0]["flavors"][0]["resources"][0]["nominalQuota"] = "-2"
    spec: Json = {"resourceGroups": rgs, "fairSharing": {"weight": -1}}
    assert found(cq(spec, "Cohort")) == [
        ("quantity-negative", "spec.resourceGroups.0.flavors.0.resources.0.nominalQuota"),
        ("quantity-negative", "spec.resourceGroups.0.flavors.0.resources.0.borrowingLimit"),
        ("quantity-negative", "spec.fairSharing.weight"),
    ]
    assert found(cq({"fairSharing": {"weight": "1n"}})) == [
        ("fair-sharing-weight-tiny", "spec.fairSharing.weight")
    ]
    assert found(cq({"fairSharing": {"weight": "2n"}})) == []


def test_covered_resource_names_and_totals() -> None:
    assert found(cq({"resourceGroups": [group(["Bad_"])]})) == [
        ("resource-name-invalid", "spec.resourceGroups.0.coveredResources.0")
    ]
    many = [group([f"r{g}"], flavors=52) for g in range(5)]  # 260 flavors
    wide = [group([f"g{g}r{r}" for r in range(17)]) for g in range(16)]  # 272 resources
    pairs = [group([f"r{r}" for r in range(9)], flavors=57)]  # 513 pairs
    assert found(cq({"resourceGroups": many})) == [("quota-too-many", "spec.resourceGroups")]
    assert found(cq({"resourceGroups": wide})) == [("quota-too-many", "spec.resourceGroups")]
    assert found(cq({"resourceGroups": pairs})) == [("quota-too-many", "spec.resourceGroups.0")]
    assert found(cq({"resourceGroups": many}, "Cohort")) == []  # Cohorts have no such limits


def test_namespace_selectors_as_kubernetes_validates_them() -> None:
    selector = {
        "matchLabels": {"ok": "bad value"},
        "matchExpressions": [
            {"key": "a", "operator": "Has"},
            {"key": "b", "operator": "In"},
            {"key": "c", "operator": "Exists", "values": ["x"]},
            {"key": "bad key", "operator": "In", "values": ["y", "-z"]},
        ],
    }
    assert found(cq({"namespaceSelector": selector})) == [
        ("namespace-selector-invalid", "spec.namespaceSelector.matchLabels.ok"),
        ("namespace-selector-invalid", "spec.namespaceSelector.matchExpressions.0.operator"),
        ("namespace-selector-invalid", "spec.namespaceSelector.matchExpressions.1.values"),
        ("namespace-selector-invalid", "spec.namespaceSelector.matchExpressions.2.values"),
        ("namespace-selector-invalid", "spec.namespaceSelector.matchExpressions.3.key"),
        ("namespace-selector-invalid", "spec.namespaceSelector.matchExpressions.3.values.1"),
    ]


def test_flavor_labels_taints_and_tolerations() -> None:
    taint = {"key": "gpu", "value": "yes", "effect": "NoSchedule"}
    spec = {
        "nodeLabels": {"pool": "gpu a"},
        "nodeTaints": [taint, {**taint, "value": "no"}, {**taint, "effect": "NoExecute"},
                       {"key": "x/", "value": "", "effect": "NoSchedule"}],
        "tolerations": [{"operator": "Exists"}, {"key": "bad key", "operator": "Exists"}],
    }  # fmt: skip
    assert found({"kind": "ResourceFlavor", "spec": spec}) == [
        ("flavor-labels-invalid", "spec.nodeLabels.pool"),
        ("flavor-taint-repeated", "spec.nodeTaints.1"),
        ("flavor-labels-invalid", "spec.nodeTaints.3.key"),
        ("flavor-labels-invalid", "spec.tolerations.1.key"),
    ]
