"""`tenant add`: the files a new tenant needs on each cluster, named and bound the way the
repository's tenants already are (`Habits`); what it names that a cluster lacks is refused
before anything is written."""

from __future__ import annotations

import re
import typing as t
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal

import yaml

from auditor.errors import ConfigError
from auditor.k8s import quantity, selectors
from auditor.k8s.objects import KUEUE_GROUP, RBAC_API, RBAC_GROUP
from auditor.kueue import cohorts, quota
from auditor.model import Resource
from auditor.onboard.files import DNS_LABEL, PROJECTS, PRUNE_GUARD, Plan, modeline, yaml_text
from auditor.repo.layout import TENANTS, Repository
from auditor.repo.profiles import PROFILE_FILE, ClusterProfile
from auditor.repo.root import CLUSTERS

SUBMITTER_ROLE = "kueue-gitops:tenant-submitter"


@dataclass(frozen=True)
class Quota:
    flavor: str
    resource: str
    amount: str

    @classmethod
    def parse(cls, text: str, option: str = "--quota") -> Quota:
        """FLAVOR.RESOURCE=AMOUNT, e.g. a100.nvidia.com/gpu=8 (the flavor ends at the first dot);
        `option` names the flag it came from in an error."""
        head, eq, amount = text.partition("=")
        flavor, dot, resource = head.partition(".")
        if not (eq and dot and flavor and resource and amount):
            raise ConfigError(f"{option} {text!r}: write FLAVOR.RESOURCE=AMOUNT, e.g. a100.cpu=32")
        try:
            quantity.parse(amount)
        except quantity.QuantityError:
            raise ConfigError(
                f"{option} {text!r}: {amount!r} is not a Kubernetes quantity (e.g. 8, 500m, 64Gi)"
            ) from None
        if not DNS_LABEL.fullmatch(flavor):
            raise ConfigError(f"{option} {text!r}: the flavor {flavor!r} must be a DNS label")
        return cls(flavor, resource, amount)


def covered(profile: ClusterProfile, quotas: t.Sequence[Quota]) -> list[Quota]:
    """Every resource the nodes behind each named flavor offer (the profile's capacity), with
    its quota: as given, else the tenant's share of the flavor (the largest fraction of the
    flavor's capacity it is given of any resource: 4 of 8 GPUs brings half the flavor's cpu and
    memory), else 0. A Job asks for cpu and memory beside its GPUs; a ClusterQueue that does
    not cover them, or gives them no quota, never admits it ("resource memory unavailable")."""
    given = {(q.flavor, q.resource): q for q in quotas}
    flavors = list(dict.fromkeys(q.flavor for q in quotas))
    names = list(dict.fromkeys([r for f in flavors for r in profile.capacity.get(f, {})]))
    names += [q.resource for q in quotas if q.resource not in names]
    out = []
    for flavor in flavors:
        held = profile.capacity.get(flavor, {})
        share = max((_fraction(given[(flavor, r)].amount, held.get(r)) for r in names
                     if (flavor, r) in given), default=Decimal(0))  # fmt: skip
        for resource in names:
            if (flavor, resource) in given:
                out.append(given[(flavor, resource)])
            else:
                out.append(Quota(flavor, resource, _part(held.get(resource), share)))
    return out


def _fraction(amount: str, capacity: object) -> Decimal:
    try:
        whole = quantity.value_of(capacity) if capacity is not None else Decimal(0)
        return min(quantity.value_of(amount) / whole, Decimal(1)) if whole > 0 else Decimal(0)
    except quantity.QuantityError:
        return Decimal(0)  # validate names the bad quantity


