"""ClusterQueue and Cohort quotas that Kueue would reject, never use, or the nodes cannot hold.

Mirrors the webhook (limits need a cohort, lendingLimit <= nominalQuota, no repeated flavor or
resource, resources in coveredResources order) so a pull request fails before Argo CD does, and
adds what no server checks: flavors that exist, borrowing limits the rest of the cohort tree can
actually lend (warning), and the sum of a flavor's nominal quotas on a cluster within the capacity
the cluster's profile declares.

Passes (clusters/gpu-prod/clusterqueues.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: team-a-cq}
    spec:
      cohortName: ai-shared
      resourceGroups:
        - coveredResources: [cpu, nvidia.com/gpu]
          flavors:
            - name: a100
              resources:
                - {name: cpu, nominalQuota: "64"}
                - {name: nvidia.com/gpu, nominalQuota: "8", lendingLimit: "4"}

Fails (clusters/gpu-prod/clusterqueues.yaml)::

    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: team-a-cq}
    spec:
      resourceGroups:
        - coveredResources: [cpu, nvidia.com/gpu]
          flavors:
            - name: a100
              resources:
                - {name: nvidia.com/gpu, nominalQuota: "8", lendingLimit: "16"}
                - {name: cpu, nominalQuota: "64"}
"""

from __future__ import annotations

import typing as t
from collections import defaultdict

from auditor.errors import ConfigError
from auditor.k8s.quantity import ZERO, Quantity, QuantityError, parse
from auditor.model import Finding, Resource
from auditor.validate.checks._common import KUEUE, QuotaEntry, named, quota_entries, spec_of

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

ID = "quotas"
CATEGORY = "quota"
LEVELS = {
    "limit-without-cohort": "error",
    "lending-over-nominal": "error",
    "flavor-missing": "error",
    "flavor-repeated": "error",
    "resource-repeated": "error",
    "resource-order": "error",
    "borrowing-over-lendable": "warning",
    "capacity-exceeded": "error",
}

Pool = tuple[str, str]  # (flavor, resource)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    holders = [r for r in ctx.of_kind("ClusterQueue", "Cohort") if r.key.group == KUEUE]
    flavors = named(ctx, "ResourceFlavor")
    for holder in holders:
        yield from _shape(holder, set(flavors), ctx.cluster.name)
        yield from _limits(holder)
    yield from _borrowing(ctx, holders)
    yield from _capacity(ctx, holders)


def _shape(holder: Resource, flavors: set[str], cluster: str) -> t.Iterator[Finding]:
    groups = spec_of(holder).get("resourceGroups")
    seen_flavors: set[str] = set()
    seen_resources: set[str] = set()
    for g, group in enumerate(groups if isinstance(groups, list) else []):
        if not isinstance(group, dict):
            continue
        raw = group.get("coveredResources")
        covered = [str(c) for c in raw] if isinstance(raw, list) else []
        for c, name in enumerate(covered):
            if name in seen_resources:
                yield Finding.about(
                    holder,
                    "resource-repeated",
                    f"resource {name} is covered twice; each resource belongs to one group only",
                    CATEGORY,
                    path=["spec", "resourceGroups", g, "coveredResources", c],
                )
            seen_resources.add(name)
        raw_flavors = group.get("flavors")
        for f, flavor in enumerate(raw_flavors if isinstance(raw_flavors, list) else []):
            if not isinstance(flavor, dict):
                continue
            path: list[str | int] = ["spec", "resourceGroups", g, "flavors", f]
            name = str(flavor.get("name"))
            if name in seen_flavors:
                yield Finding.about(
                    holder,
                    "flavor-repeated",
                    f"flavor {name} appears twice; list each flavor once across all groups",
                    CATEGORY,
                    path=[*path, "name"],
                )
            seen_flavors.add(name)
            if holder.kind == "ClusterQueue" and name not in flavors:
                yield Finding.about(
                    holder,
                    "flavor-missing",
                    f"no ResourceFlavor {name} on {cluster} (known: "
                    f"{', '.join(sorted(flavors)) or 'none'}); the ClusterQueue would be inactive",
                    CATEGORY,
                    path=[*path, "name"],
                )
            listed = [
                str(r.get("name")) for r in flavor.get("resources") or [] if isinstance(r, dict)
            ]
            if listed != covered:
                yield Finding.about(
                    holder,
                    "resource-order",
                    f"flavor {name} lists resources [{', '.join(listed)}]; they must be "
                    f"coveredResources [{', '.join(covered)}], in that order",
                    CATEGORY,
                    path=[*path, "resources"],
                )


def _limits(holder: Resource) -> t.Iterator[Finding]:
    parent_field = "cohortName" if holder.kind == "ClusterQueue" else "parentName"
    has_parent = bool(spec_of(holder).get(parent_field))
    for entry in quota_entries(holder):
        where = f"{entry.flavor}/{entry.resource}"
        for limit in ("borrowingLimit", "lendingLimit"):
            if limit in entry.fields and not has_parent:
                yield Finding.about(
                    holder,
                    "limit-without-cohort",
                    f"{limit} of {where} needs spec.{parent_field}: without one there is "
                    "nobody to borrow from or lend to",
                    CATEGORY,
                    path=[*entry.path, limit],
                )
        lending, nominal = entry.quantity("lendingLimit"), entry.quantity("nominalQuota")
        if holder.kind == "ClusterQueue" and lending and nominal and lending > nominal:
            yield Finding.about(
                holder,
                "lending-over-nominal",
                f"lendingLimit {lending} of {where} is more than its nominalQuota {nominal}",
                CATEGORY,
                path=[*entry.path, "lendingLimit"],
            )


