"""`kueue-gitops import`, without I/O: what one live cluster becomes in the repository.

An `Estate` is what was read of the cluster (auditor/onboard/importing.py reads it); `files`
turns it into the repository's layout, each object as a person writes it (auditor/k8s/
authored.py: no status or server metadata, no field at its default), in a stable order, one file
per kind as `init` and `tenant add` lay them out:

    clusters/C/profile.yaml, resourceflavors.yaml, cohorts.yaml, clusterqueues.yaml,
      priorityclasses.yaml, admissionchecks.yaml, topologies.yaml, multikueue.yaml, rbac.yaml,
      kueue/manager-config.yaml, unowned/NS.yaml
    tenants/T/profile.yaml, tenants/T/C/namespace.yaml, localqueues.yaml, rbac.yaml

A tenant is the namespaces a `TenantRule` puts together; its profile is derived from what is
live (the group its RoleBindings bind, the priority classes its Workloads and Jobs use, the
ClusterQueues its LocalQueues point to and their flavors) and, when the repository already
has it (another cluster's import), joins it. A namespace the rule cannot place is written
unowned (clusters/C/unowned/NS.yaml, which validate names until a tenant has it), never
guessed; one the user excludes is left out. RBAC whose role does not exist is refused
(ConfigError). The cluster profile proposes the platform's identities from what is live,
marked for review.
"""

from __future__ import annotations

import contextlib
import json
import re
import typing as t
from collections import Counter
from dataclasses import dataclass, field, replace

import yaml

from auditor.errors import ConfigError
from auditor.k8s import confinement, quantity, rbac
from auditor.k8s.authored import Schema, authored
from auditor.k8s.objects import RBAC_KINDS, Json, group_of
from auditor.kueue import admission, quota
from auditor.kueue import capacity as kueue_capacity
from auditor.kueue import config as kueue_config
from auditor.kueue.admission import starting_enforcement
from auditor.kueue.workloads import priority_class
from auditor.onboard.files import DNS_LABEL, PRUNE_GUARD, modeline
from auditor.onboard.keyorder import ordered
from auditor.repo.layout import TENANTS, UNOWNED
from auditor.repo.profiles import PROFILE_FILE
from auditor.repo.root import CLUSTERS

DEFAULT_ADMISSION = ("kueue-gitops.io/admission", "enabled")  # init's, when no queue selects one
GUARDED = ("ClusterQueue", "LocalQueue", "Namespace")  # Argo CD must never delete these
SYNC_OPTIONS = "argocd.argoproj.io/sync-options"

# The cluster folder's files: kind -> file, in the order the files are written.
CLUSTER_FILES: dict[str, str] = {
    "ResourceFlavor": "resourceflavors.yaml",
    "Cohort": "cohorts.yaml",
    "ClusterQueue": "clusterqueues.yaml",
    "WorkloadPriorityClass": "priorityclasses.yaml",
    "PriorityClass": "priorityclasses.yaml",
    "AdmissionCheck": "admissionchecks.yaml",
    "ProvisioningRequestConfig": "admissionchecks.yaml",
    "Topology": "topologies.yaml",
    "MultiKueueConfig": "multikueue.yaml",
    "MultiKueueCluster": "multikueue.yaml",
    "ClusterRole": "rbac.yaml",
    "Role": "rbac.yaml",
    "ClusterRoleBinding": "rbac.yaml",
    "RoleBinding": "rbac.yaml",
    "ConfigMap": "kueue/manager-config.yaml",
}
TENANT_FILES = {
    "Namespace": "namespace.yaml",
    "LocalQueue": "localqueues.yaml",
    "RoleBinding": "rbac.yaml",
}
# The Kueue kinds import reads (those the cluster does not serve are skipped); Workloads are
# read for the priority classes tenants use, never written.
KUEUE_KINDS = (
    "ResourceFlavor",
    "Cohort",
    "ClusterQueue",
    "LocalQueue",
    "WorkloadPriorityClass",
    "AdmissionCheck",
    "ProvisioningRequestConfig",
    "Topology",
    "MultiKueueConfig",
    "MultiKueueCluster",
)
KIND_ORDER = {k: i for i, k in enumerate(["Namespace", "LocalQueue", *CLUSTER_FILES])}