def _part(capacity: object, share: Decimal) -> str:
    """`share` of a capacity, rounded down to whole units (MiB for memory-like quantities)."""
    if capacity is None or share <= 0:
        return "0"
    binary = quantity.is_binary(capacity)
    unit = Decimal(1 << 20) if binary else Decimal(1)
    value = (quantity.value_of(capacity) * share // unit) * unit
    return quantity.shown(value, binary=binary)


def cluster_queue(
    name: str, tenant: str, profile: ClusterProfile, quotas: list[Quota], cohort: str | None
) -> dict[str, object]:
    """A ClusterQueue admitting only the tenant's labelled namespaces, covering every resource
    of its flavors (`covered`); in a cohort it may borrow what the cohort lends (no limit)."""
    cells = covered(profile, quotas)
    resources = list(dict.fromkeys(q.resource for q in cells))
    flavors = list(dict.fromkeys(q.flavor for q in cells))
    given = {(q.flavor, q.resource): q.amount for q in cells}
    key, value = profile.admission_label
    labels = {key: value}
    if profile.tenant_label:
        labels[profile.tenant_label] = tenant
    spec: dict[str, object] = {}
    if cohort:
        spec["cohortName"] = cohort
    spec |= {
        "queueingStrategy": "BestEffortFIFO",
        "namespaceSelector": {"matchLabels": labels},
        "resourceGroups": [
            {
                "coveredResources": resources,
                "flavors": [
                    {
                        "name": f,
                        "resources": [
                            {"name": r, quota.NOMINAL: given.get((f, r), "0")} for r in resources
                        ],
                    }
                    for f in flavors
                ],
            }
        ],
    }
    return {
        "apiVersion": profile.kueue_api,
        "kind": "ClusterQueue",
        "metadata": {"name": name, "annotations": {"argocd.argoproj.io/sync-options": PRUNE_GUARD}},
        "spec": spec,
    }


def tenant(
    repo: Repository,
    name: str,
    clusters: list[str],
    owners: list[str],
    group: str,
    quotas: list[Quota],
    cohort: str | None = None,
    role: str | None = None,
    shared: str | None = None,
) -> Plan:
    """Everything tenant `name` needs on `clusters`, each with a ClusterQueue of `quotas` (or
    a LocalQueue into the existing ClusterQueue `shared`), named and bound as the repository's
    tenants already are (`Habits`); whatever it names that a cluster lacks (flavor, cohort,
    role, shared queue) is refused before anything is written."""
    _judge_flags(repo, name, quotas, cohort, shared)
    loaded = repo.load(clusters)
    habits = Habits.of(repo, loaded.resources)
    role = role or habits.role
    queue = shared or habits.queue_of(name)
    flavors = list(dict.fromkeys(q.flavor for q in quotas))
    for cluster in clusters:
        known = _Known(loaded.for_cluster(cluster), cluster)
        known.require("ClusterRole", [role], "--role", habits.role_hint(cluster))
        if shared is not None:
            flavors += known.joinable(shared, tenant_labels(repo.cluster(cluster), name))
            continue
        known.require("ResourceFlavor", [q.flavor for q in quotas], "--quota flavor")
        known.absent("ClusterQueue", queue)
        if cohort is not None:
            known.require("Cohort", [cohort], "--cohort", cohorts=True)
    create: dict[str, str] = {}
    append: dict[str, str] = {}
    for cluster in clusters:
        profile = repo.cluster(cluster)
        create |= _tenant_files(profile, name, group, role, habits.local_queue_of(name), queue)
        if shared is None:
            append[f"{CLUSTERS}/{cluster}/clusterqueues.yaml"] = yaml_text(
                f"Tenant {name}'s quota (written by `kueue-gitops tenant add`).",
                cluster_queue(queue, name, profile, quotas, cohort),
            )
    spec = {
        "owners": owners,
        "group": group,
        "clusters": {c: {"namespaces": [name], "clusterQueues": [queue]} for c in clusters},
        "flavors": list(dict.fromkeys(flavors)),
    }
    create[f"{TENANTS}/{name}/{PROFILE_FILE}"] = modeline("tenantprofile") + yaml_text(
        "Tenant profile: read by kueue-gitops, never synced by Argo CD.",
        {
            "apiVersion": "kueue-gitops.io/v1alpha1",
            "kind": "TenantProfile",
            "metadata": {"name": name},
            "spec": spec,
        },
    )
    create[f"argocd/tenants/{name}.yaml"] = app_project(
        source_repos(repo), name, [(c, name) for c in clusters]
    )
    return Plan(create, append)


def _judge_flags(
    repo: Repository, name: str, quotas: list[Quota], cohort: str | None, shared: str | None
) -> None:
    if not DNS_LABEL.fullmatch(name):
        raise ConfigError(f"tenant name {name!r} must be a DNS label (it names its namespace)")
    if name in repo.tenants:
        raise ConfigError(f"tenant {name} exists already ({TENANTS}/{name}/{PROFILE_FILE})")
    if shared is not None and (quotas or cohort):
        raise ConfigError(
            f"--cluster-queue {shared} joins a ClusterQueue with its own quota and cohort: "
            "drop --quota and --cohort, or drop --cluster-queue for a queue of the tenant's own"
        )
    if shared is None and not quotas:
        raise ConfigError(
            "give the tenant's quota: --quota FLAVOR.RESOURCE=AMOUNT (repeatable), or "
            "--cluster-queue NAME to share an existing ClusterQueue"
        )


def tenant_labels(profile: ClusterProfile, name: str) -> dict[str, str]:
    """The labels of tenant `name`'s namespace: the admission label, and its tenant label."""
    key, value = profile.admission_label
    return {key: value} | ({profile.tenant_label: name} if profile.tenant_label else {})


def _tenant_files(
    profile: ClusterProfile, name: str, group: str, role: str, local_queue: str, queue: str
) -> dict[str, str]:
    """tenants/NAME/C/: its Namespace, LocalQueue and RoleBinding on cluster C."""
    labels = tenant_labels(profile, name)
    guard = {"argocd.argoproj.io/sync-options": PRUNE_GUARD}
    base = f"{TENANTS}/{name}/{profile.name}"
    return {
        f"{base}/namespace.yaml": yaml_text(
            "Platform-owned: the admission label lets this namespace submit work to Kueue.",
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": name, "labels": labels, "annotations": guard},
            },
        ),
        f"{base}/localqueues.yaml": yaml_text(
            "Tenant-owned: the entry point for the team's jobs "
            f"(label them kueue.x-k8s.io/queue-name: {local_queue}).",
            {
                "apiVersion": profile.kueue_api,
                "kind": "LocalQueue",
                "metadata": {
                    "name": local_queue,
                    "namespace": name,
                    "annotations": {"argocd.argoproj.io/sync-wave": "1", **guard},
                },
                "spec": {"clusterQueue": queue},
            },
        ),
        f"{base}/rbac.yaml": yaml_text(
            "Platform-owned: members may submit Jobs and read queue status here, nothing more.",
            {
                "apiVersion": RBAC_API,
                "kind": "RoleBinding",
                "metadata": {"name": f"{name}-submitters", "namespace": name},
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
                "subjects": [{"apiGroup": RBAC_GROUP, "kind": "Group", "name": group}],
            },
        ),
    }


