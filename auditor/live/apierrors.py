"""What went wrong with a request to a Kubernetes API server, as a type, decided here once.

An API server that refuses a request answers with an HTTP status and a `Status` object
(kind: Status) whose `reason` is its own word for what happened (metav1.StatusReason:
NotFound, Forbidden, Conflict, AlreadyExists, Invalid, TooManyRequests, ...), `message` says it
in a sentence and `details` names the object. `refusal` turns such an answer into one class of
the tree below, reading the reason first and the HTTP status when there is no Status (a proxy
in front of the server answers with a page of its own). Callers catch the class they mean
(`except NotFound`), never compare status codes or search messages.

Three cases are told by the message, because the API server says them nowhere else: a
validating or mutating admission webhook that could not be called is an InternalError (500)
whose message is `failed calling webhook "<name>": ...` (the apiserver's ErrCallingWebhook);
a webhook's denial reads `admission webhook "<name>" denied the request: ...` with the code
the webhook chose; and server-side apply reports an object that does not fit its kind's type
as a 500 (Unfitting). tests/integration/test_api_errors.py holds both, and each reason, to what a
real kube-apiserver answers.
"""

from __future__ import annotations

import contextlib
import copy
import email.utils
import json
import re
import time
import typing as t

from auditor.errors import ClusterAccessError

MAX_RETRY_AFTER = 60.0  # seconds: a Retry-After longer than this is waited this long
WEBHOOK_FAILED = re.compile(r'failed calling webhook "([^"]+)"')
WEBHOOK_DENIED = re.compile(r'admission webhook "([^"]+)" denied the request')
# What server-side apply says (a 500, not a 400 or 422) of an undeclared field, and of a
# built-in kind's value its Go type cannot hold.
UNFITTING = ("failed to create typed patch object", "unable to convert unstructured object to")


class Unreachable(ClusterAccessError):
    """No HTTP answer: no connection, TLS refused, the connection dropped, no answer in time."""


class NotKubernetes(ClusterAccessError):
    """What answers at the server's address is not a Kubernetes API server (a wrong URL, a
    proxy's error page): nothing it says about a kind means the kind is not served."""


class DeadlineExceeded(ClusterAccessError):
    """The cluster's deadline passed: this request, and every later one, was not made."""


class KindNotServed(ClusterAccessError):
    """The cluster's discovery does not list this apiVersion and kind."""


class Overrun(ClusterAccessError):
    """An answer past what one request may hold (auditor/live/answers.py): too many bytes once
    decompressed, too many values, nested too deep. Not read: nothing is known of it."""


class Malformed(ClusterAccessError):
    """An answer that is not what was asked (auditor/live/answers.py): a LIST of another kind
    or apiVersion, without `items`, a `Status` in its place. Nothing is known of the kind."""


class ApiError(ClusterAccessError):
    """The API server (or a proxy before it) answered with an error status."""

    def __init__(
        self,
        message: str,
        *,
        cluster: str | None = None,
        action: str | None = None,
        code: int = 0,
        reason: str = "",
        details: t.Mapping[str, t.Any] | None = None,
        retry_after: float | None = None,
        said: str = "",
    ) -> None:
        super().__init__(message, cluster=cluster, action=action)
        self.said = said or message  # the server's own words (the Status message)
        self.code = code  # the HTTP status
        self.reason = reason  # the Status object's reason; "" when the answer had none
        self.details = dict(details or {})  # the Status object's details (name, kind, causes)
        self.retry_after = retry_after  # seconds the answer asked to wait, if it did

    def reworded(self, message: str, *, cluster: str | None = None) -> t.Self:
        """The same answer (its class, code, reason, details, the server's words) told in
        `message`: a copy, so a field added above is never dropped by a caller's rebuild."""
        out = copy.copy(self)
        out.args = (message,)
        out.cluster = self.cluster if cluster is None else cluster
        return out


class BadRequest(ApiError):
    """400: the request or the object could not be decoded (strict field validation too)."""


class Unauthorized(ApiError):
    """401: the credentials were not accepted."""


class Forbidden(ApiError):
    """403: the identity may not do this (RBAC or another authorizer)."""


