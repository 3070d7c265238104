"""The one module that talks to Kubernetes, through the official client's ApiClient.

We call the REST API directly (paths from our own discovery) rather than through the dynamic
client: LIST responses stay plain JSON, with no per-object wrapping, which keeps a drift audit
close to the cost of the raw LIST calls it needs.

Time is bounded (Limits): each request has a connect timeout and a read timeout on every read
of its socket; a cluster may have a deadline over everything, which also ends an answer still
arriving at that moment (auditor/live/bounded.py), after which every request fails at once with
DeadlineExceeded. A read (GET) that failed in transit is tried again a small number of times,
with backoff; an answer that says the server is throttling (429, or 503 with Retry-After) is
waited out as the server asks, for any verb (it was not carried out), within the deadline, and
the time is counted (`throttled`). urllib3's own retries are off: they would multiply every
wait by four, unseen.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import logging
import math
import os
import random
import re
import signal
import ssl
import subprocess
import threading
import time
import types
import typing as t
from dataclasses import dataclass

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config import exec_provider
from kubernetes.config.config_exception import ConfigException

from auditor.errors import ClusterAccessError, ConfigError
from auditor.k8s.objects import Json, group_of
from auditor.live import bounded, kubeconfigs

Items = list[Json]  # spelled once here: inside KubeCluster, `list` is the method
PAGE_SIZE = 500
# HTTP answers worth a second try of a read: the server or a proxy is overloaded or restarting.
RETRY_STATUSES = (429, 502, 503, 504)
MAX_RETRY_AFTER = 60.0  # seconds: a Retry-After longer than this is waited this long


@dataclass(frozen=True)
class Limits:
    """How long one cluster may take: per request, per read retried, and in all."""

    connect: float = 5.0  # seconds to open a connection, TLS included
    read: float = 30.0  # seconds to wait for any one answer (a watch adds its own length)
    deadline: float | None = None  # seconds for every request to the cluster, from connect
    attempts: int = 3  # tries of a read (GET) that failed in transit; writes are tried once
    backoff: float = 0.5  # pause before the second try, doubled before each later one
    throttled: int = 10  # answers "throttled" (429) waited out per request, as client-go does


class KindNotServed(ClusterAccessError):
    """The cluster does not serve this apiVersion and kind."""


class DeadlineExceeded(ClusterAccessError):
    """The cluster's deadline passed: this request, and every later one, was not made."""


class NotKubernetes(ClusterAccessError):
    """What answers at the server's address is not a Kubernetes API server (a wrong URL, a
    proxy's error page): nothing it says about a kind means the kind is not served."""


class ContextMissing(ConfigError):
    """The kubeconfig has no context of that name (one cluster's problem, not the run's)."""


@dataclass(frozen=True)
class ApiResource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool
    verbs: tuple[str, ...] = ()  # what discovery says the API server serves for it


