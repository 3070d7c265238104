"""A new tenant is named as the repository's tenants are: the naming they share, with the
tenant's name standing where it is a whole part of theirs."""

from __future__ import annotations

from auditor.onboard.new_tenant import Habits, _named


def test_the_tenants_name_is_replaced_only_where_it_is_a_whole_part() -> None:
    assert _named([("a", "batch"), ("b", "batch")]) == "batch"  # not "b{tenant}tch"
    assert _named([("nlp", "nlp-gpus"), ("vision", "vision-gpus")]) == "{tenant}-gpus"
    assert _named([("ml", "jobs"), ("cv", "jobs"), ("nlp", "nlp-queue")]) == "jobs"
    assert _named([]) is None


def test_without_tenants_the_ways_are_inits() -> None:
    habits = Habits()
    assert (habits.local_queue_of("x"), habits.queue_of("x")) == ("batch", "x-cq")
    assert habits.role == "kueue-gitops:tenant-submitter"
    named = Habits(local_queue="{tenant}-jobs", cluster_queue="{tenant}-gpus")
    assert (named.local_queue_of("speech"), named.queue_of("speech")) == (
        "speech-jobs",
        "speech-gpus",
    )
