"""auditor.kueue.webhooks: Kueue's webhook rules beyond the CRDs, one at a time, held to what
each carried release's own webhook code refuses (auditor/kueue/api/<release>.json)."""

from __future__ import annotations

import typing as t

import pytest

from auditor.kueue import release, webhooks

Json = dict[str, t.Any]
CURRENT = release.get("v0.19.2")
LEGACY = release.get("v0.9.1")
assert CURRENT is not None and LEGACY is not None


def violations(obj: Json, known: release.Release | None = CURRENT) -> list[webhooks.Violation]:
    assert known is not None
    return webhooks.violations(obj, known)


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


def found(obj: Json, known: release.Release | None = CURRENT) -> list[tuple[str, str]]:
    return [(v.rule.id, ".".join(str(p) for p in v.path)) for v in violations(obj, known)]


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
    # Kueue v0.9.1's webhook checks only the sign of a weight (derived from its own code).
    assert found(cq({"fairSharing": {"weight": "1n"}}), LEGACY) == []
    assert found(cq({"fairSharing": {"weight": -1}}), LEGACY) == [
        ("quantity-negative", "spec.fairSharing.weight")
    ]


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
    assert found(cq({"resourceGroups": pairs}), LEGACY) == []  # v0.9.1 caps no counts
    [message] = [v.message for v in violations(cq({"resourceGroups": pairs}))]
    assert message == (
        "513 flavor-resource pairs in this resourceGroup: Kueue v0.19.2 takes at most 512"
    )


def test_a_rule_the_release_does_not_refuse_is_not_reported() -> None:
    assert CURRENT is not None
    doc = {**CURRENT.doc, "webhooks": {**CURRENT.doc["webhooks"], "rules": {}, "limits": {}}}
    lenient = release.Release("v0.0.0", doc)
    negative = cq({"resourceGroups": [group(["cpu"], nominalQuota="-1")]})
    assert found(negative) != [] and found(negative, lenient) == []


def test_the_message_is_in_the_releases_own_words() -> None:
    negative = cq({"resourceGroups": [group(["cpu"])]})
    negative["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "-2"
    [v] = violations(negative)
    assert CURRENT is not None
    said = CURRENT.webhook_rule("quantity-negative")
    assert said is not None and said.detail and v.message == f"-2: {said.detail}"


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


def _checks(*on_flavors: str) -> Json:
    return cq(
        {
            "resourceGroups": [group(["cpu"], flavors=2)],  # flavors f0-cpu and f1-cpu
            "admissionChecksStrategy": {
                "admissionChecks": [{"name": "prov", "onFlavors": list(on_flavors)}]
            },
        }
    )


def test_an_admission_check_on_a_flavor_the_queue_lacks_is_refused_where_kueue_refuses() -> None:
    at = "spec.admissionChecksStrategy.admissionChecks.0.onFlavors.1"
    assert found(_checks("f0-cpu", "h100")) == [("admission-check-flavor-unknown", at)]
    [violation] = violations(_checks("h100"))
    assert "'h100' is not one of the queue's flavors (f0-cpu, f1-cpu)" in violation.message
    assert found(_checks("f0-cpu", "f1-cpu")) == []


@pytest.mark.parametrize("version", ["v0.19.2", "v0.17.0"])
def test_a_v1beta1_queues_admission_check_list_replaces_the_strategy_the_webhook_reads(
    version: str,
) -> None:
    """Kueue's conversion to v1beta2 makes a v1beta1 spec.admissionChecks the strategy, over
    what admissionChecksStrategy said: its onFlavors never reach the webhook (a v0.19.2 API
    server takes this queue)."""
    known = release.get(version)
    both = {**_checks("h100"), "apiVersion": "kueue.x-k8s.io/v1beta1"}
    both["spec"]["admissionChecks"] = ["prov"]
    assert found(both, known) == []
    alone = {**_checks("h100"), "apiVersion": "kueue.x-k8s.io/v1beta1"}
    assert [rule for rule, _ in found(alone, known)] == [
        "admission-check-flavor-unknown"
        if version == "v0.19.2"
        else "admission-check-flavor-ignored"
    ]


def test_a_release_that_accepts_it_is_told_what_it_does_there() -> None:
    older = release.get("v0.17.0")
    assert older is not None and not older.refuses("admission-check-flavor-unknown")
    [violation] = violations(_checks("h100"), older)
    assert violation.rule is webhooks.CHECK_FLAVOR_IGNORED
    assert "Kueue v0.17.0 accepts the queue" in violation.message
    assert "admission check 'prov' never runs for it" in violation.message
    assert "Kueue v0.19.2's webhook refuses the queue" in violation.message  # derived, not said


def test_the_release_that_refuses_unknown_on_flavors_is_the_one_whose_code_does() -> None:
    refusing = [v for v in release.known() if (r := release.get(v)) and r.refuses(
        "admission-check-flavor-unknown")]  # fmt: skip
    assert refusing == ["v0.19.2"]
    assert "admission-check-flavor-ignored" not in webhooks.PROBED