class KubeCluster:
    """One cluster, as named in the repository, reached through one kubeconfig context."""

    # seconds waited out on "throttled" answers, shared by impersonating copies (a list)
    _throttled: list[float] | None = None

    def __init__(
        self,
        api: client.ApiClient,
        name: str,
        limits: Limits | None = None,
        *,
        clock: t.Callable[[], float] = time.monotonic,
        sleep: t.Callable[[float], None] = time.sleep,
        started: float | None = None,
    ) -> None:
        """`started`: when the deadline began (clock time; default now): a kubeconfig that
        took long to read has used some of it."""
        self.api = api
        self.name = name
        self.limits = limits or Limits()
        self.clock, self.sleep = clock, sleep
        deadline = self.limits.deadline
        start = clock() if started is None else started
        self.ends_at = start + deadline if deadline is not None else math.inf
        self._discovery: dict[str, dict[str, ApiResource]] = {}
        self._groups: dict[str, Json] = {}  # /api and /apis, as read
        self.acting_as: tuple[str, tuple[str, ...]] | None = None  # see impersonating()
        self._throttled = [0.0]
        with contextlib.suppress(AttributeError):  # a client without a pool has no answers
            bounded.bound(api.rest_client.pool_manager)

    @property
    def throttled(self) -> float:
        """Seconds this cluster's requests waited because the server said it was throttling."""
        return round(self._throttled[0], 1) if self._throttled else 0.0

    def impersonating(self, user: str, groups: t.Sequence[str] = ()) -> KubeCluster:
        """This cluster as `user` in `groups` would see it, through the Impersonate-User and
        Impersonate-Group headers (the credentials in use need the `impersonate` verb).

        The API server adds system:authenticated to a named user's groups itself.
        """
        other = KubeCluster(self.api, self.name, self.limits, clock=self.clock, sleep=self.sleep)
        other.ends_at, other._discovery, other._groups = self.ends_at, self._discovery, self._groups
        other._throttled = self._throttled
        other.acting_as = (user, tuple(groups))
        return other

    @classmethod
    def connect(
        cls,
        name: str,
        *,
        kubeconfig: str | None = None,
        context: str | None = None,
        limits: Limits | None = None,
    ) -> KubeCluster:
        """A client for `context` of `kubeconfig` (kubectl's defaults for either left out).

        Everything wrong with the kubeconfig is a ConfigError here (exit 2), before any request:
        a missing context, undecodable data, a certificate authority or client key that is not
        PEM, a failed exec credential plugin (whose output is never shown: it can hold a token).
        """
        # $KUBECONFIG as it is now (the client reads it once, when imported), as kubectl would
        given, kubeconfig = kubeconfig, kubeconfig or os.environ.get("KUBECONFIG") or None
        source = given or (f"$KUBECONFIG ({kubeconfig})" if kubeconfig else "~/.kube/config")
        files = [f for f in (kubeconfig or "").split(os.pathsep) if f]
        if files and not any(os.path.exists(f) for f in files):  # kubectl skips only some
            raise ConfigError(
                f"cluster {name}: {'--kubeconfig' if given else '$KUBECONFIG'} names "
                f"{' and '.join(files)}: no such file"
            )
        where = f"context {context or '(current)'} of {source}"
        started = time.monotonic()  # the deadline counts reading the kubeconfig
        try:
            chosen = kubeconfigs.choose(files or [os.path.expanduser("~/.kube/config")], context)
        except kubeconfigs.NoSuchContext as exc:
            raise ContextMissing(f"cluster {name}: no {where}") from exc
        except ConfigError as exc:
            raise ConfigError(f"cluster {name}: {exc}") from exc
        deadline = limits.deadline if limits else None
        left = None if deadline is None else deadline - (time.monotonic() - started)
        if left is not None and left <= 0:
            raise DeadlineExceeded(
                f"cluster {name}: reading {source} took {time.monotonic() - started:.0f}s, past "
                f"the {deadline:g}s deadline for the cluster (--timeout)",
                cluster=name,
            )
        cfg = t.cast(client.Configuration, type.__call__(client.Configuration))
        _guard_exec_plugins()
        _EXEC_FAILURES.message = None
        _EXEC_FAILURES.seconds = left
        try:
            config.kube_config.KubeConfigLoader(  # type: ignore[no-untyped-call]
                config_dict=chosen.config,
                active_context=chosen.name,
                config_base_path=chosen.base,
            ).load_and_set(cfg)
            _check_tls_files(cfg)
        except (ConfigException, OSError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"cluster {name}: cannot use {where}: {exc}") from exc
        if _EXEC_FAILURES.message:
            raise ConfigError(
                f"cluster {name}: the exec credential plugin of {where} failed"
                f"{_EXEC_FAILURES.message}; its output is not shown (it can hold credentials): "
                "run the plugin by hand to see why"
            )
        cfg.retries = False  # before the pool exists, which copies it: our own retries only
        return cls(client.ApiClient(cfg), name, limits, started=started)

    @classmethod
    def in_cluster(
        cls, name: str, *, account_dir: str, limits: Limits | None = None
    ) -> KubeCluster:
        """A client as the pod's ServiceAccount: KUBERNETES_SERVICE_HOST/PORT, and the token
        and CA files (`token`, `ca.crt`) in `account_dir`, re-read as kubelet rotates them."""
        cfg = t.cast(client.Configuration, type.__call__(client.Configuration))
        loader = config.incluster_config.InClusterConfigLoader(  # type: ignore[no-untyped-call]
            token_filename=os.path.join(account_dir, "token"),
            cert_filename=os.path.join(account_dir, "ca.crt"),
        )
        try:
            loader.load_and_set(cfg)  # type: ignore[no-untyped-call]
            _check_tls_files(cfg)
        except (ConfigException, OSError, ValueError) as exc:
            raise ConfigError(
                f"cluster {name}: cannot use the in-cluster ServiceAccount ({account_dir}): {exc}"
            ) from exc
        cfg.retries = False
        return cls(client.ApiClient(cfg), name, limits)

    @property
    def server(self) -> str:
        return str(self.api.configuration.host)

    # -- raw requests -------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, t.Any]] | None = None,
        body: t.Any = None,
        content_type: str = "application/json",
        what: str | None = None,
        decode: bool = True,
        read_timeout: float | None = None,
    ) -> t.Any:
        """Send one request and return the decoded JSON (the raw bytes unless `decode`).

        Failures become ClusterAccessError. A GET that failed in transit (no connection, a
        connection dropped, 502-504) is tried again after a pause, up to `limits.attempts`
        times and never past the deadline; a write is sent once. An answer that says the
        server is throttling is waited out as it asks (any verb), within the deadline.
        """
        label = what or f"{method} {path}"
        attempts = self.limits.attempts if method == "GET" else 1
        failures = throttles = 0
        while True:
            left = self._left(label)
            timeout = (min(self.limits.connect, left), min(read_timeout or self.limits.read, left))
            try:
                return self._send(method, path, query, body, content_type, what, decode, timeout)
            except ClusterAccessError as exc:
                if self.clock() >= self.ends_at:
                    raise self._late(label) from exc
                asked = _throttled(exc)
                if asked is not None:
                    throttles += 1
                    pause = _jittered(max(asked, self.limits.backoff * 2 ** (throttles - 1)))
                    if throttles > self.limits.throttled or pause >= self._remaining():
                        raise self._still_throttled(label, exc) from exc
                    self.sleep(pause)
                    if self._throttled is not None:
                        self._throttled[0] += pause
                    continue
                failures += 1
                pause = _jittered(self.limits.backoff * 2 ** (failures - 1))
                if failures >= attempts or not _transient(exc) or pause >= self._remaining():
                    raise
                self.sleep(pause)

    def _still_throttled(self, what: str, exc: ClusterAccessError) -> ClusterAccessError:
        return ClusterAccessError(
            f"{exc} (still throttled after waiting {self.throttled:g}s in all as the server "
            "asked, within the cluster's deadline)",
            cluster=self.name,
            kind=what,
        )

    def _remaining(self) -> float:
        return self.ends_at - self.clock()

    def _left(self, what: str) -> float:
        left = self._remaining()
        if left <= 0:
            raise self._late(what)
        return left

    def _late(self, what: str) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"cluster {self.name}: {what} not done: the {self.limits.deadline:g}s deadline for "
            "the cluster passed (--timeout)",
            cluster=self.name,
            kind=what,
        )

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, t.Any]] | None,
        body: t.Any,
        content_type: str,
        what: str | None,
        decode: bool,
        timeout: tuple[float, float],
    ) -> t.Any:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        left = self.ends_at - self.clock()
        with bounded.deadline(time.monotonic() + left if left < math.inf else None) as watch:
            try:
                data = self._exchange(method, path, query, body, headers, timeout, what)
            except ClusterAccessError as exc:
                if watch is not None and watch.cut:
                    raise self._late(what or path) from exc
                raise
            if watch is not None and watch.cut:  # an answer ended by the deadline, not whole
                raise self._late(what or path)
        if not decode:
            return data
        try:
            return json.loads(data) if data else None
        except ValueError as exc:  # a proxy's error page, a truncated body
            raise ClusterAccessError(
                f"cluster {self.name}: {what or path} answered with something not JSON ({exc})",
                cluster=self.name,
                kind=what,
            ) from exc

    def _exchange(
        self,
        method: str,
        path: str,
        query: list[tuple[str, t.Any]] | None,
        body: t.Any,
        headers: dict[str, str],
        timeout: tuple[float, float],
        what: str | None,
    ) -> bytes:
        """One request and its whole answer's bytes; a failure is ClusterAccessError."""
        try:
            method, url, headers, body, _ = self.api.param_serialize(
                method,
                path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            sent = _impersonation(headers, *self.acting_as) if self.acting_as else headers
            resp = self.api.call_api(
                method, url, header_params=sent, body=body, _request_timeout=timeout
            )
            data = t.cast(bytes, resp.read())  # type: ignore[no-untyped-call]
            if not 200 <= resp.status < 300:
                raise ApiException(http_resp=resp)
            return data
        except ApiException as exc:
            if exc.status == 0:  # the client's way of saying TLS or transport failed
                raise ClusterAccessError(
                    f"cluster {self.name} at {self.server} is unreachable: {exc.reason}",
                    cluster=self.name,
                    kind=what,
                ) from exc
            raise _api_error(self.name, what or path, exc) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            silent = isinstance(exc, urllib3.exceptions.TimeoutError)
            late = ": no answer in time" if silent else ""  # the error says which timeout
            raise ClusterAccessError(
                f"cluster {self.name} at {self.server} is unreachable{late} "
                f"({type(exc).__name__}: {exc})",
                cluster=self.name,
                kind=what,
            ) from exc

    # -- discovery ----------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> ApiResource:
        """What discovery says of a kind; KindNotServed only when the server's own discovery
        says so (a discovery that cannot be read is a ClusterAccessError: nothing is known)."""
        if api_version not in self._discovery:
            self._discovery[api_version] = self._resources(api_version)
        found = self._discovery[api_version].get(kind)
        if found is None:
            raise KindNotServed(
                f"cluster {self.name} does not serve {kind} in {api_version}",
                cluster=self.name,
                kind=kind,
            )
        return found

    def _resources(self, api_version: str) -> dict[str, ApiResource]:
        path = _version_path(api_version)
        try:
            doc = self.request("GET", path, what=f"discovery of {api_version}")
        except ClusterAccessError as exc:
            if status_of(exc) != 404:
                raise
            index = _index_path(api_version)
            if api_version not in self._listed(index):
                raise KindNotServed(
                    f"cluster {self.name} does not serve {api_version} (not in its discovery "
                    f"at {index})",
                    cluster=self.name,
                    kind=api_version,
                ) from exc
            raise self._unreadable(path, f"404 though {index} lists {api_version}") from exc
        resources = doc.get("resources") if isinstance(doc, dict) else None
        if not isinstance(resources, list):
            raise self._unreadable(path, f"{_described(doc)}, not an APIResourceList")
        out = {}
        for r in resources:
            if not isinstance(r, dict) or not {"kind", "name", "namespaced"} <= set(r):
                raise self._unreadable(path, f"a resource without kind, name or namespaced: {r}")
            if "/" not in r["name"]:
                verbs = tuple(r.get("verbs") or ())
                out[r["kind"]] = ApiResource(
                    api_version, r["kind"], r["name"], bool(r["namespaced"]), verbs
                )
        return out

    def _listed(self, index: str) -> set[str]:
        """The group versions the server's discovery lists at `index` (/api or /apis)."""
        if index not in self._groups:
            try:
                self._groups[index] = self.request("GET", index, what=f"discovery ({index})")
            except ClusterAccessError as exc:
                if status_of(exc) == 404:
                    raise self._not_kubernetes(index) from exc
                raise
        doc = self._groups[index]
        if index == "/api" and isinstance(doc, dict) and isinstance(doc.get("versions"), list):
            return {str(v) for v in doc["versions"]}
        if index == "/apis" and isinstance(doc, dict) and isinstance(doc.get("groups"), list):
            return {
                str(v.get("groupVersion"))
                for g in doc["groups"]
                if isinstance(g, dict)
                for v in g.get("versions") or []
                if isinstance(v, dict)
            }
        kind = "APIVersions" if index == "/api" else "APIGroupList"
        raise self._unreadable(index, f"{_described(doc)}, not an {kind}")

    def _not_kubernetes(self, index: str) -> ClusterAccessError:
        """/api or /apis answered 404: a Kubernetes API server always serves both, and
        /version; what answers there is something else, or discovery is broken."""
        try:
            self.request("GET", "/version", what="GET /version")
        except ClusterAccessError as exc:
            if status_of(exc) == 404:
                return NotKubernetes(
                    f"cluster {self.name}: {self.server} is not a Kubernetes API server: "
                    f"{index} and /version answer 404 Not Found (a wrong server URL in the "
                    "kubeconfig, or a proxy in front of it?)",
                    cluster=self.name,
                )
            raise
        return self._unreadable(index, "404 Not Found")

    def _unreadable(self, path: str, answered: str) -> ClusterAccessError:
        return ClusterAccessError(
            f"cluster {self.name}: discovery could not be read: {self.server}{path} answered "
            f"{answered}",
            cluster=self.name,
            kind=f"discovery ({path})",
        )

    def served_versions(self, group: str) -> list[str]:
        """The versions of `group` the cluster serves now (empty when the group is absent)."""
        self._groups.pop("/apis", None)
        self._listed("/apis")  # read afresh, and held to the shape of an APIGroupList
        for g in self._groups["/apis"]["groups"]:
            if isinstance(g, dict) and g.get("name") == group:
                return [
                    str(v.get("version")) for v in g.get("versions") or [] if isinstance(v, dict)
                ]
        return []

    def path(
        self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None
    ) -> str:
        res = self.resource(api_version, kind)
        base = _version_path(api_version)
        if res.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{res.plural}"
        return f"{base}/{name}" if name else base

    # -- verbs --------------------------------------------------------------------------------

    def list(self, api_version: str, kind: str, *, page_size: int = PAGE_SIZE) -> list[Json]:
        """Every object of a kind, across namespaces, in pages; never one GET per object."""
        path = self.path(api_version, kind)
        items: list[Json] = []
        token: str | None = None
        while True:
            query: list[tuple[str, t.Any]] = [("limit", page_size)]
            if token:
                query.append(("continue", token))
            page = self.request("GET", path, query=query, what=f"LIST {kind}")
            for item in page.get("items", []):
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", kind)
                items.append(item)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Json:
        return t.cast(
            Json,
            self.request(
                "GET", self.path(api_version, kind, namespace, name), what=f"GET {kind} {name}"
            ),
        )

    def apply(
        self,
        body: Json,
        *,
        manager: str,
        force: bool = True,
        dry_run: bool = False,
        field_validation: str | None = None,
    ) -> Json:
        """Server-side apply, as Argo CD's ServerSideApply=true sync does.

        field_validation (Strict, Warn, Ignore): what the server does with unknown fields.
        """
        meta = body.get("metadata") or {}
        path = self.path(body["apiVersion"], body["kind"], meta.get("namespace"), meta.get("name"))
        query: list[tuple[str, t.Any]] = [("fieldManager", manager), ("force", force)]
        if dry_run:
            query.append(("dryRun", "All"))
        if field_validation:
            query.append(("fieldValidation", field_validation))
        return t.cast(
            Json,
            self.request(
                "PATCH",
                path,
                query=query,
                body=body,
                content_type="application/apply-patch+yaml",
                what=f"apply {body['kind']} {meta.get('name')}",
            ),
        )

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Json,
        *,
        namespace: str | None = None,
        manager: str = "kubectl-edit",
    ) -> Json:
        """A JSON merge patch, the way a person with kubectl edit or patch changes an object."""
        return t.cast(
            Json,
            self.request(
                "PATCH",
                self.path(api_version, kind, namespace, name),
                query=[("fieldManager", manager)],
                body=patch,
                content_type="application/merge-patch+json",
                what=f"patch {kind} {name}",
            ),
        )

    def create(self, body: Json) -> Json:
        meta = body.get("metadata") or {}
        return t.cast(
            Json,
            self.request(
                "POST",
                self.path(body["apiVersion"], body["kind"], meta.get("namespace")),
                body=body,
                what=f"create {body['kind']} {meta.get('name')}",
            ),
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation: str | None = None,
    ) -> None:
        """Delete one object; `propagation` (Background, Foreground, Orphan) for its dependents."""
        body = {"propagationPolicy": propagation} if propagation else None
        self.request(
            "DELETE",
            self.path(api_version, kind, namespace, name),
            body=body,
            what=f"delete {kind} {name}",
        )

    def list_in(self, api_version: str, kind: str, namespace: str) -> Items:
        """The objects of a kind in one namespace (one LIST; for small, scratch namespaces)."""
        page = self.request("GET", self.path(api_version, kind, namespace), what=f"LIST {kind}")
        return list(page.get("items", []))

    def watch(
        self, api_version: str, kind: str, *, namespace: str | None = None, seconds: int
    ) -> Items:
        """Every event on a kind for `seconds`, starting with the objects that exist.

        The server ends the watch after `seconds` (the read timeout waits that much longer);
        each event is `{"type": ADDED|MODIFIED|DELETED, "object": {...}}`.
        """
        data = self.request(
            "GET",
            self.path(api_version, kind, namespace),
            query=[("watch", "true"), ("timeoutSeconds", seconds)],
            what=f"WATCH {kind}",
            decode=False,
            read_timeout=seconds + self.limits.read,
        )
        return [json.loads(line) for line in (data or b"").splitlines() if line.strip()]

    def can_i(
        self,
        verb: str,
        api_version: str,
        kind: str,
        name: str | None = None,
        namespace: str | None = None,
    ) -> str | None:
        """None when this client's identity may `verb` the object; else the server's reason.

        A SelfSubjectAccessReview: the API server's own authorizer answers, so what RBAC,
        webhooks or any other authorizer allows is what counts.
        """
        attributes = {
            "verb": verb,
            "group": group_of(api_version),
            "resource": self.resource(api_version, kind).plural,
            "name": name,
            "namespace": namespace,
        }
        review = self.request(
            "POST",
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
            body={
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": {k: v for k, v in attributes.items() if v}},
            },
            what=f"access review ({verb} {kind})",
        )
        status = (review or {}).get("status") or {}
        if status.get("allowed"):
            return None
        return str(status.get("reason") or f"{verb} {kind} {name or ''} is not allowed").strip()


