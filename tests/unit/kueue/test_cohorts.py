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


GPU = ("a100", "nvidia.com/gpu")


def holding(**held: str) -> cohorts.Usage:
    """What each ClusterQueue holds of the a100 GPU cell now, by name."""
    return lambda obj, cell: parse(held.get(obj["metadata"]["name"], "0"))


def test_what_a_tree_can_lend_now_is_less_what_its_members_draw() -> None:
    # staging's shape: team-a keeps 2 and lends 2, team-b keeps 2 and lends 1, the org lends 1.
    team_a = cq("team-a-cq", "ai-shared", ("a100", {"nominalQuota": "4", "lendingLimit": "2"}))
    objects = [
        team_a,
        cq("team-b-cq", "ai-shared", ("a100", {"nominalQuota": "3", "lendingLimit": "1"})),
        cohort("ai-shared", "example-org"),
        cohort("example-org", None, ("a100", {"nominalQuota": "1"})),
    ]
    idle = cohorts.Lending.of(objects, holding())
    assert idle.to(team_a, GPU) == parse("2")  # team-b's 1 and the org's 1
    # team-a at its nominal quota lends nothing more, and the rest is unchanged
    assert cohorts.Lending.of(objects, holding(**{"team-a-cq": "4"})).to(team_a, GPU) == parse("2")
    # team-b using all of its 3 GPUs lends nothing; the org's GPU is left
    assert cohorts.Lending.of(objects, holding(**{"team-b-cq": "3"})).to(team_a, GPU) == parse("1")
    # a borrower elsewhere in the tree takes from what is free, never below zero
    busy = cohorts.Lending.of(objects, holding(**{"team-b-cq": "5"}))
    assert busy.to(team_a, GPU) == parse("0")


def test_a_cohorts_pool_counts_its_own_quota_and_what_members_lend_and_draw() -> None:
    objects = [
        cq("team-a-cq", "ai-shared", ("a100", {"nominalQuota": "4", "lendingLimit": "2"})),
        cq("team-b-cq", "ai-shared", ("a100", {"nominalQuota": "3", "lendingLimit": "1"})),
        cohort("ai-shared", "example-org"),
        cohort("example-org", None, ("a100", {"nominalQuota": "1"})),
        cq("elsewhere-cq", "other", ("a100", {"nominalQuota": "8"})),
    ]
    # team-a runs 6: 2 it keeps, 4 drawn from the pool of 2 + 1 + 1.
    used = holding(**{"team-a-cq": "6", "elsewhere-cq": "8"})
    org = cohorts.pool(objects, "example-org", GPU, used)
    assert (org.quota, org.drawn, org.over, org.borrowers) == (
        parse("4"),
        parse("4"),
        parse("0"),
        ("team-a-cq",),
    )
    # ai-shared alone holds 3: the 1 beyond it is borrowed from example-org
    shared = cohorts.pool(objects, "ai-shared", GPU, used)
    assert (shared.quota, shared.drawn, shared.over) == (parse("3"), parse("4"), parse("1"))
    # without the org's GPU, the tree is 1 over
    cut = [*objects[:3], cohort("example-org", None, ("a100", {"nominalQuota": "0"}))]
    assert cohorts.pool(cut, "example-org", GPU, used).over == parse("1")


def test_a_child_cohorts_lending_limit_caps_what_its_subtree_lends_up() -> None:
    objects = [
        cq("team-a-cq", "ai-shared", ("a100", {"nominalQuota": "8"})),
        cohort("ai-shared", "example-org", ("a100", {"nominalQuota": "0", "lendingLimit": "2"})),
        cohort("example-org", None),
    ]
    idle = cohorts.pool(objects, "example-org", GPU, holding())
    assert (idle.quota, idle.drawn) == (parse("2"), parse("0"))
    # ai-shared keeps 6 of its 8; team-a using 7 draws 1 from example-org
    busy = cohorts.pool(objects, "example-org", GPU, holding(**{"team-a-cq": "7"}))
    assert (busy.quota, busy.drawn, busy.borrowers) == (parse("2"), parse("1"), ())
