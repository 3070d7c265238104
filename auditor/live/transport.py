"""One HTTP exchange with an API server through the official client's ApiClient: the bytes
of a whole answer, bounded in size once decompressed (auditor/live/answers.py), or the typed
error (auditor/live/apierrors.py) of one that failed.

We call the REST API directly (paths from our own discovery) rather than through the dynamic
client: LIST responses stay plain JSON, with no per-object wrapping, which keeps a drift audit
close to the cost of the raw LIST calls it needs.
"""

from __future__ import annotations

import typing as t

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from auditor.live import answers, apierrors


def exchange(
    api: client.ApiClient,
    cluster: str,
    action: str,
    method: str,
    path: str,
    *,
    query: list[tuple[str, t.Any]] | None,
    body: t.Any,
    headers: dict[str, str],
    timeout: tuple[float, float],
    acting_as: tuple[str, tuple[str, ...]] | None = None,
) -> tuple[bytes, int]:
    """Send one request and return its whole answer's bytes and HTTP status; a failure is
    Unreachable (no answer), Overrun (too long an answer) or the ApiError the answer means."""
    server = str(api.configuration.host)
    try:
        method, url, headers, body, _ = api.param_serialize(
            method,
            path,
            query_params=query or [],
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        sent = _impersonation(headers, *acting_as) if acting_as else headers
        resp = api.call_api(method, url, header_params=sent, body=body, _request_timeout=timeout)
        # streamed (the client asks for the body unread): a decompressed body is bounded
        data = answers.read(resp.response, cluster, action)
    except ApiException as exc:  # status 0: the client's way of saying TLS or transport failed
        raise apierrors.Unreachable(
            f"cluster {cluster} at {server} is unreachable: {exc.reason}",
            cluster=cluster,
            action=action,
        ) from exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        silent = isinstance(exc, urllib3.exceptions.TimeoutError)
        late = ": no answer in time" if silent else ""  # the error says which timeout
        raise apierrors.Unreachable(
            f"cluster {cluster} at {server} is unreachable{late} ({type(exc).__name__}: {exc})",
            cluster=cluster,
            action=action,
        ) from exc
    if not 200 <= resp.status < 300:
        raise apierrors.refusal(cluster, action, int(resp.status), data, resp.headers, resp.reason)
    return data, int(resp.status)


def _impersonation(
    headers: t.Mapping[str, str], user: str, groups: tuple[str, ...]
) -> t.Mapping[str, str]:
    """`headers` plus one Impersonate-User and one Impersonate-Group header per group."""
    out = urllib3.HTTPHeaderDict(dict(headers))
    out["Impersonate-User"] = user
    for group in groups:
        out.add("Impersonate-Group", group)
    return out