def _version_path(api_version: str) -> str:
    return f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"


def _index_path(api_version: str) -> str:
    return "/apis" if "/" in api_version else "/api"


def _described(doc: t.Any) -> str:
    """What an answer was, in a few words, for a message."""
    if isinstance(doc, dict):
        keys = ", ".join(sorted(map(str, doc))[:5])
        return f"a JSON object of kind {doc['kind']}" if "kind" in doc else f"{{{keys}}}"
    return "nothing" if doc is None else f"a JSON {type(doc).__name__}"


def _impersonation(
    headers: t.Mapping[str, str], user: str, groups: tuple[str, ...]
) -> t.Mapping[str, str]:
    """`headers` plus one Impersonate-User and one Impersonate-Group header per group."""
    out = urllib3.HTTPHeaderDict(dict(headers))
    out["Impersonate-User"] = user
    for group in groups:
        out.add("Impersonate-Group", group)
    return out


def _transient(exc: ClusterAccessError) -> bool:
    """Whether a read that failed this way may succeed if sent again soon."""
    cause = exc.__cause__
    if isinstance(cause, ApiException):
        return int(cause.status or 0) in RETRY_STATUSES
    if isinstance(cause, urllib3.exceptions.ReadTimeoutError):
        return False  # the server took the request and did not answer: asking again waits again
    return isinstance(cause, urllib3.exceptions.HTTPError | ConnectionError)


