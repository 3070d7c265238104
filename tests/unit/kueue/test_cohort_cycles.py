"""Forest.cycles, ancestry and below: the shape of cohort trees, loops included."""

from __future__ import annotations

import typing as t

from auditor.kueue.cohorts import Forest


def cohort(name: str, parent: str | None = None) -> dict[str, t.Any]:
    spec = {"parentName": parent} if parent else {}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort",
            "metadata": {"name": name}, "spec": spec}  # fmt: skip


def test_each_loop_is_found_once_from_its_first_name() -> None:
    forest = Forest.of(
        [cohort("c", "a"), cohort("a", "b"), cohort("b", "c"), cohort("d", "a"), cohort("e", "e")]
    )
    assert forest.cycles() == [("a", "b", "c"), ("e",)]


def test_a_tree_has_no_cycle_and_knows_its_subtrees() -> None:
    forest = Forest.of([cohort("root"), cohort("ai", "root"), cohort("vision", "ai")])
    assert forest.cycles() == []
    assert forest.ancestry("vision") == ["vision", "ai", "root"]
    assert forest.below("ai") == {"ai", "vision"}
    assert forest.below("root") == {"root", "ai", "vision"}