class NotFound(ApiError):
    """404: no such object (or namespace)."""


class Conflict(ApiError):
    """409: the object changed since it was read (a stale resourceVersion)."""


class AlreadyExists(Conflict):
    """409 AlreadyExists: a create of an object that exists."""


class Invalid(ApiError):
    """422: the object breaks the kind's schema or validation rules."""


class WebhookDenied(ApiError):
    """An admission webhook looked at the object and said no (the code is the webhook's)."""


class Throttled(ApiError):
    """429 (API Priority and Fairness, a rate limit), or 503 naming a Retry-After: not done,
    ask again after `wait` seconds."""

    @property
    def wait(self) -> float:
        return min(self.retry_after if self.retry_after is not None else 1.0, MAX_RETRY_AFTER)


class Unavailable(ApiError):
    """502 or 503: the server, or a proxy before it, cannot serve now."""


class TimedOut(ApiError):
    """The server gave up on the request in time (504, reason Timeout or ServerTimeout)."""


class InternalError(ApiError):
    """500: the server failed while serving the request."""


class Unfitting(InternalError):
    """500 where server-side apply could not fit the object to its kind's type: a field the
    schema does not declare, a value its Go type cannot hold (`binaryData` not base64). The
    server judged the object, and it is not broken."""


class WebhookFailed(InternalError):
    """An admission webhook the request needed could not be called (down, unreachable, too
    slow) and its failurePolicy is Fail: nothing was decided about the object."""


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequest,
    "Unauthorized": Unauthorized,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "Conflict": Conflict,
    "AlreadyExists": AlreadyExists,
    "Invalid": Invalid,
    "TooManyRequests": Throttled,
    "ServiceUnavailable": Unavailable,
    "Timeout": TimedOut,
    "ServerTimeout": TimedOut,
    "InternalError": InternalError,
}
_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: Invalid,
    429: Throttled,
    500: InternalError,
    502: Unavailable,
    503: Unavailable,
    504: TimedOut,
}
# How a message names the status, as users have read it ("forbidden (403)").
_SAID = {401: "unauthorized", 403: "forbidden", 404: "not found"}


def refusal(
    cluster: str,
    action: str,
    code: int,
    body: bytes | str | None,
    headers: t.Mapping[str, str] | None = None,
    phrase: str | None = None,
) -> ApiError:
    """The error an answer with HTTP status `code` and `body` means, for `action` on `cluster`.

    `phrase` is the HTTP reason phrase, said when the body holds no Status message.
    """
    status = _status(body)
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or phrase or "")
    asked = (headers or {}).get("Retry-After")
    retry_after = seconds(asked) if asked is not None else None
    cls = _classify(code, reason, message, retry_after)
    said = _SAID.get(code, f"HTTP {code}")
    return cls(
        f"cluster {cluster}: {action} {said} ({code}): {message}",
        cluster=cluster,
        action=action,
        code=code,
        reason=reason,
        details=status.get("details") if isinstance(status.get("details"), dict) else None,
        retry_after=retry_after,
        said=message,
    )


def _classify(code: int, reason: str, message: str, retry_after: float | None) -> type[ApiError]:
    if code == 500 and WEBHOOK_FAILED.search(message):
        return WebhookFailed
    if WEBHOOK_DENIED.search(message):
        return WebhookDenied
    if code == 500 and any(said in message for said in UNFITTING):
        return Unfitting
    if code == 429 or (code == 503 and retry_after is not None):
        return Throttled
    return _BY_REASON.get(reason) or _BY_CODE.get(code) or ApiError


def _status(body: bytes | str | None) -> dict[str, t.Any]:
    """The Status object an error answer holds; empty when it holds no JSON (a proxy's page)."""
    with contextlib.suppress(ValueError, TypeError):
        doc = json.loads(body or "{}")
        if isinstance(doc, dict):
            return doc
    return {}


def seconds(retry_after: str) -> float | None:
    """Retry-After: seconds, or an HTTP date; None when it is neither."""
    text = retry_after.strip()
    with contextlib.suppress(ValueError):
        return max(0.0, float(text))
    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(text)
        return max(0.0, when.timestamp() - time.time())
    return None
