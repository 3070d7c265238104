"""What drift reads of one cluster: one paginated LIST per kind (auditor/live/reading.py), in
the order the comparison's plan says (auditor/drift/engine.py), each kind handed on as its LIST
ends (`read_cluster`). The schemas drift normalizes with come from the committed catalog first,
the live CRDs second.
"""

from __future__ import annotations

import collections
import itertools
import typing as t
from dataclasses import dataclass

from auditor.drift.metadata import ADMISSION_POLICY_KINDS
from auditor.k8s.objects import RBAC_API, RBAC_KINDS, SCHEDULING_API, Json
from auditor.live.reading import CRD as CRD
from auditor.live.reading import NODES as NODES
from auditor.live.reading import Live as Live
from auditor.live.reading import key_of as key_of
from auditor.live.reading import read as read
from auditor.live.reading import read_instead as read_instead
from auditor.model import Resource
from auditor.repo.profiles import ClusterProfile
from auditor.schemas.catalog import SchemaCatalog

if t.TYPE_CHECKING:  # the repository side imports this before the client (drift/comparer.py)
    from auditor.drift.normalize import Schema
    from auditor.live.kube import KubeCluster


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


# Kinds whose live objects say which labels are read (drift/metadata.py), besides the CRDs:
# every kind's comparison needs them, so they are read first.
SELECTOR_KINDS = ("ClusterQueue", "ClusterRole", *ADMISSION_POLICY_KINDS)
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


def plan(profile: ClusterProfile, desired: list[Resource]) -> list[Planned]:
    """The kinds to LIST, in order: the CRDs and the selector kinds first (every kind's
    comparison needs them), then the other RBAC kinds (the RBAC part, the dearest, needs all
    four), then the others by how many objects the repository holds of them, most first, the
    Nodes last. Each kind is compared while the next ones are read: the long comparisons start
    early, and what is left after the last LIST is a small kind's."""
    kinds = [*kinds_to_read(profile, desired), NODES]
    first = [CRD, *((v, k) for v, k in kinds if k in SELECTOR_KINDS)]
    first += [(v, k) for v, k in kinds if k in RBAC_KINDS and (v, k) not in first]
    held = collections.Counter(r.kind for r in desired)
    rest = [kind for kind in kinds if kind not in first and kind != NODES]
    rest.sort(key=lambda kind: -held[kind[1]])  # stable: ties keep the watched kinds' order
    written = _written_in(desired)
    return [Planned(v, k, _instead(written, v, k)) for v, k in [*first, *rest, NODES]]


def _written_in(desired: list[Resource]) -> dict[str, set[str]]:
    """The versions the repository writes each kind in."""
    versions: dict[str, set[str]] = {}
    for resource in desired:
        versions.setdefault(resource.kind, set()).add(resource.api_version)
    return versions


def _instead(
    written: dict[str, set[str]], api_version: str, kind: str
) -> tuple[tuple[str, str], ...]:
    """The version the repository writes `kind` in, when not `api_version`: read instead when
    the cluster does not serve `api_version` (v0.9.1's Cohort: v1alpha1)."""
    other = sorted(written.get(kind, set()) - {api_version})
    return ((other[0], kind),) if other else ()


def read_cluster(
    cluster: KubeCluster,
    profile: ClusterProfile,
    planned: t.Callable[[], list[Planned]],
    send: t.Callable[[Listed], None],
) -> Live:
    """Every kind `planned` gives read, each sent on as its LIST ends. What needs no
    repository (the CRDs, the selector and RBAC kinds the profile watches: the plan's head) is
    read while the plan, which does, is made."""
    live, done = Live(cluster=cluster), set[str]()
    ahead = [p for p in plan(profile, []) if p.kind in (CRD[1], *SELECTOR_KINDS, *RBAC_KINDS)]
    for kind in itertools.chain(ahead, _later(planned)):  # the plan waited on after `ahead`
        if kind.kind not in done:
            done.add(kind.kind)
            read_kind(cluster, live, kind, send, planned)
    return live


def _later(planned: t.Callable[[], list[Planned]]) -> t.Iterator[Planned]:
    yield from planned()


def read_kind(
    cluster: KubeCluster,
    live: Live,
    planned: Planned,
    send: t.Callable[[Listed], None],
    plan_of: t.Callable[[], list[Planned]],
) -> None:
    """One kind's LIST; when the cluster does not serve it so, in the version the repository
    writes it in (the plan's `instead`: v0.9.1's Cohort is v1alpha1)."""
    before, kind = len(live.objects), planned.kind
    read(cluster, [(planned.api_version, kind)], live)
    if kind in live.not_served:
        instead = next((p.instead for p in plan_of() if p.kind == kind), planned.instead)
        read_instead(cluster, live, list(instead))
    items: list[Json] | None = None
    if kind == CRD[1]:
        items = live.crds
    elif kind == NODES[1]:
        items = live.nodes
    else:  # its objects are the last added (each key holds its kind: none replaced)
        items = list(itertools.islice(live.objects.values(), before, None))
    send(Listed(kind, items if kind in live.read else None, live.not_served.get(kind)))
