"""Who changed a field, from managedFields."""

from __future__ import annotations

from auditor.drift.managed import changed_by

LIVE = {
    "metadata": {
        "managedFields": [
            {
                "manager": "argocd-controller",
                "operation": "Apply",
                "time": "2026-11-29T10:00:00Z",
                "fieldsV1": {"f:spec": {"f:cohortName": {}, "f:resourceGroups": {}}},
            },
            {
                "manager": "kubectl-edit",
                "operation": "Update",
                "time": "2026-11-29T11:00:00Z",
                "fieldsV1": {
                    "f:spec": {
                        "f:stopPolicy": {},
                        "f:flavors": {'k:{"name":"a100"}': {"f:weight": {}}},
                    }
                },
            },
        ]
    }
}


def test_the_owner_of_a_field_or_of_an_atomic_list_above_it() -> None:
    assert changed_by(LIVE, ("spec", "stopPolicy")) == {
        "manager": "kubectl-edit",
        "operation": "Update",
        "time": "2026-11-29T11:00:00Z",
    }
    path = ("spec", "resourceGroups", 0, "flavors", "[a100]", "nominalQuota")
    assert (changed_by(LIVE, path) or {})["manager"] == "argocd-controller"
    assert (changed_by(LIVE, ("spec", "flavors", "[a100]", "weight")) or {})[
        "manager"
    ] == "kubectl-edit"


def test_a_field_nobody_owns_names_the_last_editor() -> None:
    assert (changed_by(LIVE, ("spec", "gone")) or {})["manager"] == "kubectl-edit"
    assert changed_by({"metadata": {}}, ("spec",)) is None
