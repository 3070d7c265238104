"""One cluster, as named in the repository: its requests, each bounded in time, and the verbs
(LIST, GET, apply, patch, create, delete, watch, access review) over them.

Time is bounded (Limits): each request has a connect timeout and a read timeout on every read
of its socket; a cluster may have a deadline over everything, which also ends an answer still
arriving at that moment (auditor/live/bounded.py), after which every request fails at once with
DeadlineExceeded. A read (GET) that failed in transit is tried again a small number of times,
with backoff; an answer that says the server is throttling (Throttled: 429, or 503 with
Retry-After) is waited out as the server asks, for any verb (it was not carried out), within
the deadline, and the time is counted (`throttled`). urllib3's own retries are off: they would
multiply every wait by four, unseen.

Credentials are made into a client in auditor/live/credentials.py, one exchange is sent in
auditor/live/transport.py, what makes its answer an answer (bounded, the kind asked) is decided
in auditor/live/answers.py, what a failure means is typed in auditor/live/apierrors.py, and
discovery (which kinds are served, at which paths) is auditor/live/discovery.py.
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import time
import typing as t
from dataclasses import dataclass

import urllib3

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import Json, group_of
from auditor.live import answers, bounded, credentials, transport
from auditor.live.apierrors import ApiError, DeadlineExceeded, Throttled, Unreachable
from auditor.live.discovery import ApiResource, Discovery

if t.TYPE_CHECKING:
    from kubernetes import client

Items = list[Json]  # spelled once here: inside KubeCluster, `list` is the method
PAGE_SIZE = 500
# HTTP answers worth a second try of a read: the server or a proxy is overloaded or restarting.
RETRY_STATUSES = (429, 502, 503, 504)


@dataclass(frozen=True)
class Limits:
    """How long one cluster may take: per request, per read retried, and in all."""

    connect: float = 5.0  # seconds to open a connection, TLS included
    read: float = 30.0  # seconds to wait for any one answer (a watch adds its own length)
    deadline: float | None = None  # seconds for every request to the cluster, from connect
    attempts: int = 3  # tries of a read (GET) that failed in transit; writes are tried once
    backoff: float = 0.5  # pause before the second try, doubled before each later one
    throttled: int = 10  # answers "throttled" (429) waited out per request, as client-go does


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
        self.discovery = Discovery(name, self.server, self._get)
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
        other.ends_at, other.discovery = self.ends_at, self.discovery
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
        """A client for `context` of `kubeconfig` (kubectl's defaults for either left out);
        anything wrong with them is a ConfigError, before any request (credentials.py)."""
        api, started = credentials.from_kubeconfig(
            name,
            kubeconfig=kubeconfig,
            context=context,
            deadline=limits.deadline if limits else None,
        )
        return cls(api, name, limits, started=started)

    @classmethod
    def in_cluster(
        cls, name: str, *, account_dir: str, limits: Limits | None = None
    ) -> KubeCluster:
        """A client as the pod's ServiceAccount, whose token and CA are in `account_dir`."""
        return cls(credentials.in_cluster(name, account_dir=account_dir), name, limits)

    @property
    def server(self) -> str:
        return str(self.api.configuration.host)

    # -- requests -----------------------------------------------------------------------------

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

        Failures are ClusterAccessError, typed by what happened (apierrors.py). A GET that
        failed in transit (no connection, a connection dropped, 502-504) is tried again after
        a pause, up to `limits.attempts` times and never past the deadline; a write is sent
        once. An answer that says the server is throttling is waited out as it asks (any
        verb), within the deadline.
        """
        label = what or f"{method} {path}"
        attempts = self.limits.attempts if method == "GET" else 1
        failures = throttles = 0
        while True:
            left = self._left(label)
            timeout = (min(self.limits.connect, left), min(read_timeout or self.limits.read, left))
            try:
                return self._send(method, path, query, body, content_type, label, decode, timeout)
            except ClusterAccessError as exc:
                if self.clock() >= self.ends_at:
                    raise self._late(label) from exc
                if isinstance(exc, Throttled):
                    throttles += 1
                    pause = _jittered(max(exc.wait, self.limits.backoff * 2 ** (throttles - 1)))
                    if throttles > self.limits.throttled or pause >= self._remaining():
                        raise self._still_throttled(exc) from exc
                    self.sleep(pause)
                    if self._throttled is not None:
                        self._throttled[0] += pause
                    continue
                failures += 1
                pause = _jittered(self.limits.backoff * 2 ** (failures - 1))
                if failures >= attempts or not _transient(exc) or pause >= self._remaining():
                    raise
                self.sleep(pause)

    def _get(self, path: str, what: str) -> t.Any:
        """GET `path` (discovery's own paths), decoded."""
        return self.request("GET", path, what=what)

    def _still_throttled(self, exc: Throttled) -> Throttled:
        return exc.reworded(
            f"{exc} (still throttled after waiting {self.throttled:g}s in all as the server "
            "asked, within the cluster's deadline)",
            cluster=self.name,
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
            action=what,
        )

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, t.Any]] | None,
        body: t.Any,
        content_type: str,
        what: str,
        decode: bool,
        timeout: tuple[float, float],
    ) -> t.Any:
        headers = {"Accept": "application/json", "Content-Type": content_type}
        left = self.ends_at - self.clock()
        with bounded.deadline(time.monotonic() + left if left < math.inf else None) as watch:
            try:
                data, code = transport.exchange(
                    self.api,
                    self.name,
                    what,
                    method,
                    path,
                    query=query,
                    body=body,
                    headers=headers,
                    timeout=timeout,
                    acting_as=self.acting_as,
                )
            except ClusterAccessError as exc:
                if watch is not None and watch.cut:
                    raise self._late(what) from exc
                raise
            if watch is not None and watch.cut:  # an answer ended by the deadline, not whole
                raise self._late(what)
        return answers.decode(data, code, self.name, what) if decode else data

    # -- discovery ----------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> ApiResource:
        """What discovery says of a kind (KindNotServed when the server says it serves none)."""
        return self.discovery.resource(api_version, kind)

    def served_versions(self, group: str) -> list[str]:
        """The versions of `group` the cluster serves now (empty when the group is absent)."""
        return self.discovery.served_versions(group)

    def path(
        self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None
    ) -> str:
        return self.discovery.path(api_version, kind, namespace, name)

    # -- verbs --------------------------------------------------------------------------------

    def list(
        self, api_version: str, kind: str, *, page_size: int = PAGE_SIZE, selector: str = ""
    ) -> list[Json]:
        """Every object of a kind (with labels matching `selector`, when given), across
        namespaces, in pages; never one GET per object."""
        path = self.path(api_version, kind)
        items: list[Json] = []
        token: str | None = None
        while True:
            query: list[tuple[str, t.Any]] = [("limit", page_size)]
            if selector:
                query.append(("labelSelector", selector))
            if token:
                query.append(("continue", token))
            what = f"LIST {kind}"
            page = self.request("GET", path, query=query, what=what)
            items += answers.listed(page, api_version, kind, self.name, what)
            token = answers.token(page, self.name, what)
            if not token:
                return items

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Json:
        what = f"GET {kind} {name}"
        found = self.request("GET", self.path(api_version, kind, namespace, name), what=what)
        return answers.one(found, api_version, kind, self.name, what)

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
        what = f"LIST {kind}"
        page = self.request("GET", self.path(api_version, kind, namespace), what=what)
        return answers.listed(page, api_version, kind, self.name, what)

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


def _transient(exc: ClusterAccessError) -> bool:
    """Whether a read that failed this way may succeed if sent again soon."""
    if isinstance(exc, ApiError):
        return exc.code in RETRY_STATUSES
    cause = exc.__cause__
    if not isinstance(exc, Unreachable) or isinstance(cause, urllib3.exceptions.ReadTimeoutError):
        return False  # the server took the request and did not answer: asking again waits again
    return isinstance(cause, urllib3.exceptions.HTTPError | ConnectionError)


def _jittered(seconds: float) -> float:
    """A pause up to a fifth longer, at random: clients throttled together come back apart."""
    return seconds * (1 + random.random() / 5)
