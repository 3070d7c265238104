"""Discovery: which kinds an API server serves, under which paths, read once per version.

Only the server's own discovery can say a kind is not served (KindNotServed); a discovery
that cannot be read, or that answers in another shape, is a ClusterAccessError: nothing is
known. /api and /apis answering 404 where /version does too is not a Kubernetes API server.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import Json
from auditor.live.apierrors import KindNotServed, NotFound, NotKubernetes

# GET `path`, doing `what` (a message's words), and return the decoded answer
Get = t.Callable[[str, str], t.Any]


@dataclass(frozen=True)
class ApiResource:
    api_version: str
    kind: str
    plural: str
    namespaced: bool
    verbs: tuple[str, ...] = ()  # what discovery says the API server serves for it


class Discovery:
    """One API server's discovery, as read through `get` (shared by impersonating copies of a
    cluster: what a server serves does not depend on who asks)."""

    def __init__(self, cluster: str, server: str, get: Get) -> None:
        self.cluster, self.server, self.get = cluster, server, get
        self._resources: dict[str, dict[str, ApiResource]] = {}
        self._groups: dict[str, Json] = {}  # /api and /apis, as read

    def resource(self, api_version: str, kind: str) -> ApiResource:
        """What discovery says of a kind; KindNotServed only when the server's own discovery
        says so (a discovery that cannot be read is a ClusterAccessError: nothing is known)."""
        if api_version not in self._resources:
            self._resources[api_version] = self._read(api_version)
        found = self._resources[api_version].get(kind)
        if found is None:
            raise KindNotServed(
                f"cluster {self.cluster} does not serve {kind} in {api_version}",
                cluster=self.cluster,
                action=f"discovery of {api_version}",
            )
        return found

    def path(
        self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None
    ) -> str:
        res = self.resource(api_version, kind)
        base = _version_path(api_version)
        if res.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{res.plural}"
        return f"{base}/{name}" if name else base

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

    def _read(self, api_version: str) -> dict[str, ApiResource]:
        path = _version_path(api_version)
        try:
            doc = self.get(path, f"discovery of {api_version}")
        except NotFound as exc:
            index = _index_path(api_version)
            if api_version not in self._listed(index):
                raise KindNotServed(
                    f"cluster {self.cluster} does not serve {api_version} (not in its discovery "
                    f"at {index})",
                    cluster=self.cluster,
                    action=f"discovery of {api_version}",
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
                self._groups[index] = self.get(index, f"discovery ({index})")
            except NotFound as exc:
                raise self._not_kubernetes(index) from exc
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
            self.get("/version", "GET /version")
        except NotFound:
            return NotKubernetes(
                f"cluster {self.cluster}: {self.server} is not a Kubernetes API server: "
                f"{index} and /version answer 404 Not Found (a wrong server URL in the "
                "kubeconfig, or a proxy in front of it?)",
                cluster=self.cluster,
            )
        return self._unreadable(index, "404 Not Found")

    def _unreadable(self, path: str, answered: str) -> ClusterAccessError:
        return ClusterAccessError(
            f"cluster {self.cluster}: discovery could not be read: {self.server}{path} answered "
            f"{answered}",
            cluster=self.cluster,
            action=f"discovery ({path})",
        )


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
