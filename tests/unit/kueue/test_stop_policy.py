"""What a stopPolicy value means, and the patch that sets one."""

from __future__ import annotations

import typing as t

import pytest

from auditor.kueue import stop_policy


@pytest.mark.parametrize(
    ("policy", "holds"),
    [(None, False), ("None", False), ("Hold", True), ("HoldAndDrain", True)],
)
def test_only_a_policy_other_than_none_holds_admission(policy: str | None, holds: bool) -> None:
    assert stop_policy.holds(policy) is holds


def test_the_patch_sets_the_policy_and_none_removes_it() -> None:
    assert stop_policy.patch("Hold") == {"spec": {"stopPolicy": "Hold"}}
    # JSON merge patch: null deletes the field, so the queue is back at its default (None).
    assert stop_policy.patch(None) == {"spec": {"stopPolicy": None}}
    assert set(stop_policy.STOPPED) == set(stop_policy.EFFECT)


def test_the_policy_is_read_from_the_spec_and_unset_reads_as_none() -> None:
    assert stop_policy.policy_of({"spec": {"stopPolicy": "HoldAndDrain"}}) == "HoldAndDrain"
    assert stop_policy.policy_of({"spec": {}}) is None
    assert stop_policy.policy_of({}) is None


def test_without_takes_out_the_stop_policy_and_leaves_the_queue_as_it_was() -> None:
    queue: dict[str, t.Any] = {
        "kind": "ClusterQueue",
        "spec": {"cohortName": "a", "stopPolicy": "Hold"},
    }
    assert stop_policy.without(queue) == {"kind": "ClusterQueue", "spec": {"cohortName": "a"}}
    assert queue["spec"]["stopPolicy"] == "Hold"  # a copy: the repository's object is untouched
    admitting = {"kind": "ClusterQueue", "spec": {"cohortName": "a"}}
    assert stop_policy.without(admitting) is admitting
