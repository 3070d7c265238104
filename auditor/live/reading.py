"""Reading one cluster: one paginated LIST per kind, never a GET per object.

A LIST that fails (forbidden, unreachable, timeout) is recorded with the kind named and the kind
left unread; once a cluster stops answering or its deadline passes, its remaining kinds are
named, not attempted, on one line. drift reads through it (auditor/drift/reading.py), and so
does import.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import CRD_API, Json, ResourceKey, group_of
from auditor.live.apierrors import DeadlineExceeded, KindNotServed, NotKubernetes, Unreachable
from auditor.live.argocd import Running
from auditor.live.kube import KubeCluster

CRD = (CRD_API, "CustomResourceDefinition")
NODES = ("v1", "Node")  # what the flavors' nodes hold; kept apart from the objects


@dataclass
class Live:
    """What one cluster holds: objects by key, and the kinds that could not be read."""

    objects: dict[ResourceKey, Json] = field(default_factory=dict)
    read: set[str] = field(default_factory=set)  # kinds read completely
    crds: list[Json] = field(default_factory=list)
    nodes: list[Json] = field(default_factory=list)
    not_served: dict[str, str] = field(default_factory=dict)  # kind -> why
    stopped: str | None = None  # why no further LIST is attempted (unreachable, deadline)
    cluster: KubeCluster | None = None
    errors: list[str] = field(default_factory=list)
    applications: list[Json] = field(default_factory=list)  # Argo CD's, when it runs here
    argocd: Running | None = None  # the Argo CD release it runs (live/argocd.py), once read
    # identities the repository may define in a file that did not load (drift/unread.py)
    unread: dict[ResourceKey, str] = field(default_factory=dict)


def key_of(obj: Json) -> ResourceKey:
    meta = obj.get("metadata") or {}
    return ResourceKey(
        group_of(str(obj.get("apiVersion", ""))), str(obj.get("kind", "")),
        meta.get("namespace"), str(meta.get("name", "")),
    )  # fmt: skip


NOT_ATTEMPTED = "LIST not attempted ({why}): "


def _not_attempted(live: Live, kind: str) -> None:
    """Name a kind left unread once the cluster stopped answering, on one line with the others:
    an unreachable cluster is one failure, not one per kind."""
    head = NOT_ATTEMPTED.format(why=live.stopped)
    if live.errors and live.errors[-1].startswith(head):
        live.errors[-1] += f", {kind}"
    else:
        live.errors.append(head + kind)


def read(cluster: KubeCluster, kinds: list[tuple[str, str]], into: Live | None = None) -> Live:
    """One paginated LIST per kind; a failed LIST is recorded and the kind left unread."""
    live = into or Live()
    for api_version, kind in kinds:
        if live.stopped:
            _not_attempted(live, kind)
            continue
        try:
            items = cluster.list(api_version, kind)
        except KindNotServed as exc:
            live.read.add(kind)  # known to hold none: the API is not there
            live.not_served[kind] = str(exc)
            continue
        except DeadlineExceeded as exc:
            live.errors.append(f"LIST {kind} ({api_version}) failed: {exc}")
            live.stopped = "the cluster's deadline passed"
            continue
        except NotKubernetes as exc:
            live.errors.append(f"LIST {kind} ({api_version}) failed: {exc}")
            live.stopped = "the server is not a Kubernetes API server"
            continue
        except Unreachable as exc:  # no HTTP answer at all
            live.errors.append(f"LIST {kind} ({api_version}) failed: {exc}")
            live.stopped = "cluster unreachable"
            continue
        except ClusterAccessError as exc:  # refused (forbidden, throttled...): this kind only
            live.errors.append(f"LIST {kind} ({api_version}) failed: {exc}")
            continue
        live.read.add(kind)
        if (api_version, kind) == CRD:
            live.crds = items
            continue
        if (api_version, kind) == NODES:
            live.nodes = items
            continue
        for item in items:
            live.objects[key_of(item)] = item
    return live


def read_instead(cluster: KubeCluster, live: Live, kinds: list[tuple[str, str]]) -> None:
    """Read each of `kinds` the cluster did not serve in the version first tried in the version
    given here (a Kueue kind served in an older version only: v0.9.1's Cohort is v1alpha1); a
    kind served in neither stays not served."""
    again = [(api, kind) for api, kind in kinds if kind in live.not_served]
    for _, kind in again:
        del live.not_served[kind]
        live.read.discard(kind)
    read(cluster, again, live)
