"""The deepdiff wrapper yields our own DriftItems, one per field, with values as written."""

from __future__ import annotations

import typing as t

from auditor.drift import classify
from auditor.drift.compare import DriftItem, Op, diff
from auditor.drift.normalize import normalize


def obj(spec: dict[str, t.Any], labels: dict[str, str] | None = None) -> dict[str, t.Any]:
    meta: dict[str, t.Any] = {"name": "q"}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": meta,
            "spec": spec}  # fmt: skip


def items(desired: dict[str, t.Any], live: dict[str, t.Any]) -> list[DriftItem]:
    return diff(normalize(desired), normalize(live))


def test_changed_added_and_removed_fields() -> None:
    found = items(
        obj({"cohortName": "a", "stopPolicy": "None"}),
        obj({"cohortName": "b", "queueingStrategy": "StrictFIFO"}),
    )
    assert found == [
        DriftItem(Op.CHANGE, ("spec", "cohortName"), "a", "b"),
        DriftItem(Op.ADD, ("spec", "queueingStrategy"), None, "StrictFIFO"),
        DriftItem(Op.REMOVE, ("spec", "stopPolicy"), "None", None),
    ]


def test_quantity_drift_shows_each_side_as_written() -> None:
    def spec(q: t.Any) -> dict[str, t.Any]:
        res = [{"name": "cpu", "nominalQuota": q}]
        return {"resourceGroups": [{"flavors": [{"name": "f", "resources": res}]}]}

    assert items(obj(spec("12")), obj(spec("12000m"))) == []
    [item] = items(obj(spec("12")), obj(spec(13)))
    assert item.path[-3:] == ("resources", "[cpu]", "nominalQuota")
    assert (item.desired, item.live) == ("12", 13)
    assert classify.category("ClusterQueue", item.path) == "quota"


def test_a_plain_list_is_reported_once_as_a_whole() -> None:
    spec = {"resourceGroups": [{"coveredResources": ["cpu", "memory"]}]}
    live = {"resourceGroups": [{"coveredResources": ["memory", "cpu", "gpu"]}]}
    assert items(obj(spec), obj(live)) == [
        DriftItem(
            Op.CHANGE,
            ("spec", "resourceGroups", 0, "coveredResources"),
            ["cpu", "memory"],
            ["memory", "cpu", "gpu"],
        )
    ]


def test_categories() -> None:
    cat = classify.category
    assert cat("ClusterQueue", ("spec", "cohortName")) == "cohort"
    assert cat("Cohort", ("spec", "resourceGroups", 0)) == "cohort"
    assert cat("Namespace", ("metadata", "labels", "platform.example.com/kueue")) == "label"
    assert cat("ClusterQueue", ("spec", "preemption", "withinClusterQueue")) == "preemption"
    assert cat("ClusterQueue", ("spec", "stopPolicy")) == "stop-policy"
    assert cat("ClusterQueue", ("spec", "resourceGroups", 0, "flavors", "[a100]")) == "flavor"
    assert cat("ResourceFlavor", ("spec", "nodeLabels")) == "flavor"
    assert cat("WorkloadPriorityClass", ("value",)) == "priority"
    assert cat("RoleBinding", ("subjects",)) == "rbac"
    assert cat("LocalQueue", ("spec", "clusterQueue")) == "other"
    assert cat("LocalQueue") == "quota"
