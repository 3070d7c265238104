"""validate --server-side: which refusals are the server judging the object."""

from __future__ import annotations

from kubernetes.client.exceptions import ApiException

from auditor.errors import ClusterAccessError
from auditor.validate.engine import judged


def refusal(status: int, message: str) -> ClusterAccessError:
    error = ClusterAccessError(message)
    error.__cause__ = ApiException(status=status, reason=message)
    return error


def test_a_webhook_denial_is_a_verdict_an_rbac_refusal_is_not() -> None:
    webhook = (
        'admission webhook "vclusterqueue.kb.io" denied the request: spec.resourceGroups[0]'
        '.flavors[0].resources[0].nominalQuota: Invalid value: "-2": must be greater than or '
        "equal to 0"
    )
    assert judged(refusal(403, webhook))  # Kueue's webhooks deny with 403 Forbidden
    assert not judged(refusal(403, 'clusterqueues is forbidden: User "x" cannot create'))
    assert judged(refusal(422, "spec.x: Invalid value")) and not judged(refusal(503, "down"))