def _throttled(exc: ClusterAccessError) -> float | None:
    """The seconds the server asked us to wait, when it said it is throttling: 429 (API
    Priority and Fairness, a rate limit), or 503 with a Retry-After; None otherwise."""
    cause = exc.__cause__
    if not isinstance(cause, ApiException) or cause.status not in (429, 503):
        return None
    asked = (cause.headers or {}).get("Retry-After")
    seconds = _seconds(asked) if asked is not None else None
    if seconds is None:
        return 1.0 if cause.status == 429 else None  # a 503 that names no wait: just failed
    return min(seconds, MAX_RETRY_AFTER)


def _seconds(retry_after: str) -> float | None:
    """Retry-After: seconds, or an HTTP date."""
    text = retry_after.strip()
    with contextlib.suppress(ValueError):
        return max(0.0, float(text))
    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(text)
        return max(0.0, when.timestamp() - time.time())
    return None


def _jittered(seconds: float) -> float:
    """A pause up to a fifth longer, at random: clients throttled together come back apart."""
    return seconds * (1 + random.random() / 5)


def _check_tls_files(cfg: client.Configuration) -> None:
    """Load the CA and the client certificate now: one that is not PEM is the kubeconfig's
    fault (exit 2), not an unreachable cluster (exit 3) at the first request."""
    ca = cfg.ssl_ca_cert if cfg.verify_ssl else None
    try:
        tls = ssl.create_default_context(cafile=ca)
    except ssl.SSLError as exc:
        raise ValueError(
            f"the certificate authority {ca} is not a PEM certificate ({exc})"
        ) from exc
    if cfg.cert_file:
        try:
            tls.load_cert_chain(cfg.cert_file, cfg.key_file)
        except ssl.SSLError as exc:
            raise ValueError(
                f"the client certificate or key is not PEM, or they do not match ({exc})"
            ) from exc


