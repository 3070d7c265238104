"""validate --server-side: which refusals are the server judging the object."""

from __future__ import annotations

from auditor.live import apierrors
from auditor.validate.engine import judged


def test_a_webhook_denial_is_a_verdict_an_rbac_refusal_is_not() -> None:
    webhook = (
        'admission webhook "vclusterqueue.kb.io" denied the request: spec.resourceGroups[0]'
        '.flavors[0].resources[0].nominalQuota: Invalid value: "-2": must be greater than or '
        "equal to 0"
    )
    assert judged(apierrors.WebhookDenied(webhook, code=403))
    assert not judged(apierrors.Forbidden('clusterqueues is forbidden: User "x" cannot create'))
    assert judged(apierrors.Invalid("spec.x: Invalid value", code=422))
    assert judged(apierrors.Unfitting(".spec.x: field not declared in schema", code=500))
    assert not judged(apierrors.Unavailable("down", code=503))
    assert not judged(apierrors.WebhookFailed('failed calling webhook "x"', code=500))