@dataclass(frozen=True)
class Habits:
    """How the repository's tenants are written: the ClusterRole their RoleBindings bind, and
    how their LocalQueues and ClusterQueues are named (`{tenant}` stands for the tenant's
    name). A new tenant follows them; in a repository without tenants, init's ways."""

    role: str = SUBMITTER_ROLE
    local_queue: str = "batch"
    cluster_queue: str = "{tenant}-cq"
    bound: tuple[str, ...] = ()  # every ClusterRole the tenants bind, most bound first

    @classmethod
    def of(cls, repo: Repository, objects: t.Sequence[Resource]) -> Habits:
        tenants = [r for r in objects if r.tenant]
        refs = [r.body.get("roleRef") or {} for r in tenants if r.kind == "RoleBinding"]
        bound = Counter(str(ref.get("name")) for ref in refs if ref.get("kind") == "ClusterRole")
        defined = {r.name for r in objects if r.kind == "ClusterRole" and not r.tenant}
        usable = [n for n, _ in bound.most_common() if n in defined]
        local = _named([(r.tenant or "", r.name) for r in tenants if r.kind == "LocalQueue"])
        queues = [(n, q) for n, p in repo.tenants.items() for c in p.clusters.values()
                  for q in c.cluster_queues]  # fmt: skip
        return cls(
            role=usable[0] if usable else SUBMITTER_ROLE,
            local_queue=local or cls.local_queue,
            cluster_queue=_named(queues) or cls.cluster_queue,
            bound=tuple(n for n, _ in bound.most_common()),
        )

    def local_queue_of(self, tenant: str) -> str:
        return self.local_queue.replace("{tenant}", tenant)

    def queue_of(self, tenant: str) -> str:
        return self.cluster_queue.replace("{tenant}", tenant)

    def role_hint(self, cluster: str) -> str:
        """Why the estate's own habit could not be followed, when it could not."""
        if not self.bound or self.role in self.bound:
            return ""
        return (
            f"; the tenants bind {', '.join(self.bound)}, which {CLUSTERS}/{cluster}/ does not "
            "define (a built-in role lets a tenant manage its namespace's access)"
        )


def _named(pairs: t.Sequence[tuple[str, str]]) -> str | None:
    """The naming most of `pairs` (tenant, name) share, the tenant's name as `{tenant}` where
    it is a whole part of the name (tenant `a` in `batch` is no part)."""
    found = Counter(
        re.sub(rf"(?<![a-z0-9]){re.escape(tenant)}(?![a-z0-9])", "{tenant}", name) if tenant
        else name
        for tenant, name in pairs
    )  # fmt: skip
    return min(found, key=lambda n: (-found[n], n)) if found else None