class _ExecFailures(threading.local):
    message: str | None = None
    seconds: float | None = None  # how long the connecting thread's exec plugin may run


_EXEC_FAILURES = _ExecFailures()


def _hide_exec_plugin_output(record: logging.LogRecord) -> bool:
    """The client logs a failed exec credential plugin with the plugin's stderr, which can hold
    a token: drop the record, and leave the connecting thread a note without it."""
    if record.funcName != "_load_from_exec_plugin" or record.module != "kube_config":
        return True
    found = re.search(r"process returned (\d+)", str(record.msg))
    if _EXEC_FAILURES.message is None:  # a plugin stopped at the deadline has said why
        _EXEC_FAILURES.message = f" (exit {found[1]})" if found else ""
    return False


class _BoundedPlugin(subprocess.Popen):  # type: ignore[type-arg]
    """The exec credential plugin as the client starts it, stopped at the cluster's deadline:
    an expired cloud or OIDC login waiting for a browser would hang a scheduled audit forever.

    Without a terminal the plugin gets a session of its own, so that what it started (a shell
    script's children hold its pipes) is stopped with it."""

    def __init__(self, *args: t.Any, **kwargs: t.Any) -> None:
        self.alone = kwargs.get("stdin") is None  # the client passes a terminal's stdin only
        super().__init__(*args, **kwargs, start_new_session=self.alone)

    def communicate(self, input: t.Any = None, timeout: float | None = None) -> t.Any:
        limit = _EXEC_FAILURES.seconds
        try:
            return super().communicate(input, timeout if limit is None else limit)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                if self.alone:
                    os.killpg(self.pid, signal.SIGKILL)
                else:
                    self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                super().communicate(timeout=1)
            _EXEC_FAILURES.message = f" (no answer within {limit:.3g}s, so it was stopped)"
            raise