@dataclass(frozen=True)
class TenantRule:
    """How namespaces make tenants: by a namespace label's value (`label=KEY`), by the
    ClusterQueue their LocalQueues feed (`queue`), or by their name (`name=REGEX`, the first
    group, else the whole match, names the tenant)."""

    by: str
    value: str = ""

    @classmethod
    def parse(cls, text: str) -> TenantRule:
        by, eq, value = text.partition("=")
        if by == "queue" and not eq:
            return cls("queue")
        if by == "label" and value:
            return cls("label", value)
        if by == "name" and value:
            try:
                re.compile(value)
            except re.error as exc:
                raise ConfigError(f"--tenants-by {text}: not a regular expression ({exc})") from exc
            return cls("name", value)
        raise ConfigError(
            f"--tenants-by {text!r}: write label=KEY (a namespace label's value), queue (the "
            "ClusterQueue its LocalQueues feed) or name=REGEX (its first group names the tenant)"
        )

    def __str__(self) -> str:
        return f"{self.by}={self.value}" if self.value else self.by

    @property
    def label(self) -> str | None:
        """The namespace label naming the tenant (the cluster profile's tenantLabel)."""
        return self.value if self.by == "label" else None

    def place(self, namespace: Json, queues: t.Collection[str]) -> tuple[str | None, str]:
        """The tenant of `namespace` (whose LocalQueues feed `queues`), or None and why not."""
        meta = namespace.get("metadata") or {}
        name = str(meta.get("name"))
        if self.by == "label":
            found = (meta.get("labels") or {}).get(self.value)
            return (str(found), "") if found else (None, f"it has no label {self.value}")
        if self.by == "queue":
            if len(queues) == 1:
                return next(iter(queues)), ""
            if not queues:
                return None, "none of its LocalQueues names a ClusterQueue"
            return None, f"its LocalQueues feed several ClusterQueues ({', '.join(sorted(queues))})"
        match = re.fullmatch(self.value, name)
        if match is None:
            return None, f"its name does not match {self.value}"
        return (match.group(1) if match.groups() and match.group(1) else match.group(0)), ""


@dataclass
class Estate:
    """What import read of one cluster."""

    cluster: str
    kueue_version: str  # the release the controller runs, e.g. v0.17.0
    kueue_api: str  # the apiVersion its Kueue objects were read in, e.g. kueue.x-k8s.io/v1beta2
    objects: list[Json]  # Kueue kinds, PriorityClasses, Namespaces, RBAC, Kueue's ConfigMap
    schemas: dict[tuple[str, str], Schema] = field(default_factory=dict)  # (group, kind) -> CRD's
    nodes: list[Json] = field(default_factory=list)
    workloads: list[Json] = field(default_factory=list)  # Workloads and Jobs: what tenants run
    controller: str | None = None  # Kueue's identity, e.g. ServiceAccount kueue-system/kueue-...
    argocd_version: str | None = None  # the Argo CD release running there, when one was read
    unread: list[str] = field(default_factory=list)  # what was not found, and what that means

    def of(self, kind: str) -> list[Json]:
        return [o for o in self.objects if o.get("kind") == kind]


@dataclass(frozen=True)
class Options:
    """What the user says beyond the cluster: its context, owners, the tenant rule."""

    rule: TenantRule
    owners: tuple[str, ...]
    context: str
    admission: tuple[str, str] | None = None  # None: the label the ClusterQueues select by
    exclude: frozenset[str] = frozenset()  # namespaces left out (--exclude)


@dataclass
class Imported:
    files: dict[str, str]  # repository path -> text
    tenants: dict[str, list[str]]  # tenant -> its namespaces on this cluster
    unowned: dict[str, str] = field(default_factory=dict)  # namespace -> why no tenant has it
    excluded: list[str] = field(default_factory=list)  # the namespaces --exclude left out
    identities: dict[str, str] = field(default_factory=dict)  # proposed platformIdentities -> why