def _roots(holders: list[Resource]) -> dict[str, str]:
    """Each cohort name's root in the cohort tree (Cohort objects' parentName; cycles stop)."""
    parent = {
        h.name: str(spec_of(h)["parentName"])
        for h in holders
        if h.kind == "Cohort" and spec_of(h).get("parentName")
    }
    names = set(parent) | set(parent.values())
    names |= {str(spec_of(h).get("cohortName")) for h in holders if h.kind == "ClusterQueue"}
    roots: dict[str, str] = {}
    for name in names:
        seen, here = {name}, name
        while here in parent and parent[here] not in seen:
            here = parent[here]
            seen.add(here)
        roots[name] = here
    return roots


def _lendable(entry: QuotaEntry, kind: str) -> Quantity:
    nominal = entry.quantity("nominalQuota") or ZERO
    lending = entry.quantity("lendingLimit")
    if kind == "Cohort" or lending is None:
        return nominal
    return min(lending, nominal)


def _borrowing(ctx: CheckContext, holders: list[Resource]) -> t.Iterator[Finding]:
    """A borrowingLimit above what every other member of the cohort tree could lend warns.

    Cohort-level limits are ignored, so the estimate is an upper bound: no false warnings."""
    roots = _roots(holders)

    def tree_of(holder: Resource) -> str | None:
        name = holder.name if holder.kind == "Cohort" else spec_of(holder).get("cohortName")
        return roots.get(str(name), str(name)) if name else None

    supply: dict[tuple[str, Pool], Quantity] = defaultdict(lambda: ZERO)
    own: dict[tuple[str, str, str], Quantity] = defaultdict(lambda: ZERO)  # a CQ's own share
    for holder in holders:
        tree = tree_of(holder)
        if tree is not None:
            for entry in quota_entries(holder):
                lendable = _lendable(entry, holder.kind)
                supply[(tree, (entry.flavor, entry.resource))] += lendable
                if holder.kind == "ClusterQueue":
                    own[(holder.name, entry.flavor, entry.resource)] += lendable
    for cq in holders:
        tree = tree_of(cq)
        if cq.kind != "ClusterQueue" or tree is None:
            continue
        for entry in quota_entries(cq):
            limit = entry.quantity("borrowingLimit")
            if limit is None:
                continue
            total = (
                supply[(tree, (entry.flavor, entry.resource))]
                - own[(cq.name, entry.flavor, entry.resource)]
            )
            if limit > total:
                yield Finding.about(
                    cq,
                    "borrowing-over-lendable",
                    f"borrowingLimit {limit} of {entry.flavor}/{entry.resource} is more than the "
                    f"rest of cohort {spec_of(cq).get('cohortName')} can ever lend ({total}); "
                    "lower it or raise what the others lend",
                    CATEGORY,
                    path=[*entry.path, "borrowingLimit"],
                )


def _capacity(ctx: CheckContext, holders: list[Resource]) -> t.Iterator[Finding]:
    """The nominal quotas of a flavor on a cluster fit its capacity (a Cohort's own quota is a
    pool added to its members', so it counts too)."""
    used: dict[Pool, list[tuple[Resource, QuotaEntry, Quantity]]] = defaultdict(list)
    for cq in holders:
        for entry in quota_entries(cq):
            nominal = entry.quantity("nominalQuota")
            if nominal is not None and nominal > ZERO:
                used[(entry.flavor, entry.resource)].append((cq, entry, nominal))
    profile = ctx.cluster
    for (flavor, resource), parts in used.items():
        declared = _declared(profile.capacity, flavor, resource, profile.file)
        total = sum((q for _, _, q in parts), ZERO)
        if total <= declared:
            continue
        cq, entry, _ = max(parts, key=lambda p: p[2])
        by_holder: dict[str, Quantity] = defaultdict(lambda: ZERO)
        for holder, _, nominal in parts:
            name = holder.name if holder.kind == "ClusterQueue" else f"cohort {holder.name}"
            by_holder[name] += nominal
        shares = ", ".join(f"{name} {q}" for name, q in by_holder.items())
        yield Finding.about(
            cq,
            "capacity-exceeded",
            f"nominal quotas of {flavor}/{resource} on {profile.name} add up to {total} "
            f"({shares}), more than the {declared} its profile {profile.file} declares",
            CATEGORY,
            path=[*entry.path, "nominalQuota"],
        )


def _declared(
    capacity: dict[str, dict[str, t.Any]], flavor: str, resource: str, file: str
) -> Quantity:
    raw = (capacity.get(flavor) or {}).get(resource)
    if raw is None:
        return ZERO
    try:
        return parse(raw)
    except QuantityError as exc:
        raise ConfigError(f"{file}: capacity of {flavor}/{resource}: {exc}") from exc
