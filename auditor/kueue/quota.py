"""Quota cells: one resource of one flavor in a ClusterQueue's or Cohort's resourceGroups.

A cell holds nominalQuota, borrowingLimit and lendingLimit as written in the spec, with the path
of its entry (spec.resourceGroups[g].flavors[f].resources[r]) so a finding can point at the
line. Usage cells are the same (flavor, resource) pairs in status.flavorsReservation (what
admitted and reserving Workloads hold) or status.flavorsUsage (what admitted ones use).
Objects are read defensively: the walk never fails on a malformed spec, it skips what is no cell.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.k8s.objects import FieldPath, Json
from auditor.k8s.quantity import ZERO, Quantity, QuantityError, parse

NOMINAL = "nominalQuota"
BORROWING = "borrowingLimit"
LENDING = "lendingLimit"
QUOTA_FIELDS = (NOMINAL, BORROWING, LENDING)
WEIGHT = "weight"  # spec.fairSharing.weight of a ClusterQueue, Cohort or LocalQueue
# The Kueue fields that are Quantities: `0.5` and `500m` are one value (the server stores 500m).
QUANTITY_FIELDS = frozenset({*QUOTA_FIELDS, WEIGHT})
LIMITS = (BORROWING, LENDING)
QUOTA_KINDS = ("ClusterQueue", "Cohort")
RESERVATION = "flavorsReservation"
USAGE = "flavorsUsage"
STATUS_FIELDS = (RESERVATION, USAGE)

# Kueue tries a resource group's flavors in list order (the first that fits wins), so their
# order is meaning although the CRD keys them by name. resourceGroups (atomic) and a Topology's
# levels (atomic, top level first) are read in order too, and compared by position anyway.
ORDERED_FLAVORS = ("spec", "resourceGroups", "*", "flavors")

Cell = tuple[str, str]  # (flavor, resource)


def _list(value: t.Any) -> list[t.Any]:
    return value if isinstance(value, list) else []


def _dict(value: t.Any) -> Json:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class ResourceGroup:
    """One entry of spec.resourceGroups: its covered resources and its flavors as written."""

    index: int
    covered: list[str]
    flavors: list[t.Any]  # entries as written (a malformed one may be no mapping)

    @property
    def path(self) -> FieldPath:
        return ("spec", "resourceGroups", self.index)


@dataclass(frozen=True)
class QuotaCell:
    """One resource of one flavor: its quota fields as written, and where it stands."""

    flavor: str
    resource: str
    fields: Json
    path: FieldPath  # of the entry: spec.resourceGroups[g].flavors[f].resources[r]

    @property
    def cell(self) -> Cell:
        return (self.flavor, self.resource)

    @property
    def shown(self) -> str:
        """The entry's path for people, flavor and resource by name."""
        return (
            f"spec.resourceGroups[{self.path[2]}].flavors[{self.flavor}].resources[{self.resource}]"
        )

    def quantity(self, name: str) -> Quantity | None:
        """The parsed value of a quota field (None if unset or no quantity: the quantities
        check reports those)."""
        raw = self.fields.get(name)
        if raw is None:
            return None
        try:
            return parse(raw)
        except QuantityError:
            return None

    def quantities(self) -> dict[str, Quantity]:
        """The quota fields that are set, parsed."""
        found = {name: self.quantity(name) for name in QUOTA_FIELDS}
        return {name: q for name, q in found.items() if q is not None}

    def lendable(self, kind: str) -> Quantity:
        """What this cell can lend to its cohort: a ClusterQueue's lendingLimit caps its
        nominal quota; a Cohort lends all of its own quota."""
        nominal = self.quantity(NOMINAL) or ZERO
        lending = self.quantity(LENDING)
        if kind == "Cohort" or lending is None:
            return nominal
        return min(lending, nominal)


def resource_groups(obj: Json) -> t.Iterator[ResourceGroup]:
    """The resource groups of a ClusterQueue or Cohort (a body, as written or as read live)."""
    for g, group in enumerate(_list(_dict(obj.get("spec")).get("resourceGroups"))):
        if isinstance(group, dict):
            covered = [str(c) for c in _list(group.get("coveredResources"))]
            yield ResourceGroup(g, covered, _list(group.get("flavors")))


def cells(obj: Json) -> t.Iterator[QuotaCell]:
    """Every quota cell of a ClusterQueue or Cohort, in the order written."""
    for group in resource_groups(obj):
        for f, flavor in enumerate(group.flavors):
            if not isinstance(flavor, dict):
                continue
            for r, entry in enumerate(_list(flavor.get("resources"))):
                if isinstance(entry, dict):
                    path = (*group.path, "flavors", f, "resources", r)
                    yield QuotaCell(str(flavor.get("name")), str(entry.get("name")), entry, path)


def table(obj: Json) -> dict[Cell, QuotaCell]:
    """The cells by (flavor, resource); a repeated pair keeps its last entry, as a map would."""
    return {c.cell: c for c in cells(obj)}


def cell_of(obj: Json, flavor: str, resource: str) -> QuotaCell | None:
    return next((c for c in cells(obj) if c.cell == (flavor, resource)), None)


@dataclass(frozen=True)
class UsageCell:
    """One (flavor, resource) of a status list: total, and borrowed where Kueue reports it."""

    flavor: str
    resource: str
    fields: Json
    path: FieldPath  # status.<field>[f].resources[r]

    def quantity(self, name: str = "total") -> Quantity:
        raw = self.fields.get(name)
        return parse(raw) if raw not in (None, "") else ZERO


def usage_cells(obj: Json, status_field: str = RESERVATION) -> t.Iterator[UsageCell]:
    """The cells of a ClusterQueue's (or Cohort's) status.flavorsReservation or flavorsUsage."""
    for f, flavor in enumerate(_list(_dict(obj.get("status")).get(status_field))):
        if not isinstance(flavor, dict):
            continue
        for r, entry in enumerate(_list(flavor.get("resources"))):
            if isinstance(entry, dict):
                path = ("status", status_field, f, "resources", r)
                yield UsageCell(str(flavor.get("name")), str(entry.get("name")), entry, path)


def used(obj: Json, cell: Cell, status_field: str = RESERVATION, key: str = "total") -> Quantity:
    """`key` (total or borrowed) of one cell in a status list; zero when the cell is absent."""
    for found in usage_cells(obj, status_field):
        if (found.flavor, found.resource) == cell:
            return found.quantity(key)
    return ZERO
