"""Cohort trees: parents in either API version, roots, and what a tree can lend a queue."""

from __future__ import annotations

import typing as t

from auditor.k8s.quantity import parse
from auditor.kueue import cohorts

Json = dict[str, t.Any]


def cq(name: str, cohort: str | None, *cells: tuple[str, Json], version: str = "v1beta2") -> Json:
    spec: Json = {
        "resourceGroups": [
            {
                "coveredResources": ["nvidia.com/gpu"],
                "flavors": [
                    {"name": flavor, "resources": [{"name": "nvidia.com/gpu", **quota}]}
                    for flavor, quota in cells
                ],
            }
        ]
    }
    if cohort:
        spec["cohort" if version == "v1beta1" else "cohortName"] = cohort
    return {
        "apiVersion": f"kueue.x-k8s.io/{version}",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }


def cohort(name: str, parent: str | None = None, *cells: tuple[str, Json]) -> Json:
    body = cq(name, None, *cells)
    body["kind"] = "Cohort"
    if parent:
        body["spec"]["parentName"] = parent
    return body


def test_the_parent_is_read_in_the_spelling_of_the_objects_version() -> None:
    v1beta1 = cq("a", "ai-shared", version="v1beta1")
    assert cohorts.parent_of(cq("a", "ai-shared")) == "ai-shared"
    assert (cohorts.parent_field(v1beta1), cohorts.cohort_of(v1beta1)) == ("cohort", "ai-shared")
    assert cohorts.parent_of(cq("a", None)) is None
    assert cohorts.parent_of(cohort("ai-shared", "org")) == "org"
    assert cohorts.parent_of(cohort("org")) is None
    assert cohorts.parent_field(cohort("org")) == "parentName"
    old_cohort = {
        "apiVersion": "kueue.x-k8s.io/v1alpha1",
        "kind": "Cohort",
        "spec": {"parent": "o"},
    }
    assert cohorts.parent_of(old_cohort) == "o"


def test_a_field_of_another_version_names_no_cohort() -> None:
    # spec.cohort in a v1beta2 ClusterQueue is an unknown field (the schema check reports it).
    half_migrated = cq("a", None)
    half_migrated["spec"]["cohort"] = "ai-shared"
    assert cohorts.cohort_of(half_migrated) is None


def test_every_cohort_knows_its_root_and_a_cycle_stops_the_walk() -> None:
    forest = cohorts.Forest.of(
        [
            cohort("ai-shared", "research"),
            cohort("research", "org"),
            cq("team-a-cq", "ai-shared"),
            cq("team-z-cq", "loop-a"),
            cohort("loop-a", "loop-b"),
            cohort("loop-b", "loop-a"),
            cq("alone-cq", None),
        ]
    )
    assert forest.root("ai-shared") == "org"
    assert forest.tree_of(cq("team-a-cq", "ai-shared")) == "org"
    assert forest.tree_of(cohort("research", "org")) == "org"
    assert forest.root("unknown") == "unknown"
    assert forest.tree_of(cq("alone-cq", None)) is None
    assert {forest.root("loop-a"), forest.root("loop-b")} == {"loop-a", "loop-b"}


def test_what_the_rest_of_a_tree_can_lend_a_queue() -> None:
    team_a = cq("team-a-cq", "ai-shared", ("a100", {"nominalQuota": "8", "borrowingLimit": "8"}))
    objects = [
        team_a,
        # lends at most its lendingLimit
        cq("team-b-cq", "ai-shared", ("a100", {"nominalQuota": "8", "lendingLimit": "2"})),
        # in the same tree, through the parent cohort
        cq("team-c-cq", "research", ("a100", {"nominalQuota": "4"})),
        cohort("ai-shared", "research", ("a100", {"nominalQuota": "1"})),
        # another tree lends nothing here
        cq("team-x-cq", "elsewhere", ("a100", {"nominalQuota": "16"})),
    ]
    lending = cohorts.Lending.of(objects)
    assert lending.to(team_a, ("a100", "nvidia.com/gpu")) == parse("7")  # 2 + 4 + 1
    assert lending.to(team_a, ("h100", "nvidia.com/gpu")) == parse("0")
    assert lending.to(cq("alone-cq", None), ("a100", "nvidia.com/gpu")) is None
