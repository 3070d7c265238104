"""What several checks need: who owns what on a cluster, label selectors, quota entries."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.k8s.quantity import Quantity, QuantityError, parse
from auditor.model import Finding, Resource
from auditor.repo import manifests
from auditor.repo.profiles import TenantProfile

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

KUEUE = "kueue.x-k8s.io"
Path = tuple[str | int, ...]


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


def namespace_owners(ctx: CheckContext) -> dict[str, TenantProfile]:
    """Each namespace on this cluster that a tenant profile lists, with that tenant."""
    return {
        namespace: tenant
        for tenant in ctx.tenants.values()
        for namespace in getattr(tenant.clusters.get(ctx.cluster.name), "namespaces", ())
    }


def queue_tenants(ctx: CheckContext) -> dict[str, list[TenantProfile]]:
    """Each ClusterQueue's tenants: those whose profile lists it for this cluster."""
    out: dict[str, list[TenantProfile]] = {}
    for tenant in ctx.tenants.values():
        for cq in getattr(tenant.clusters.get(ctx.cluster.name), "cluster_queues", ()):
            out.setdefault(cq, []).append(tenant)
    return out


def labels_of(resource: Resource) -> dict[str, str]:
    labels = (resource.body.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def _parts(selector: dict[str, t.Any]) -> tuple[dict[str, t.Any], list[dict[str, t.Any]]]:
    labels = selector.get("matchLabels")
    exprs = selector.get("matchExpressions")
    return (
        labels if isinstance(labels, dict) else {},
        [e for e in exprs if isinstance(e, dict)] if isinstance(exprs, list) else [],
    )


def _values(expr: dict[str, t.Any]) -> list[str]:
    values = expr.get("values")
    return [str(v) for v in values] if isinstance(values, list) else []


def selects(selector: t.Any, labels: dict[str, str]) -> bool:
    """Kubernetes LabelSelector semantics, with Kueue's reading of nil: it selects nothing."""
    if not isinstance(selector, dict):
        return False
    match_labels, exprs = _parts(selector)
    if any(labels.get(str(k)) != str(v) for k, v in match_labels.items()):
        return False
    for expr in exprs:
        key = str(expr.get("key"))
        present, value = key in labels, labels.get(key, "")
        ok = {
            "In": present and value in _values(expr),
            "NotIn": not present or value not in _values(expr),
            "Exists": present,
            "DoesNotExist": not present,
        }.get(str(expr.get("operator")), False)
        if not ok:
            return False
    return True


def requires_label(selector: t.Any, key: str, value: str) -> bool:
    """True when every namespace the selector matches carries `key=value`."""
    if not isinstance(selector, dict):
        return False
    match_labels, exprs = _parts(selector)
    if key in match_labels and str(match_labels[key]) == value:
        return True
    return any(
        expr.get("key") == key
        and expr.get("operator") == "In"
        and _values(expr)
        and all(v == value for v in _values(expr))
        for expr in exprs
    )


@dataclass(frozen=True)
class QuotaEntry:
    """One resource of one flavor in a ClusterQueue's or Cohort's resourceGroups."""

    flavor: str
    resource: str
    fields: dict[str, t.Any]
    path: Path  # of the entry: spec.resourceGroups[g].flavors[f].resources[r]

    def quantity(self, name: str) -> Quantity | None:
        """The parsed value of nominalQuota / borrowingLimit / lendingLimit (None if unset or bad;
        the quantities check reports bad ones)."""
        raw = self.fields.get(name)
        if raw is None:
            return None
        try:
            return parse(raw)
        except QuantityError:
            return None


def quota_entries(resource: Resource) -> t.Iterator[QuotaEntry]:
    groups = spec_of(resource).get("resourceGroups")
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        flavors = group.get("flavors") if isinstance(group, dict) else None
        for f, flavor in enumerate(flavors if isinstance(flavors, list) else []):
            entries = flavor.get("resources") if isinstance(flavor, dict) else None
            for r, entry in enumerate(entries if isinstance(entries, list) else []):
                if isinstance(entry, dict):
                    path = ("spec", "resourceGroups", g, "flavors", f, "resources", r)
                    yield QuotaEntry(str(flavor.get("name")), str(entry.get("name")), entry, path)


def about_profile(
    ctx: CheckContext, tenant: TenantProfile, rule: str, message: str, category: str, path: Path
) -> Finding:
    """A finding located in a tenant's profile file (profiles are not cluster objects)."""
    found, _ = manifests.load_bytes(ctx.repo.tree.read(tenant.file), tenant.file)
    return Finding.about(found[0], rule, message, category, path=path)
