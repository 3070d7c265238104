"""The one module that talks to Kubernetes, through the official client's ApiClient.

We call the REST API directly (paths from our own discovery) rather than through the dynamic
client: LIST responses stay plain JSON, with no per-object wrapping, which keeps a drift audit
close to the cost of the raw LIST calls it needs.
"""

from __future__ import annotations

import contextlib
import json
import typing as t
from dataclasses import dataclass

import urllib3
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from auditor.errors import ClusterAccessError, ConfigError
from auditor.k8s.objects import Json, group_of

Items = list[Json]  # spelled once here: inside KubeCluster, `list` is the method
TIMEOUT = (5, 60)  # connect, read seconds: a down cluster fails fast, a large LIST may stream
PAGE_SIZE = 500


@dataclass(frozen=True)
class ApiResource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool
    verbs: tuple[str, ...] = ()  # what discovery says the API server serves for it


class KindNotServed(ClusterAccessError):
    """The cluster does not serve this apiVersion and kind."""


class KubeCluster:
    """One cluster, as named in the repository, reached through one kubeconfig context."""

    def __init__(self, api: client.ApiClient, name: str) -> None:
        self.api = api
        self.name = name
        self._discovery: dict[str, dict[str, ApiResource]] = {}

    @classmethod
    def connect(
        cls, name: str, *, kubeconfig: str | None = None, context: str | None = None
    ) -> KubeCluster:
        try:
            api = config.new_client_from_config(  # type: ignore[no-untyped-call]
                config_file=kubeconfig, context=context
            )
        except (ConfigException, OSError, TypeError) as exc:
            where = kubeconfig or "the default kubeconfig"
            raise ConfigError(
                f"cluster {name}: cannot use context {context or '(current)'} of {where}: {exc}"
            ) from exc
        api.configuration.retries = False
        return cls(api, name)

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
    ) -> t.Any:
        """Send one request and return the decoded JSON (the raw bytes unless `decode`).

        Failures become ClusterAccessError.
        """
        headers = {"Accept": "application/json", "Content-Type": content_type}
        try:
            method, url, headers, body, _ = self.api.param_serialize(
                method,
                path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            resp = self.api.call_api(
                method, url, header_params=headers, body=body, _request_timeout=TIMEOUT
            )
            data = resp.read()  # type: ignore[no-untyped-call]
            if not 200 <= resp.status < 300:
                raise ApiException(http_resp=resp)
        except ApiException as exc:
            if exc.status == 0:  # the client's way of saying TLS or transport failed
                raise ClusterAccessError(
                    f"cluster {self.name} at {self.server} is unreachable: {exc.reason}",
                    cluster=self.name,
                    kind=what,
                ) from exc
            raise _api_error(self.name, what or path, exc) from exc
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ClusterAccessError(
                f"cluster {self.name} at {self.server} is unreachable ({type(exc).__name__}: "
                f"{exc})",
                cluster=self.name,
                kind=what,
            ) from exc
        if not decode:
            return data
        return json.loads(data) if data else None

    # -- discovery ----------------------------------------------------------------------------

    def resource(self, api_version: str, kind: str) -> ApiResource:
        if api_version not in self._discovery:
            path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
            try:
                doc = self.request("GET", path, what=f"discovery of {api_version}")
            except ClusterAccessError as exc:
                if "404" in str(exc):
                    raise KindNotServed(
                        f"cluster {self.name} does not serve {api_version}",
                        cluster=self.name,
                        kind=kind,
                    ) from exc
                raise
            self._discovery[api_version] = {
                r["kind"]: ApiResource(
                    api_version, r["kind"], r["name"], r["namespaced"], tuple(r.get("verbs") or ())
                )
                for r in doc.get("resources", [])
                if "/" not in r["name"]
            }
        found = self._discovery[api_version].get(kind)
        if found is None:
            raise KindNotServed(
                f"cluster {self.name} does not serve {kind} in {api_version}",
                cluster=self.name,
                kind=kind,
            )
        return found

    def served_versions(self, group: str) -> list[str]:
        """The versions of `group` the cluster serves (empty when the group is absent)."""
        doc = self.request("GET", "/apis", what="discovery")
        for g in doc.get("groups", []):
            if g["name"] == group:
                return [v["version"] for v in g["versions"]]
        return []

    def path(
        self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None
    ) -> str:
        res = self.resource(api_version, kind)
        base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
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

        The server ends the watch after `seconds` (below the read timeout); each event is
        `{"type": ADDED|MODIFIED|DELETED, "object": {...}}`.
        """
        data = self.request(
            "GET",
            self.path(api_version, kind, namespace),
            query=[("watch", "true"), ("timeoutSeconds", seconds)],
            what=f"WATCH {kind}",
            decode=False,
        )
        return [json.loads(line) for line in (data or b"").splitlines() if line.strip()]


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
    """The HTTP status behind an access error, when there was one."""
    cause = error.__cause__
    return int(cause.status) if isinstance(cause, ApiException) and cause.status else None


__all__ = ["ApiResource", "KindNotServed", "KubeCluster", "group_of", "status_of"]
