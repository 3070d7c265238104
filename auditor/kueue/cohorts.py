"""Cohort trees: who is whose parent, and what the rest of a tree can lend a ClusterQueue.

A ClusterQueue joins a cohort by spec.cohortName (spec.cohort in v1beta1); a Cohort hangs below
another by spec.parentName (spec.parent in v1alpha1). Each version has its own spelling: a
v1beta1 name in a v1beta2 object is an unknown field, not a cohort. Members of one tree share
unused quota, so the root names the tree. A cycle (which Kueue refuses to activate) stops the
walk where it repeats.
"""

from __future__ import annotations

import typing as t
from collections import defaultdict
from dataclasses import dataclass, field

from auditor.k8s.objects import Json
from auditor.k8s.quantity import ZERO, Quantity
from auditor.kueue.quota import Cell, cells


def _spec(obj: Json) -> Json:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _name(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


# The versions that spell the parent field differently from the newest ones.
_OLD_SPELLING = {("ClusterQueue", "v1beta1"): "cohort", ("Cohort", "v1alpha1"): "parent"}


def parent_field(obj: Json) -> str:
    """The spec field that names a ClusterQueue's cohort or a Cohort's parent, in its version."""
    kind = str(obj.get("kind"))
    version = str(obj.get("apiVersion", "")).rpartition("/")[2]
    newest = "cohortName" if kind == "ClusterQueue" else "parentName"
    return _OLD_SPELLING.get((kind, version), newest)


def parent_of(obj: Json) -> str | None:
    """A ClusterQueue's cohort, or a Cohort's parent cohort."""
    found = _spec(obj).get(parent_field(obj))
    return str(found) if found else None


def cohort_of(cq: Json) -> str | None:
    """The cohort a ClusterQueue belongs to."""
    return parent_of({**cq, "kind": "ClusterQueue"})


@dataclass
class Forest:
    """The cohort trees that a set of ClusterQueues and Cohorts form."""

    parents: dict[str, str] = field(default_factory=dict)  # cohort -> its parent cohort
    roots: dict[str, str] = field(default_factory=dict)  # cohort -> the root of its tree

    @classmethod
    def of(cls, objs: t.Iterable[Json]) -> Forest:
        objs = list(objs)
        parents: dict[str, str] = {}
        for obj in objs:
            parent = parent_of(obj) if obj.get("kind") == "Cohort" else None
            if parent:
                parents[_name(obj)] = parent
        names = set(parents) | set(parents.values())
        names |= {c for o in objs if o.get("kind") == "ClusterQueue" if (c := cohort_of(o))}
        roots: dict[str, str] = {}
        for name in names:
            seen, here = {name}, name
            while here in parents and parents[here] not in seen:
                here = parents[here]
                seen.add(here)
            roots[name] = here
        return cls(parents, roots)

    def root(self, cohort: str) -> str:
        return self.roots.get(cohort, cohort)

    def tree_of(self, obj: Json) -> str | None:
        """The root of the tree a Cohort or ClusterQueue is in (None: a ClusterQueue alone)."""
        name = _name(obj) if obj.get("kind") == "Cohort" else cohort_of(obj)
        return self.root(name) if name else None


@dataclass
class Lending:
    """What each tree can lend of each cell at most (quota, not live usage)."""

    forest: Forest
    supply: dict[tuple[str, Cell], Quantity]  # (tree, cell) -> what all its members lend
    own: dict[tuple[str, Cell], Quantity]  # (ClusterQueue, cell) -> its share of that

    @classmethod
    def of(cls, objs: t.Iterable[Json]) -> Lending:
        objs = list(objs)
        forest = Forest.of(objs)
        supply: dict[tuple[str, Cell], Quantity] = defaultdict(lambda: ZERO)
        own: dict[tuple[str, Cell], Quantity] = defaultdict(lambda: ZERO)
        for obj in objs:
            tree = forest.tree_of(obj)
            if tree is None:
                continue
            kind = str(obj.get("kind"))
            for cell in cells(obj):
                lendable = cell.lendable(kind)
                supply[(tree, cell.cell)] += lendable
                if kind == "ClusterQueue":
                    own[(_name(obj), cell.cell)] += lendable
        return cls(forest, supply, own)

    def to(self, cq: Json, cell: Cell) -> Quantity | None:
        """What the rest of a ClusterQueue's tree could ever lend it (None outside a cohort).

        Cohort-level limits are ignored, so this is an upper bound."""
        tree = self.forest.tree_of(cq)
        if tree is None:
            return None
        return self.supply.get((tree, cell), ZERO) - self.own.get((_name(cq), cell), ZERO)