_WORDS = {"ResourceFlavor": "flavor", "Cohort": "cohort"}


class _Known:
    """What one cluster's objects define: a name it lacks is refused before anything is
    written (a typo'd flavor or cohort would make a queue that never admits or borrows)."""

    def __init__(self, objects: t.Sequence[Resource], cluster: str) -> None:
        self.objects = objects
        self.cluster = cluster

    def names(self, kind: str, cohorts_too: bool = False) -> set[str]:
        found = {r.name for r in self.objects if r.kind == kind}
        if cohorts_too:  # a cohort no Cohort object defines exists while a queue names it
            queues = (r.body for r in self.objects if r.kind == "ClusterQueue")
            found |= {c for c in map(cohorts.cohort_of, queues) if c}
        return found

    def require(
        self, kind: str, wanted: t.Sequence[str], flag: str, hint: str = "", cohorts: bool = False
    ) -> None:
        known = self.names(kind, cohorts)
        for name in dict.fromkeys(wanted):
            if name not in known:
                shown = ", ".join(sorted(known)) or "none"
                what = _WORDS.get(kind, kind)
                raise ConfigError(
                    f"{flag} {name}: no such {what} on cluster {self.cluster} (known: "
                    f"{shown}){hint}; define it in {CLUSTERS}/{self.cluster}/ first, or choose "
                    "a known one; nothing was written"
                )

    def joinable(self, queue: str, labels: dict[str, str]) -> list[str]:
        """The flavors of ClusterQueue `queue`, which a namespace labelled `labels` may join:
        refused when it does not exist or its namespaceSelector leaves the namespace out (a
        nil one admits none, as Kueue reads it)."""
        self.require("ClusterQueue", [queue], "--cluster-queue")
        [found] = [r.body for r in self.objects if r.kind == "ClusterQueue" and r.name == queue]
        spec = found.get("spec") or {}
        if not selectors.selects(spec.get("namespaceSelector"), labels, nil=False):
            raise ConfigError(
                f"--cluster-queue {queue}: its namespaceSelector on cluster {self.cluster} "
                f"({spec.get('namespaceSelector')}) does not select the tenant's namespace "
                f"(labels {labels}); nothing was written"
            )
        groups = spec.get("resourceGroups") or []
        return [str(f.get("name")) for g in groups for f in g.get("flavors") or []]

    def absent(self, kind: str, name: str) -> None:
        if name in self.names(kind):
            raise ConfigError(
                f"{kind} {name} exists already on cluster {self.cluster}; nothing was written"
            )


def app_project(sources: list[str], name: str, destinations: list[tuple[str, str]]) -> str:
    """Tenant `name`'s AppProject: its Applications may reach only its namespaces (cluster,
    namespace) and only the kinds a tenant folder holds."""
    namespaces = list(dict.fromkeys(ns for _, ns in destinations))
    return yaml_text(
        f"Tenant {name}: its Applications (tenants/{name}/<cluster>/) reach only its own "
        "namespaces, and only the kinds a tenant folder holds.",
        {
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "AppProject",
            "metadata": {"name": f"tenant-{name}", "namespace": "argocd"},
            "spec": {
                "description": f"LocalQueues and RoleBindings of {name}",
                "sourceRepos": sources,
                "destinations": [{"name": c, "namespace": ns} for c, ns in destinations],
                "clusterResourceWhitelist": [
                    {"group": "", "kind": "Namespace", "name": ns} for ns in namespaces
                ],
                "namespaceResourceWhitelist": [
                    {"group": KUEUE_GROUP, "kind": "LocalQueue"},
                    {"group": RBAC_GROUP, "kind": "RoleBinding"},
                ],
            },
        },
    )


def source_repos(repo: Repository) -> list[str]:
    """The repository URLs the platform's AppProject allows (argocd/projects.yaml): a tenant's
    project may read no other. Without them, refuse: `['*']` would let a tenant's Application
    sync from any repository, past every review here."""
    root = repo.root
    path = root / PROJECTS if root else None
    if path is not None and path.is_file():
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "AppProject":
                sources = (doc.get("spec") or {}).get("sourceRepos") or []
                if sources:
                    return [str(s) for s in sources]
    raise ConfigError(
        f"{PROJECTS} names no sourceRepos for the tenant's AppProject to allow: write it with "
        "`kueue-gitops init --adopt --repo-url URL` (it writes what the repository lacks, "
        "nothing it has), then run tenant add again"
    )