def _name(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _namespace(obj: Json) -> str | None:
    return (obj.get("metadata") or {}).get("namespace")


def files(estate: Estate, options: Options, tenants_now: t.Mapping[str, Json]) -> Imported:
    """Every file the cluster's import writes; `tenants_now`: the tenant profiles the
    repository holds (parsed), which a tenant found here joins."""
    estate, excluded = _without(estate, options.exclude)
    admission = options.admission or admission_label(estate.of("ClusterQueue"))
    queues_of = _queues_by_namespace(estate.of("LocalQueue"))
    placed, unowned = _place(estate, options.rule, admission, queues_of)
    bindings, roles = _rbac(estate, {*placed, *unowned})
    cluster_dir = f"{CLUSTERS}/{estate.cluster}"
    by_file: dict[str, list[Json]] = {}

    def add(path: str, obj: Json) -> None:
        by_file.setdefault(path, []).append(_written(estate, obj))

    for obj in _cluster_objects(estate, roles):
        add(f"{cluster_dir}/{CLUSTER_FILES[str(obj['kind'])]}", obj)
    own_bindings: dict[str, list[Json]] = {}  # namespace -> its RoleBindings (a tenant's, unowned)
    for obj in bindings:
        ns = _namespace(obj)
        if obj.get("kind") == "RoleBinding" and (ns in placed or ns in unowned):
            own_bindings.setdefault(ns or "", []).append(obj)
        else:
            add(f"{cluster_dir}/rbac.yaml", obj)
    members: dict[str, list[str]] = {}
    for ns, tenant in sorted(placed.items()):
        members.setdefault(tenant, []).append(ns)
        for obj in _namespace_objects(estate, ns, own_bindings):
            add(f"{TENANTS}/{tenant}/{estate.cluster}/{TENANT_FILES[str(obj['kind'])]}", obj)
    for ns in sorted(unowned):
        for obj in _namespace_objects(estate, ns, own_bindings):
            add(f"{cluster_dir}/{UNOWNED}/{ns}.yaml", obj)
    out = {path: _render(path, estate.cluster, docs) for path, docs in sorted(by_file.items())}
    identities = platform_identities(estate)
    out[f"{cluster_dir}/{PROFILE_FILE}"] = _cluster_profile(estate, options, admission, identities)
    for tenant, names in members.items():
        profile = tenant_profile(estate, tenant, names, queues_of, own_bindings, options)
        joined = join_profile(tenants_now.get(tenant), profile, estate.cluster)
        out[f"{TENANTS}/{tenant}/{PROFILE_FILE}"] = modeline("tenantprofile") + _dump(
            "Tenant profile: read by kueue-gitops, never synced by Argo CD (written by "
            "`kueue-gitops import`).",
            [joined],
        )
    return Imported(dict(sorted(out.items())), members, unowned, excluded, identities)


def _cluster_objects(estate: Estate, roles: list[Json]) -> t.Iterator[Json]:
    """The objects of the cluster's folder (its RBAC bindings aside)."""
    for kind in KUEUE_KINDS:
        if kind != "LocalQueue":
            yield from estate.of(kind)
    for obj in estate.of("PriorityClass"):
        if not _name(obj).startswith("system-"):
            yield obj
    for obj in estate.of("ConfigMap"):
        meta = obj.get("metadata") or {}
        if kueue_config.is_config_map("v1", "ConfigMap", meta.get("namespace"), _name(obj)):
            yield obj
    yield from roles


def _namespace_objects(
    estate: Estate, ns: str, bindings: dict[str, list[Json]]
) -> t.Iterator[Json]:
    """A namespace's own objects: itself, its LocalQueues, its RoleBindings."""
    yield from (n for n in estate.of("Namespace") if _name(n) == ns)
    yield from (lq for lq in estate.of("LocalQueue") if _namespace(lq) == ns)
    yield from bindings.get(ns, [])


def _without(estate: Estate, exclude: t.Collection[str]) -> tuple[Estate, list[str]]:
    """The estate without the namespaces `exclude` names (nor anything in them), and which of
    them the cluster has."""
    have = {_name(n) for n in estate.of("Namespace")}

    def kept(obj: Json) -> bool:
        ns = _name(obj) if obj.get("kind") == "Namespace" else _namespace(obj)
        return ns not in exclude

    left = replace(
        estate,
        objects=[o for o in estate.objects if kept(o)],
        workloads=[o for o in estate.workloads if kept(o)],
    )
    return left, sorted(have & set(exclude))


# -- where things go -------------------------------------------------------------------------------


def admission_label(cluster_queues: list[Json]) -> tuple[str, str]:
    """The namespace label most ClusterQueues require (matchLabels), else init's default."""
    counts: Counter[tuple[str, str]] = Counter()
    for cq in cluster_queues:
        selector = (cq.get("spec") or {}).get("namespaceSelector") or {}
        for key, value in (selector.get("matchLabels") or {}).items():
            counts[(str(key), str(value))] += 1
    if not counts:
        return DEFAULT_ADMISSION
    return min(counts, key=lambda kv: (-counts[kv], kv))


def _queues_by_namespace(local_queues: list[Json]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for lq in local_queues:
        cq = (lq.get("spec") or {}).get("clusterQueue")
        found.setdefault(str(_namespace(lq)), set()).update([str(cq)] if cq else [])
    return found


def _place(
    estate: Estate,
    rule: TenantRule,
    admission: tuple[str, str],
    queues_of: dict[str, set[str]],
) -> tuple[dict[str, str], dict[str, str]]:
    """Namespace -> tenant, for every namespace holding LocalQueues or the admission label;
    and those the rule cannot place, each with why (written unowned: one scratch namespace
    without the tenant label must not stop the import of a production cluster)."""
    key, value = admission
    placed: dict[str, str] = {}
    unowned: dict[str, str] = {}
    for ns in sorted(estate.of("Namespace"), key=_name):
        name = _name(ns)
        labels = (ns.get("metadata") or {}).get("labels") or {}
        if name not in queues_of and labels.get(key) != value:
            continue
        tenant, why = rule.place(ns, queues_of.get(name, set()))
        if tenant is None:
            unowned[name] = why
        elif not DNS_LABEL.fullmatch(tenant):
            unowned[name] = f"its tenant {tenant!r} is not a DNS label"
        else:
            placed[name] = tenant
    return placed, unowned


def _rbac(estate: Estate, tenant_namespaces: set[str]) -> tuple[list[Json], list[Json]]:
    """The RBAC to import: every RoleBinding in a tenant's namespace, every other binding that
    gives someone a power drift watches (over Kueue's quota objects, priority classes,
    namespaces' labels, RBAC itself), and the roles they bind; never the API server's
    bootstrap policy, nor what only Kueue's own controller (trusted) holds."""
    objects = [o for o in estate.objects if o.get("kind") in RBAC_KINDS]
    trusted = {estate.controller} if estate.controller else set()
    roles: dict[tuple[t.Any, ...], Json] = {
        (o.get("kind"), _namespace(o) if o.get("kind") == "Role" else None, _name(o)): o
        for o in objects
        if o.get("kind") in ("Role", "ClusterRole")
    }
    bindings: dict[tuple[str, str | None, str], Json] = {}
    for grant in rbac.grants(objects):
        body = grant.binding.body
        if not confinement.bootstrap(body) and str(grant.subject) not in trusted:
            bindings[(str(body.get("kind")), _namespace(body), _name(body))] = body
    for body in objects:
        if (
            body.get("kind") == "RoleBinding"
            and _namespace(body) in tenant_namespaces
            and not confinement.bootstrap(body)
        ):
            bindings[("RoleBinding", _namespace(body), _name(body))] = body
    dangling = []
    wanted: dict[tuple[t.Any, ...], Json] = {}
    for body in bindings.values():
        ref = body.get("roleRef") or {}
        kind = ref.get("kind")
        key = (kind, _namespace(body) if kind == "Role" else None, ref.get("name"))
        role = roles.get(key)
        if role is None:
            # It grants nothing today, and whatever a role of that name grants once made.
            dangling.append(f"{body.get('kind')} {_where(body)} binds {kind} {ref.get('name')}")
        elif not confinement.bootstrap(role):
            wanted[key] = role
    if dangling:
        raise ConfigError(
            f"cluster {estate.cluster}: RBAC that cannot be attributed (the role it binds does "
            f"not exist, so what it grants is unknown): {'; '.join(sorted(set(dangling)))}. "
            "Create or delete the binding; nothing was written"
        )
    return list(bindings.values()), list(wanted.values())


def _where(obj: Json) -> str:
    ns = _namespace(obj)
    return f"{ns}/{_name(obj)}" if ns else _name(obj)


# -- profiles --------------------------------------------------------------------------------------


def capacity(estate: Estate) -> dict[str, dict[str, str]]:
    """Per flavor, what the nodes its nodeLabels select hold (allocatable), for the resources
    the ClusterQueues cover with it. A cluster without any Node (a bare control plane, a pool
    scaled to zero) shows no capacity: there each flavor is taken to hold what its queues
    promise (as drift, which compares no pools there), and `import` says so."""
    holders = [*estate.of("ClusterQueue"), *estate.of("Cohort")]
    out: dict[str, dict[str, str]] = {}
    for rf in sorted(estate.of("ResourceFlavor"), key=_name):
        promised = kueue_capacity.promised(_name(rf), holders)
        if not estate.nodes:
            held = {resource: str(q) for resource, q in sorted(promised.items())}
        else:
            nodes = [n for n in estate.nodes if kueue_capacity.selects(rf, n)]
            held = {
                resource: str(kueue_capacity.allocatable(nodes, resource))
                for resource in sorted(promised)
                if any(resource in (n.get("status") or {}).get("allocatable", {}) for n in nodes)
            }
        if held:
            out[_name(rf)] = held
    return out


CLUSTER_ADMIN = "cluster-admin"


def platform_identities(estate: Estate) -> dict[str, str]:
    """Who the platform's own identities look like from what is live, each with why: the
    subjects bound to cluster-admin, Argo CD's application controller's ServiceAccount where
    a binding shows it runs, and Kueue's controller. A proposal for a person to review: the
    policies generated from it let these alone relabel namespaces."""
    found: dict[str, str] = {}
    for body in estate.objects:
        if body.get("kind") not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        ref = body.get("roleRef") or {}
        admin = body.get("kind") == "ClusterRoleBinding" and (
            ref.get("kind"),
            ref.get("name"),
        ) == ("ClusterRole", CLUSTER_ADMIN)
        for raw in body.get("subjects") or []:
            subject = rbac.subject_of(raw, _namespace(body))
            if subject is None:
                continue
            if admin:
                found.setdefault(str(subject), f"bound to {CLUSTER_ADMIN} by {_name(body)}")
            elif subject.kind == "ServiceAccount" and admission.is_sync_identity(str(subject)):
                found.setdefault(str(subject), "Argo CD syncs as it")
    if estate.controller:
        found.setdefault(estate.controller, "Kueue's controller")
    return dict(sorted(found.items()))


def _cluster_profile(
    estate: Estate,
    options: Options,
    admission: tuple[str, str],
    identities: dict[str, str],
) -> str:
    version = estate.kueue_api.rpartition("/")[2]
    spec: Json = {
        "context": options.context,
        "owners": list(options.owners),
        "kueue": {"apiVersions": [version], "version": estate.kueue_version},
        "admissionLabel": {"key": admission[0], "value": admission[1]},
    }
    if options.rule.label:
        spec["tenantLabel"] = options.rule.label
    if estate.argocd_version:  # its renderers are the ones validate renders with
        spec["argocd"] = {"version": estate.argocd_version}
    # the cluster runs work: its policies warn until a reviewed change sets Deny
    spec["admissionPolicies"] = {"enforcement": starting_enforcement(runs_work=True)}
    spec["capacity"] = capacity(estate)
    order = _workload_order(estate.of("WorkloadPriorityClass"))
    if order:
        spec["priority"] = {"workloadOrder": order}
    if estate.controller:
        spec["drift"] = {"trustedSubjects": [estate.controller]}
    doc = {
        "apiVersion": "kueue-gitops.io/v1alpha1",
        "kind": "ClusterProfile",
        "metadata": {"name": estate.cluster},
        "spec": spec,
    }
    text = _dump(
        f"Cluster profile of {estate.cluster}: read by kueue-gitops, never synced by Argo CD "
        "(written by `kueue-gitops import`; capacity is what its nodes held then).",
        [doc],
    )
    return modeline("clusterprofile") + _with_identities(text, identities)


def _with_identities(text: str, identities: dict[str, str]) -> str:
    """The profile's text with the proposed platformIdentities put in before its capacity,
    each with why, under a comment asking for review (a comment no dumper writes)."""
    if not identities:
        return text
    block = [
        "  # REVIEW: proposed by `kueue-gitops import` from what is live. These alone may set",
        "  # or change namespaces' admission and tenant labels once the admission policies are",
        "  # generated: keep Argo CD's identity and your administrators, drop anyone else.",
        "  platformIdentities:",
        *(f"    - {json.dumps(who)}   # {why}" for who, why in identities.items()),
    ]
    head, sep, tail = text.partition("\n  capacity:")
    return head + "\n" + "\n".join(block) + sep + tail


def _workload_order(classes: list[Json]) -> list[str]:
    return [_name(c) for c in sorted(classes, key=lambda c: (int(c.get("value") or 0), _name(c)))]


def tenant_profile(
    estate: Estate,
    tenant: str,
    namespaces: list[str],
    queues_of: dict[str, set[str]],
    bindings: dict[str, list[Json]],
    options: Options,
) -> Json:
    """The profile of `tenant` as this cluster shows it."""
    queues = sorted({q for ns in namespaces for q in queues_of.get(ns, set())})
    groups: Counter[str] = Counter()
    for ns in namespaces:
        for rb in bindings.get(ns, []):
            for subject in rb.get("subjects") or []:
                if subject.get("kind") == "Group":
                    groups[str(subject.get("name"))] += 1
    used: dict[str, set[str]] = {"workload": set(), "pod": set()}
    for wl in estate.workloads:
        found = priority_class(wl) if _namespace(wl) in namespaces else None
        if found:
            used[found[0]].add(found[1])
    flavors = sorted(
        {
            str(f.get("name"))
            for cq in estate.of("ClusterQueue")
            if _name(cq) in queues
            for g in (cq.get("spec") or {}).get("resourceGroups") or []
            for f in g.get("flavors") or []
        }
    )
    spec: Json = {"owners": list(options.owners)}
    if groups:
        spec["group"] = min(groups, key=lambda g: (-groups[g], g))
    spec["clusters"] = {estate.cluster: {"namespaces": namespaces, "clusterQueues": queues}}
    classes = {k: sorted(v) for k, v in used.items() if v}
    if classes:
        spec["priorityClasses"] = classes
    if flavors:
        spec["flavors"] = flavors
    return {
        "apiVersion": "kueue-gitops.io/v1alpha1",
        "kind": "TenantProfile",
        "metadata": {"name": tenant},
        "spec": spec,
    }


def join_profile(current: Json | None, found: Json, cluster: str) -> Json:
    """The repository's profile of a tenant with this cluster's part put in (replaced when
    imported before); what else it says is kept, lists the cluster adds to are joined."""
    if not current:
        return found
    out = {**current, "spec": dict(current.get("spec") or {})}
    spec, new = out["spec"], found["spec"]
    spec["clusters"] = {**(spec.get("clusters") or {}), cluster: new["clusters"][cluster]}
    spec["clusters"] = dict(sorted(spec["clusters"].items()))
    if "group" not in spec and "group" in new:
        spec["group"] = new["group"]
    for kind, names in (new.get("priorityClasses") or {}).items():
        classes = spec.setdefault("priorityClasses", {})
        classes[kind] = sorted({*classes.get(kind, []), *names})
    if "flavors" in spec:  # absent: every flavor, which stays so
        spec["flavors"] = sorted({*spec["flavors"], *new.get("flavors", [])})
    return out


# -- writing ---------------------------------------------------------------------------------------


def _written(estate: Estate, obj: Json) -> Json:
    """The object as a person writes it; queues and admitted namespaces guarded from pruning."""
    kind = str(obj.get("kind"))
    schema = estate.schemas.get((group_of(str(obj.get("apiVersion", ""))), kind))
    out = authored(obj, schema)
    if kind in quota.QUOTA_KINDS:  # a quota as the server prints it: "9", never 9
        for cell in quota.cells(out):
            for name in quota.QUOTA_FIELDS:
                with contextlib.suppress(quantity.QuantityError, KeyError):
                    cell.fields[name] = quantity.printed(cell.fields[name])
    if kind in GUARDED:
        meta = out["metadata"]
        meta["annotations"] = {**(meta.get("annotations") or {}), SYNC_OPTIONS: PRUNE_GUARD}
    return out


def _order(obj: Json) -> tuple[int, str, str]:
    return (KIND_ORDER.get(str(obj.get("kind")), 99), str(_namespace(obj) or ""), _name(obj))


def _render(path: str, cluster: str, docs: list[Json]) -> str:
    kinds = ", ".join(dict.fromkeys(str(d.get("kind")) for d in sorted(docs, key=_order)))
    return _dump(
        f"{kinds} of cluster {cluster} (written by `kueue-gitops import`).",
        sorted(docs, key=_order),
    )


class _Dumper(yaml.SafeDumper):
    """The repository's style: lists indented under their key, block scalars for long text."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _list(dumper: yaml.SafeDumper, items: list[t.Any]) -> yaml.SequenceNode:
    inline = all(isinstance(i, str) and "\n" not in i for i in items)  # [cpu, memory]
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=inline)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(list, _list)


def _dump(comment: str, docs: list[Json]) -> str:
    body = "---\n".join(
        yaml.dump(ordered(d), Dumper=_Dumper, sort_keys=False, width=100, allow_unicode=True)
        for d in docs
    )
    return f"# {comment}\n{body}"
