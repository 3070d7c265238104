"""Normalization: the same object as written and as a real API server returns it compares equal."""

from __future__ import annotations

import typing as t

import pytest

from auditor.drift.normalize import normalize, quantity_value
from tests.estate import ESTATE

CQ_SCHEMA: dict[str, t.Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "stopPolicy": {"type": "string", "default": "None"},
                "namespaceSelector": {"type": "object"},
                "preemption": {
                    "type": "object",
                    "default": {},
                    "properties": {"withinClusterQueue": {"type": "string", "default": "Never"}},
                },
                "resourceGroups": {
                    "type": "array",
                    "x-kubernetes-list-type": "atomic",
                    "items": {
                        "type": "object",
                        "properties": {
                            "flavors": {
                                "type": "array",
                                "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {
                                    "type": "object",
                                    "properties": {
                                        "name": {"type": "string"},
                                        "resources": {
                                            "type": "array",
                                            "x-kubernetes-list-type": "map",
                                            "x-kubernetes-list-map-keys": ["name"],
                                            "items": {
                                                "type": "object",
                                                "properties": {
                                                    "name": {"type": "string"},
                                                    "nominalQuota": {
                                                        "anyOf": [
                                                            {"type": "integer"},
                                                            {"type": "string"},
                                                        ],
                                                        "x-kubernetes-int-or-string": True,
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                },
            },
        }
    },
}


def cq(quota: t.Any, **spec: t.Any) -> dict[str, t.Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "a"},
        "spec": {
            "resourceGroups": [
                {
                    "flavors": [
                        {"name": "f", "resources": [{"name": "memory", "nominalQuota": quota}]}
                    ]
                }
            ],
            **spec,
        },
    }


@pytest.mark.parametrize(
    ("a", "b"),
    [("512Gi", 549755813888), ("12", "12000m"), (12, "12"), ("0.5", "500m"), ("1e3", "1k")],
)
def test_quantities_compare_by_value(a: t.Any, b: t.Any) -> None:
    assert quantity_value(a) == quantity_value(b)
    assert normalize(cq(a), CQ_SCHEMA).body == normalize(cq(b), CQ_SCHEMA).body


def test_different_quantities_stay_different_and_remember_their_spelling() -> None:
    one, two = normalize(cq("1Ti"), CQ_SCHEMA), normalize(cq("2Ti"), CQ_SCHEMA)
    assert one.body != two.body
    path = ("spec", "resourceGroups", 0, "flavors", "[f]", "resources", "[memory]", "nominalQuota")
    assert one.original(path) == "1Ti"


def test_schema_defaults_fill_the_desired_side_like_the_api_server() -> None:
    desired = cq("1")
    live = cq("1", stopPolicy="None", preemption={"withinClusterQueue": "Never"})
    assert normalize(desired, CQ_SCHEMA).body == normalize(live, CQ_SCHEMA).body
    assert normalize(cq("1", stopPolicy="Hold"), CQ_SCHEMA).body != normalize(live, CQ_SCHEMA).body


def test_defaults_apply_inside_defaults_and_leave_the_input_alone() -> None:
    body: dict[str, t.Any] = {"kind": "ClusterQueue", "spec": {}}
    assert normalize(body, CQ_SCHEMA).body == {
        "kind": "ClusterQueue",
        "spec": {"stopPolicy": "None", "preemption": {"withinClusterQueue": "Never"}},
    }
    assert body == {"kind": "ClusterQueue", "spec": {}}


def test_nil_namespace_selector_is_not_the_empty_one() -> None:
    assert (
        normalize(cq("1"), CQ_SCHEMA).body
        != normalize(cq("1", namespaceSelector={}), CQ_SCHEMA).body
    )


def test_server_metadata_status_finalizer_and_tracking_marks_are_left_out() -> None:
    live = cq("1")
    live["metadata"].update(
        uid="u",
        resourceVersion="7",
        generation=2,
        creationTimestamp="2026-11-29T00:00:00Z",
        managedFields=[{"manager": "x"}],
        finalizers=["kueue.x-k8s.io/resource-in-use"],
        labels={"app.kubernetes.io/instance": "app", "argocd.argoproj.io/instance": "app"},
        annotations={
            "argocd.argoproj.io/tracking-id": "x",
            "kubectl.kubernetes.io/last-applied-configuration": "{}",
        },
    )
    live["status"] = {"pendingWorkloads": 3}
    assert normalize(live, CQ_SCHEMA).body == normalize(cq("1"), CQ_SCHEMA).body


def test_other_labels_and_finalizers_still_count() -> None:
    live = cq("1")
    live["metadata"]["finalizers"] = ["example.com/hold"]
    assert normalize(live).body != normalize(cq("1")).body


def test_core_defaults_namespace_and_priorityclass() -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t", "labels": {"a": "b"}}}
    live_ns = {
        **ns,
        "metadata": {"name": "t", "labels": {"a": "b", "kubernetes.io/metadata.name": "t"}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
    assert normalize(ns).body == normalize(live_ns).body
    pc = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "p"},
        "value": 1,
        "globalDefault": False,
    }
    live_pc = {**pc, "preemptionPolicy": "PreemptLowerPriority"}
    del live_pc["globalDefault"]
    assert normalize(pc).body == normalize(live_pc).body


def test_without_a_schema_flavors_and_resources_are_still_keyed_by_name() -> None:
    a = cq("1")
    b = cq("1")
    b["spec"]["resourceGroups"][0]["flavors"][0]["resources"].insert(
        0, {"name": "cpu", "nominalQuota": "2"}
    )
    a["spec"]["resourceGroups"][0]["flavors"][0]["resources"].append(
        {"name": "cpu", "nominalQuota": 2}
    )
    assert normalize(a).body == normalize(b).body


@pytest.mark.parametrize("kind", ["ClusterQueue", "Cohort", "LocalQueue"])
def test_a_fair_sharing_weight_is_a_quantity_in_every_kind_of_the_v0_19_2_schemas(
    kind: str,
) -> None:
    """gpu-staging's committed schemas are Kueue v0.19.2's: 0.5 is stored as 500m."""
    from auditor.schemas.catalog import SchemaCatalog

    schema = SchemaCatalog(ESTATE / "schemas", "gpu-staging").schema("kueue.x-k8s.io/v1beta2", kind)
    assert schema is not None

    def weighed(weight: t.Any) -> dict[str, t.Any]:
        meta = {"name": "a", **({"namespace": "team-a"} if kind == "LocalQueue" else {})}
        return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind, "metadata": meta,
                "spec": {"fairSharing": {"weight": weight}}}  # fmt: skip

    half = {normalize(weighed(w), schema).body["spec"]["fairSharing"]["weight"] for w in
            (0.5, "0.5", "500m", "0.50")}  # fmt: skip
    assert len(half) == 1
    assert normalize(weighed("2"), schema).body != normalize(weighed("0.5"), schema).body
    for written in (0.5, "0.5"):  # and without a schema, by the field's name
        assert normalize(weighed(written), None).body == normalize(weighed("500m"), None).body


def test_a_flavor_written_without_spec_equals_the_one_read_back_with_an_empty_spec() -> None:
    """Kueue's API server returns `spec: {}` for a ResourceFlavor applied without one."""
    written = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
               "metadata": {"name": "default"}}  # fmt: skip
    read_back = {**written, "spec": {}}
    assert normalize(written).body == normalize(read_back).body
    with_labels = {**written, "spec": {"nodeLabels": {"pool": "a"}}}
    assert normalize(with_labels).body != normalize(read_back).body
