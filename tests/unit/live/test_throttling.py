"""How long a throttled answer asks us to wait (auditor/live/apierrors.py, auditor/live/kube.py)."""

from __future__ import annotations

import email.utils
import time

import pytest

from auditor.live import apierrors, kube


def answered(status: int, retry_after: str | None) -> apierrors.ApiError:
    """What an answer with no Status body (a proxy's, a rate limiter's) means."""
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return apierrors.refusal("c", "LIST ClusterQueue", status, b"slow down", headers, "Busy")


@pytest.mark.parametrize(
    ("status", "retry_after", "wait"),
    [
        (429, "3", 3.0),
        (429, None, 1.0),  # throttled, no time named: a second, then backoff
        (503, "2", 2.0),
        (503, None, None),  # unavailable, not throttling: a transient failure of a read
        (500, "2", None),
        (429, "3600", apierrors.MAX_RETRY_AFTER),
        (429, "soon", 1.0),
    ],
)
def test_the_wait_a_throttled_answer_asks_for(
    status: int, retry_after: str | None, wait: float | None
) -> None:
    error = answered(status, retry_after)
    assert (error.wait if isinstance(error, apierrors.Throttled) else None) == wait


def test_retry_after_as_an_http_date() -> None:
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= (apierrors.seconds(later) or 0) <= 30
    assert apierrors.seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_jitter_is_at_most_a_fifth() -> None:
    assert all(2.0 <= kube._jittered(2.0) <= 2.4 for _ in range(100))
