"""ClusterQueue and Cohort quotas that Kueue would reject, never use, or the nodes cannot hold.

Mirrors the webhook (limits need a cohort, lendingLimit <= nominalQuota, no repeated flavor or
resource, resources in coveredResources order) so a pull request fails before Argo CD does, and
adds what no server checks: flavors that exist, borrowing limits the rest of the cohort tree can
actually lend (warning), and the sum of a flavor's nominal quotas on a cluster within the capacity
the cluster's profile declares.

Its rules, each with an example that passes and one that fails, are declared beside it in
quotas.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t
from collections import defaultdict

from auditor import rules
from auditor.errors import ConfigError
from auditor.k8s.quantity import ZERO, Quantity, QuantityError
from auditor.kueue import KUEUE_GROUP, capacity, cohorts
from auditor.kueue.quota import (
    BORROWING,
    LENDING,
    LIMITS,
    NOMINAL,
    QUOTA_KINDS,
    cells,
    resource_groups,
)
from auditor.model import MEASURED, Finding, Resource
from auditor.validate.checks import protocol
from auditor.validate.checks._common import named

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
LIMIT_WITHOUT_COHORT = RULES["limit-without-cohort"]
LENDING_OVER_NOMINAL = RULES["lending-over-nominal"]
FLAVOR_MISSING = RULES["flavor-missing"]
FLAVOR_REPEATED = RULES["flavor-repeated"]
RESOURCE_REPEATED = RULES["resource-repeated"]
RESOURCE_ORDER = RULES["resource-order"]
BORROWING_OVER_LENDABLE = RULES["borrowing-over-lendable"]
CAPACITY_EXCEEDED = RULES["capacity-exceeded"]

ID = "quotas"
RERUN = protocol.CLUSTER


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    holders = [r for r in ctx.of_kind(*QUOTA_KINDS) if r.key.group == KUEUE_GROUP]
    flavors = named(ctx, "ResourceFlavor")
    # with a folder unrendered (render-failed), a flavor not found may be one not read
    known = None if ctx.unrendered else set(flavors)
    for holder in holders:
        yield from _shape(holder, known, ctx.cluster.name)
        yield from _limits(holder)
    yield from _borrowing(ctx, holders)
    yield from _capacity(ctx, holders)


def _shape(holder: Resource, flavors: set[str] | None, cluster: str) -> t.Iterator[Finding]:
    seen_flavors: set[str] = set()
    seen_resources: set[str] = set()
    for group in resource_groups(holder.body):
        covered = group.covered
        for c, name in enumerate(covered):
            if name in seen_resources:
                yield Finding.about(
                    holder,
                    RESOURCE_REPEATED,
                    f"resource {name} is covered twice; each resource belongs to one group only",
                    path=[*group.path, "coveredResources", c],
                )
            seen_resources.add(name)
        for f, flavor in enumerate(group.flavors):
            if not isinstance(flavor, dict):
                continue
            path: list[str | int] = [*group.path, "flavors", f]
            name = str(flavor.get("name"))
            if name in seen_flavors:
                yield Finding.about(
                    holder,
                    FLAVOR_REPEATED,
                    f"flavor {name} appears twice; list each flavor once across all groups",
                    path=[*path, "name"],
                )
            seen_flavors.add(name)
            if holder.kind == "ClusterQueue" and flavors is not None and name not in flavors:
                yield Finding.about(
                    holder,
                    FLAVOR_MISSING,
                    f"no ResourceFlavor {name} on {cluster} (known: "
                    f"{', '.join(sorted(flavors)) or 'none'}); the ClusterQueue would be inactive",
                    path=[*path, "name"],
                )
            listed = [
                str(r.get("name")) for r in flavor.get("resources") or [] if isinstance(r, dict)
            ]
            if listed != covered:
                yield Finding.about(
                    holder,
                    RESOURCE_ORDER,
                    f"flavor {name} lists resources [{', '.join(listed)}]; they must be "
                    f"coveredResources [{', '.join(covered)}], in that order",
                    path=[*path, "resources"],
                )


def _limits(holder: Resource) -> t.Iterator[Finding]:
    parent_field = cohorts.parent_field(holder.body)
    has_parent = bool(cohorts.parent_of(holder.body))
    for entry in cells(holder.body):
        where = f"{entry.flavor}/{entry.resource}"
        for limit in LIMITS:
            if limit in entry.fields and not has_parent:
                yield Finding.about(
                    holder,
                    LIMIT_WITHOUT_COHORT,
                    f"{limit} of {where} needs spec.{parent_field}: without one there is "
                    "nobody to borrow from or lend to",
                    path=[*entry.path, limit],
                )
        lending = entry.quantity(LENDING)
        # A queue written without a nominalQuota is stored with "0" (Kueue's defaulting webhook,
        # auditor/schemas/validator.py), and its validating webhook judges that.
        nominal = entry.quantity(NOMINAL) if NOMINAL in entry.fields else ZERO
        if holder.kind == "ClusterQueue" and lending and nominal is not None and lending > nominal:
            yield Finding.about(
                holder,
                LENDING_OVER_NOMINAL,
                f"lendingLimit {lending} of {where} is more than its nominalQuota {nominal}",
                path=[*entry.path, LENDING],
            )


def _borrowing(ctx: CheckContext, holders: list[Resource]) -> t.Iterator[Finding]:
    """A borrowingLimit above what every other member of the cohort tree could lend warns
    (an upper bound: no false warnings)."""
    lending = cohorts.Lending.of(h.body for h in holders)
    yield from _cohort_borrowing(holders, lending.forest)
    for cq in holders:
        if cq.kind != "ClusterQueue":
            continue
        for entry in cells(cq.body):
            limit = entry.quantity(BORROWING)
            total = lending.to(cq.body, entry.cell)
            if limit is None or total is None or limit <= total:
                continue
            yield Finding.about(
                cq,
                BORROWING_OVER_LENDABLE,
                f"borrowingLimit {limit} of {entry.flavor}/{entry.resource} is more than the "
                f"rest of cohort {cohorts.cohort_of(cq.body)} can ever lend ({total}); "
                "lower it or raise what the others lend",
                path=[*entry.path, BORROWING],
                extra=_over(limit, total),
            )


def _cohort_borrowing(holders: list[Resource], forest: cohorts.Forest) -> t.Iterator[Finding]:
    """A Cohort's borrowingLimit caps what its subtree borrows from the rest of its tree: above
    what the rest could ever lend it warns too."""
    for cohort in (h for h in holders if h.kind == "Cohort"):
        limits = [(e, q) for e in cells(cohort.body) if (q := e.quantity(BORROWING)) is not None]
        if not limits:
            continue
        tree, subtree = forest.tree_of(cohort.body), forest.below(cohort.name)
        rest = [
            h
            for h in holders
            if forest.tree_of(h.body) == tree
            and (h.name if h.kind == "Cohort" else cohorts.cohort_of(h.body)) not in subtree
        ]
        for entry, limit in limits:
            total = sum(
                (c.lendable(h.kind) for h in rest for c in cells(h.body) if c.cell == entry.cell),
                ZERO,
            )
            if limit > total:
                yield Finding.about(
                    cohort,
                    BORROWING_OVER_LENDABLE,
                    f"borrowingLimit {limit} of {entry.flavor}/{entry.resource} is more than "
                    f"the rest of tree {tree} outside cohort {cohort.name} can ever lend "
                    f"({total}); lower it or raise what the others lend",
                    path=[*entry.path, BORROWING],
                    extra=_over(limit, total),
                )


def _capacity(ctx: CheckContext, holders: list[Resource]) -> t.Iterator[Finding]:
    """The nominal quotas of a flavor on a cluster fit the capacity its profile declares
    (auditor/kueue/capacity.py adds them up, for `plan sweep` too)."""
    profile = ctx.cluster

    def held(flavor: str, resource: str) -> Quantity:
        try:
            return capacity.declared(profile.capacity, flavor, resource)
        except QuantityError as exc:
            raise ConfigError(f"{profile.file}: capacity of {flavor}/{resource}: {exc}") from exc

    for over in capacity.excesses([h.body for h in holders], held):
        index, entry, _ = max(over.parts, key=lambda p: p[2])
        by_holder: dict[str, Quantity] = defaultdict(lambda: ZERO)
        for i, _, nominal in over.parts:
            holder = holders[i]
            name = holder.name if holder.kind == "ClusterQueue" else f"cohort {holder.name}"
            by_holder[name] += nominal
        shares = ", ".join(f"{name} {q}" for name, q in by_holder.items())
        yield Finding.about(
            holders[index],
            CAPACITY_EXCEEDED,
            f"nominal quotas of {over.flavor}/{over.resource} on {profile.name} add up to "
            f"{over.total} ({shares}), more than the {over.held} its profile {profile.file} "
            "declares",
            path=[*entry.path, NOMINAL],
            extra=_over(over.total, over.held),
        )


def _over(value: Quantity, limit: Quantity) -> dict[str, float]:
    """How far `value` is past `limit`: a baseline records it, so the same finding grown worse
    is new (Finding.measured)."""
    return {MEASURED: float((value - limit).value)}
