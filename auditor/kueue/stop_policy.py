"""A queue's spec.stopPolicy: None admits, Hold stops new admissions, HoldAndDrain also evicts."""

from __future__ import annotations

import typing as t

from auditor.k8s.objects import Json

FIELD = "stopPolicy"  # of a queue's spec
NONE = "None"
HOLD = "Hold"
HOLD_AND_DRAIN = "HoldAndDrain"
STOPPED = (HOLD, HOLD_AND_DRAIN)
EFFECT = {
    HOLD: "no new workloads are admitted; running ones finish, reservations are released",
    HOLD_AND_DRAIN: "no new workloads are admitted and running ones are evicted",
}


def policy_of(queue: Json) -> t.Any:
    """A ClusterQueue's or LocalQueue's stopPolicy as written (None when unset)."""
    spec = queue.get("spec")
    return spec.get(FIELD) if isinstance(spec, dict) else None


def without(queue: Json) -> Json:
    """A copy of the queue as it is with its stopPolicy removed (admitting: the default)."""
    spec = queue.get("spec")
    if not isinstance(spec, dict) or FIELD not in spec:
        return queue
    return {**queue, "spec": {k: v for k, v in spec.items() if k != FIELD}}


def holds(policy: object) -> bool:
    """Whether a stopPolicy value stops admission (unset and None do not)."""
    return policy not in (None, NONE)


def patch(policy: str | None) -> Json:
    """The merge patch that sets a ClusterQueue's stopPolicy; None removes it (the default)."""
    return {"spec": {FIELD: policy}}
