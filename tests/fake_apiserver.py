"""A small Kubernetes API server on loopback, for fault tests: the answers no real server gives
(a decompression bomb, a LIST of another kind, a Status under HTTP 200), beside a plain one.

It serves discovery for the kinds it is given and an empty LIST of each; a test replaces the
answer at any path with its own (`answers`). Only GET is served: what drift and import send.
"""

from __future__ import annotations

import http.server
import json
import threading
import typing as t
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

import yaml

Json = dict[str, t.Any]


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, body, headers."""

    body: bytes
    status: int = 200
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),)

    @classmethod
    def of(cls, doc: t.Any, status: int = 200) -> Answer:
        return cls(json.dumps(doc).encode(), status)


# group/version -> (kind, plural, namespaced): what drift reads of a Kueue cluster
KINDS: dict[str, list[tuple[str, str, bool]]] = {
    "v1": [("Namespace", "namespaces", False), ("Node", "nodes", False)],
    "scheduling.k8s.io/v1": [("PriorityClass", "priorityclasses", False)],
    "rbac.authorization.k8s.io/v1": [
        ("ClusterRole", "clusterroles", False),
        ("ClusterRoleBinding", "clusterrolebindings", False),
        ("Role", "roles", True),
        ("RoleBinding", "rolebindings", True),
    ],
    "apiextensions.k8s.io/v1": [("CustomResourceDefinition", "customresourcedefinitions", False)],
    **{
        f"kueue.x-k8s.io/{version}": [
            ("ResourceFlavor", "resourceflavors", False),
            ("Cohort", "cohorts", False),
            ("ClusterQueue", "clusterqueues", False),
            ("LocalQueue", "localqueues", True),
            ("WorkloadPriorityClass", "workloadpriorityclasses", False),
        ]
        for version in ("v1beta1", "v1beta2")
    },
}


@dataclass
class FakeApiServer:
    """Discovery of `kinds` and an empty LIST of each, but for the paths in `answers`."""

    kinds: dict[str, list[tuple[str, str, bool]]] = field(default_factory=lambda: dict(KINDS))
    answers: dict[str, Answer] = field(default_factory=dict)
    asked: list[str] = field(default_factory=list)  # the paths asked, in order

    def __post_init__(self) -> None:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                path = urllib.parse.urlsplit(self.path).path
                fake.asked.append(path)
                answer = fake.answer(path)
                self.send_response(answer.status)
                for name, value in answer.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, *args: t.Any) -> None:
                pass

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)

    def answer(self, path: str) -> Answer:
        if path in self.answers:
            return self.answers[path]
        if path == "/version":
            return Answer.of({"major": "1", "minor": "33", "gitVersion": "v1.33.0"})
        if path == "/api":
            return Answer.of({"kind": "APIVersions", "versions": ["v1"]})
        if path == "/apis":
            return Answer.of({"kind": "APIGroupList", "apiVersion": "v1", "groups": self._groups()})
        for version, kinds in self.kinds.items():
            base = f"/apis/{version}" if "/" in version else f"/api/{version}"
            if path == base:
                return Answer.of(_resources(version, kinds))
            for kind, plural, _ in kinds:
                if path == f"{base}/{plural}":
                    return Answer.of(empty_list(version, kind))
        return Answer.of({"kind": "Status", "status": "Failure", "code": 404,
                          "reason": "NotFound", "message": f"{path} not found"}, 404)  # fmt: skip

    def _groups(self) -> list[Json]:
        groups: dict[str, list[str]] = {}
        for version in self.kinds:
            if "/" in version:
                group, _, v = version.partition("/")
                groups.setdefault(group, []).append(v)
        return [
            {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs]}
            for g, vs in groups.items()
        ]

    def list_path(self, version: str, kind: str) -> str:
        plural = next(p for k, p, _ in self.kinds[version] if k == kind)
        return f"/apis/{version}/{plural}" if "/" in version else f"/api/{version}/{plural}"


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: t.Any, client_address: t.Any) -> None:
        """Quiet: a client hanging up in the middle of an answer is what fault tests do."""


def _resources(version: str, kinds: list[tuple[str, str, bool]]) -> Json:
    return {
        "kind": "APIResourceList",
        "groupVersion": version,
        "resources": [
            {"name": plural, "kind": kind, "namespaced": namespaced, "verbs": ["get", "list"]}
            for kind, plural, namespaced in kinds
        ],
    }


def empty_list(version: str, kind: str) -> Json:
    return {"kind": f"{kind}List", "apiVersion": version, "metadata": {}, "items": []}


def kubeconfig(path: Path, contexts: dict[str, Json]) -> Path:
    """A kubeconfig of `contexts` (name -> {"server": url, "user": user entry}), each with its
    own cluster and user; the first is current."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": c["server"]}} for n, c in contexts.items()],
        "users": [
            {"name": n, "user": c.get("user") or {"token": "t"}} for n, c in contexts.items()
        ],
        "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in contexts],
        "current-context": next(iter(contexts)),
    }
    path.write_text(yaml.safe_dump(doc))
    return path