_GUARDING = threading.Lock()
_GUARDED: list[bool] = []  # once the guards are in place


def _guard_exec_plugins() -> None:
    """Before the first kubeconfig is loaded (not at import: importing this module changes
    nothing else in the process): the client's exec credential plugins are started bounded by
    the cluster's deadline, and the client's log of a failed one, which quotes the plugin's
    stderr, is dropped. Both stay for the process's life: the client re-runs a plugin whenever
    its credential expires, on any request."""
    with _GUARDING:
        if _GUARDED:
            return
        _GUARDED.append(True)
        # The client starts the plugin through its module's `subprocess`; only Popen is swapped.
        exec_provider.subprocess = types.SimpleNamespace(  # type: ignore[attr-defined,assignment]
            Popen=_BoundedPlugin, PIPE=subprocess.PIPE
        )
        # The client logs through the root logger (logging.error), so the filter sits there.
        logging.getLogger().addFilter(_hide_exec_plugin_output)


def _api_error(cluster: str, what: str, exc: ApiException) -> ClusterAccessError:
    reason = exc.reason or ""
    with contextlib.suppress(ValueError, AttributeError):
        reason = json.loads(exc.body or "{}").get("message") or reason
    status = {401: "unauthorized", 403: "forbidden", 404: "not found"}.get(
        int(exc.status or 0), f"HTTP {exc.status}"
    )
    return ClusterAccessError(
        f"cluster {cluster}: {what} {status} ({exc.status}): {reason}",
        cluster=cluster,
        kind=what,
    )


def status_of(error: ClusterAccessError) -> int | None:
    """The HTTP status behind an access error, when there was one (none for a server that is
    not Kubernetes: its 404s say nothing of an object or a kind)."""
    if isinstance(error, NotKubernetes):
        return None
    cause = error.__cause__
    return int(cause.status) if isinstance(cause, ApiException) and cause.status else None


__all__ = [
    "ApiResource",
    "ContextMissing",
    "DeadlineExceeded",
    "KindNotServed",
    "KubeCluster",
    "Limits",
    "NotKubernetes",
    "group_of",
    "status_of",
]
