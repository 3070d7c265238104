"""What drift reads of one cluster: one paginated LIST per kind (auditor/live/reading.py), in
the order the comparison's plan says (auditor/drift/engine.py), each kind handed on as its LIST
ends (`read_cluster`). The schemas drift normalizes with come from the committed catalog first,
the live CRDs second.
"""

from __future__ import annotations

import itertools
import typing as t
from dataclasses import dataclass

from auditor.drift.normalize import Schema
from auditor.k8s.objects import RBAC_API, RBAC_KINDS, SCHEDULING_API, Json
from auditor.live.kube import KubeCluster
from auditor.live.reading import CRD as CRD
from auditor.live.reading import NODES as NODES
from auditor.live.reading import Live as Live
from auditor.live.reading import key_of as key_of
from auditor.live.reading import read as read
from auditor.live.reading import read_instead as read_instead
from auditor.model import Resource
from auditor.repo.profiles import ClusterProfile
from auditor.schemas.catalog import SchemaCatalog


@dataclass(frozen=True)
class Listed:
    """One kind's LIST as the comparison takes it: its objects, None when not read."""

    kind: str
    items: list[Json] | None
    not_served: str | None = None  # why the cluster serves no such kind (items: [])


@dataclass(frozen=True)
class Planned:
    """A kind to LIST, in the version tried first, then the one the repo writes it in."""

    api_version: str
    kind: str
    instead: tuple[tuple[str, str], ...] = ()  # read when the first is not served


KUEUE_KINDS = ("ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue", "WorkloadPriorityClass")


def watched_kinds(profile: ClusterProfile) -> list[tuple[str, str]]:
    """The kinds whose unmanaged objects matter, in the cluster's preferred Kueue version."""
    kueue = profile.kueue_api
    return [
        ("v1", "Namespace"),
        (SCHEDULING_API, "PriorityClass"),
        *((RBAC_API, kind) for kind in RBAC_KINDS),
        *((kueue, kind) for kind in KUEUE_KINDS),
    ]


class LiveSchemas:
    """Schemas from the committed catalog first, the live CRDs second (both hold `default:`)."""

    def __init__(self, catalog: SchemaCatalog | None, crds: list[Json]) -> None:
        self.catalog = catalog
        self.crds: dict[tuple[str, str, str], Schema] = {}
        for crd in crds:
            spec = crd.get("spec") or {}
            for version in spec.get("versions") or []:
                schema = (version.get("schema") or {}).get("openAPIV3Schema")
                if schema:
                    ident = (spec.get("group", ""), spec["names"]["kind"], version["name"])
                    self.crds[ident] = schema

    def schema(self, api_version: str, kind: str) -> Schema | None:
        """A CRD's schema; None for built-in kinds, whose OpenAPI `default: {}` marks Go zero
        values the server does not store (their real defaults are in normalize.CORE_DEFAULTS)."""
        group, _, version = api_version.rpartition("/")
        entry = self.catalog.kind(group, kind) if self.catalog else None
        if entry and entry.get("crd"):
            found = self.catalog.schema(api_version, kind) if self.catalog else None
            if found:
                return found
        return self.crds.get((group, kind, version))


def kinds_to_read(profile: ClusterProfile, desired: list[Resource]) -> list[tuple[str, str]]:
    """The watched kinds, the repo's other kinds, and CRDs (for defaults and schema drift)."""
    kinds = watched_kinds(profile)
    seen = {k for _, k in kinds}
    for resource in desired:
        if resource.kind not in seen:
            seen.add(resource.kind)
            kinds.append((resource.api_version, resource.kind))
    return [*kinds, CRD]


def read_cluster(
    cluster: KubeCluster, plan: t.Callable[[], list[Planned]], send: t.Callable[[Listed], None]
) -> Live:
    """Every kind of `plan` read, each sent on as its LIST ends; the CRDs first, while the
    plan (which needs the repository) is made."""
    live = Live(cluster=cluster)
    read_kind(cluster, live, Planned(*CRD), send)
    for planned in plan():
        if planned.kind != CRD[1]:
            read_kind(cluster, live, planned, send)
    return live


def read_kind(
    cluster: KubeCluster, live: Live, planned: Planned, send: t.Callable[[Listed], None]
) -> None:
    """One kind's LIST (in the version the repo writes it in when the first is not served)."""
    before, kind = len(live.objects), planned.kind
    read(cluster, [(planned.api_version, kind)], live)
    read_instead(cluster, live, list(planned.instead))
    items: list[Json] | None = None
    if kind == CRD[1]:
        items = live.crds
    elif kind == NODES[1]:
        items = live.nodes
    else:  # its objects are the last added (each key holds its kind: none replaced)
        items = list(itertools.islice(live.objects.values(), before, None))
    send(Listed(kind, items if kind in live.read else None, live.not_served.get(kind)))
