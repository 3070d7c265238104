"""Status conditions, read as controllers write them."""

from __future__ import annotations

import typing as t

from auditor.k8s import conditions

CLUSTER_QUEUE = {
    "status": {
        "conditions": [
            {
                "type": "Active",
                "status": "False",
                "reason": "Stopped",
                "message": "Can't admit new workloads: is stopped.",
            }
        ]
    }
}


def test_a_condition_is_found_by_type_with_its_status_reason_and_message() -> None:
    assert conditions.is_false(CLUSTER_QUEUE, "Active")
    assert not conditions.is_true(CLUSTER_QUEUE, "Active")
    assert conditions.decided(CLUSTER_QUEUE, "Active")
    assert conditions.reason(CLUSTER_QUEUE, "Active") == "Stopped"
    assert conditions.message(CLUSTER_QUEUE, "Active") == "Can't admit new workloads: is stopped."


def test_an_absent_or_unknown_condition_is_neither_true_nor_false() -> None:
    unknown = {"status": {"conditions": [{"type": "Active", "status": "Unknown"}]}}
    objects: list[dict[str, t.Any]] = [unknown, {"status": {}}, {}]
    for obj in objects:
        assert not conditions.decided(obj, "Active")
        assert conditions.reason(obj, "Other") is None
        assert conditions.message(obj, "Other") == ""
