"""What an answer with no Status object means (a proxy's page, a rate limiter's), and the
cases told by the message. What a real kube-apiserver answers, reason by reason, is held in
tests/integration/test_api_errors.py."""

from __future__ import annotations

import pytest

from auditor.errors import ClusterAccessError
from auditor.live import apierrors


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        (400, apierrors.BadRequest),
        (401, apierrors.Unauthorized),
        (403, apierrors.Forbidden),
        (404, apierrors.NotFound),
        (409, apierrors.Conflict),
        (422, apierrors.Invalid),
        (429, apierrors.Throttled),
        (500, apierrors.InternalError),
        (502, apierrors.Unavailable),
        (503, apierrors.Unavailable),
        (504, apierrors.TimedOut),
        (418, apierrors.ApiError),
    ],
)
def test_without_a_status_object_the_http_status_says_what_happened(
    code: int, kind: type[apierrors.ApiError]
) -> None:
    error = apierrors.refusal("c", "LIST Node", code, b"<html>proxy</html>", {}, "Phrase")
    assert type(error) is kind and isinstance(error, ClusterAccessError)
    assert (error.code, error.reason, error.cluster, error.action) == (code, "", "c", "LIST Node")
    assert str(error).startswith("cluster c: LIST Node ") and str(error).endswith(": Phrase")


def test_the_status_reason_wins_over_the_http_status() -> None:
    body = b'{"kind": "Status", "reason": "AlreadyExists", "message": "exists", "code": 409}'
    error = apierrors.refusal("c", "create X", 409, body)
    assert type(error) is apierrors.AlreadyExists and error.said == "exists"


def test_a_webhook_that_denied_is_told_from_one_that_could_not_be_called() -> None:
    denied = 'admission webhook "v.kb.io" denied the request: spec.x: Invalid value'
    failed = 'Internal error occurred: failed calling webhook "v.kb.io": connection refused'
    assert type(apierrors.refusal("c", "a", 403, None, phrase=denied)) is apierrors.WebhookDenied
    assert type(apierrors.refusal("c", "a", 500, None, phrase=failed)) is apierrors.WebhookFailed
    # the words in an object's own field are not the server's failure
    assert type(apierrors.refusal("c", "a", 422, None, phrase=failed)) is apierrors.Invalid
