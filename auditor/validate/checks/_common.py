"""What several checks need: who owns what on a cluster, label selectors, the cluster's Kueue
(its Configuration and what its release states)."""

from __future__ import annotations

import typing as t

from auditor.k8s import selectors
from auditor.k8s.objects import SCHEDULING_GROUP, FieldPath
from auditor.kueue import KUEUE_GROUP, release
from auditor.model import Finding, Resource
from auditor.repo import boundaries, manifests
from auditor.repo.profiles import TenantProfile
from auditor.rules import Rule

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

KUEUE = KUEUE_GROUP  # the checks' short name for Kueue's API group


def spec_of(resource: Resource) -> dict[str, t.Any]:
    spec = resource.body.get("spec")
    return spec if isinstance(spec, dict) else {}


def named(ctx: CheckContext, kind: str, group: str = KUEUE) -> dict[str, Resource]:
    """The cluster's objects of one kind, by name (namespaced kinds: by namespace/name)."""
    return {
        f"{r.namespace}/{r.name}" if r.namespace else r.name: r
        for r in ctx.of_kind(kind)
        if r.key.group == group
    }


A = t.TypeVar("A")
R = t.TypeVar("R")
_MADE: dict[tuple[str, str, object], tuple[object, object, object]] = {}


def of_profiles(function: t.Callable[[CheckContext, A], R]) -> t.Callable[[CheckContext, A], R]:
    """`function(ctx, arg)`, made of the profiles alone (the cluster's and the tenants', which
    are never changed in place: read again, they are new objects), made once per profiles: an
    editor's server runs the checks again after every edit, and thousands of tenants' profiles
    seldom change. What it returns is shared: read, never changed."""

    def made(ctx: CheckContext, arg: A) -> R:
        key = (function.__name__, ctx.cluster.name, arg)
        tenants, cluster, found = _MADE.get(key, (None, None, None))
        if tenants is not ctx.tenants or cluster is not ctx.cluster:  # held: ids not reused
            found = function(ctx, arg)
            _MADE[key] = (ctx.tenants, ctx.cluster, found)
        return t.cast(R, found)

    return made


def namespace_owners(ctx: CheckContext) -> t.Mapping[str, TenantProfile]:
    """Each namespace on this cluster that a tenant profile lists, with that tenant."""
    return _namespace_owners(ctx, None)


@of_profiles
def _namespace_owners(ctx: CheckContext, _: None) -> t.Mapping[str, TenantProfile]:
    return {
        namespace: tenant
        for tenant in ctx.tenants.values()
        for namespace in getattr(tenant.clusters.get(ctx.cluster.name), "namespaces", ())
    }


def cluster_tenants(ctx: CheckContext) -> t.Mapping[str, TenantProfile]:
    """The tenants on this cluster, by name."""
    return _cluster_tenants(ctx, None)


@of_profiles
def _cluster_tenants(ctx: CheckContext, _: None) -> t.Mapping[str, TenantProfile]:
    return {
        tenant.name: tenant
        for tenant in ctx.tenants.values()
        if ctx.cluster.name in tenant.clusters
    }


def queue_tenants(ctx: CheckContext) -> t.Mapping[str, t.Sequence[TenantProfile]]:
    """Each ClusterQueue's tenants: those whose profile lists it for this cluster."""
    return _queue_tenants(ctx, None)


@of_profiles
def _queue_tenants(ctx: CheckContext, _: None) -> t.Mapping[str, t.Sequence[TenantProfile]]:
    out: dict[str, list[TenantProfile]] = {}
    for tenant in ctx.tenants.values():
        for cq in getattr(tenant.clusters.get(ctx.cluster.name), "cluster_queues", ()):
            out.setdefault(cq, []).append(tenant)
    return out


def labels_of(resource: Resource) -> dict[str, str]:
    labels = (resource.body.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def selects(selector: t.Any, labels: dict[str, str]) -> bool:
    """Kubernetes LabelSelector semantics, with Kueue's reading of nil: it selects nothing."""
    return selectors.selects(selector, labels, nil=False)


def selector_of(resource: Resource, at: str = "namespaceSelector") -> t.Callable[[t.Any], bool]:
    """`selects` with the selector at spec.`at` of `resource` parsed once, for many namespaces."""
    return selectors.matcher(spec_of(resource).get(at), nil=False)


def requires_label(selector: t.Any, key: str, value: str) -> bool:
    """True when every namespace the selector matches carries `key=value` (False for a nil or
    invalid selector: the checks report those on their own)."""
    try:
        parsed = selectors.parse(selector)
    except selectors.SelectorError:
        return False
    return parsed is not None and parsed.requires(key, value)


def about_profile(
    ctx: CheckContext, tenant: TenantProfile, rule: Rule, message: str, path: FieldPath
) -> Finding:
    """A finding located in a tenant's profile file (profiles are not cluster objects)."""
    found, _ = manifests.load_bytes(ctx.repo.tree.read(tenant.file), tenant.file)
    return Finding.about(found[0], rule, message, path=path)


PRIORITY_KINDS = {
    "workload": ("WorkloadPriorityClass", KUEUE),
    "pod": ("PriorityClass", SCHEDULING_GROUP),
}


def priority_value(resource: Resource) -> int | None:
    """A priority class's top-level value (None when missing or no integer)."""
    value = resource.body.get("value")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@of_profiles
def tenant_levels(ctx: CheckContext, use: str) -> t.AbstractSet[str]:
    """The priority classes of one use (workload or pod) some tenant on this cluster may use."""
    return {
        level
        for tenant in ctx.tenants.values()
        if ctx.cluster.name in tenant.clusters
        for level in (
            tenant.workload_priority_classes if use == "workload" else tenant.pod_priority_classes
        )
    }


def platform_floor(ctx: CheckContext) -> tuple[int, str] | None:
    """The lowest value among the platform's own priority levels, and whose it is (None when the
    cluster has none): the profile's `priority.platformLevels`, or every class no tenant lists."""
    listed = ctx.cluster.platform_levels
    found: list[tuple[int, str]] = []
    for use, (kind, group) in PRIORITY_KINDS.items():
        usable = tenant_levels(ctx, use)
        for name, resource in named(ctx, kind, group).items():
            value = priority_value(resource)
            platform = name in listed if listed is not None else name not in usable
            if platform and value is not None:
                found.append((value, f"{kind} {name}"))
    return min(found) if found else None


def kueue_configuration(ctx: CheckContext) -> dict[str, t.Any] | None:
    """The Configuration the repository gives this cluster's Kueue (None when it has none or
    it does not parse: the kueue-config check says why)."""
    return boundaries.configuration(boundaries.config_map(ctx.of_kind("ConfigMap")))


def kueue_release(ctx: CheckContext) -> release.Release:
    """What this cluster's Kueue release states (the nearest carried one when the profile names
    a release this tool does not carry: the kueue-config check reports that)."""
    return release.nearest_release(ctx.cluster.kueue_version)
