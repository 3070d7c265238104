"""Cohort trees: who is whose parent, and what the rest of a tree can lend a ClusterQueue.

A ClusterQueue joins a cohort by spec.cohortName (spec.cohort in v1beta1); a Cohort hangs below
another by spec.parentName (spec.parent in v1alpha1). Each version has its own spelling: a
v1beta1 name in a v1beta2 object is an unknown field, not a cohort. Members of one tree share
unused quota, so the root names the tree. A cycle (which Kueue refuses to activate) stops the
walk where it repeats.

Kueue's accounting, which Lending and Pool follow: a ClusterQueue keeps its nominal quota less
its lendingLimit for itself and lends the rest to its cohort; a Cohort's own quota is lent to
everything below it. What a member uses beyond what it keeps is drawn from the cohort's pool.
"""

from __future__ import annotations

import typing as t
from collections import defaultdict
from dataclasses import dataclass, field

from auditor.k8s.objects import KUEUE_GROUP, Json
from auditor.k8s.quantity import ZERO, Quantity
from auditor.kueue.quota import LENDING, NOMINAL, Cell, QuotaCell, cell_of, cells

# What a ClusterQueue holds of a cell right now (from its status, or its Workloads).
Usage = t.Callable[[Json, Cell], Quantity]


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


def in_version(obj: Json, version: str) -> Json:
    """`obj` (a ClusterQueue or Cohort, or any Kueue object) as written in `version`: only the
    parent field's spelling differs between the versions these kinds have been served in."""
    moved = {**obj, "apiVersion": f"{KUEUE_GROUP}/{version}"}
    spec = dict(_spec(obj))
    before, after = parent_field(obj), parent_field(moved)
    if before != after and before in spec:
        spec[after] = spec.pop(before)
    if "spec" in obj:
        moved["spec"] = spec
    return moved


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

    def below(self, cohort: str) -> set[str]:
        """The cohorts of `cohort`'s subtree, itself included."""
        return {c for c in self.roots if cohort in self.ancestry(c)}

    def ancestry(self, cohort: str) -> list[str]:
        """A cohort and its parents up to the root (a cycle stops where it repeats)."""
        chain = [cohort]
        while chain[-1] in self.parents and self.parents[chain[-1]] not in chain:
            chain.append(self.parents[chain[-1]])
        return chain

    def cycles(self) -> list[tuple[str, ...]]:
        """Each loop of parent links once, from its alphabetically first cohort."""
        found: set[tuple[str, ...]] = set()
        for cohort in self.parents:
            chain = self.ancestry(cohort)
            closing = self.parents.get(chain[-1])
            if closing in chain:
                loop = chain[chain.index(closing) :]
                first = loop.index(min(loop))
                found.add((*loop[first:], *loop[:first]))
        return sorted(found)


def _drawn(cell: QuotaCell, held: Quantity) -> Quantity:
    """What a ClusterQueue holding `held` of a cell draws from its cohort's pool."""
    kept = (cell.quantity(NOMINAL) or ZERO) - cell.lendable("ClusterQueue")
    return max(held - kept, ZERO)


@dataclass
class Lending:
    """What each tree can lend of each cell: at most (quota alone), or now (less what its
    members draw from it)."""

    forest: Forest
    supply: dict[tuple[str, Cell], Quantity]  # (tree, cell) -> what all its members lend
    own: dict[tuple[str, Cell], Quantity]  # (ClusterQueue, cell) -> its share of that

    @classmethod
    def of(cls, objs: t.Iterable[Json], used: Usage | None = None) -> Lending:
        """With `used`, each ClusterQueue's share is less what it draws from the pool now (a
        borrower's share is negative), so the tree's supply is what is free in it."""
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
                if used is not None and kind == "ClusterQueue":
                    lendable -= _drawn(cell, used(obj, cell.cell))
                supply[(tree, cell.cell)] += lendable
                if kind == "ClusterQueue":
                    own[(_name(obj), cell.cell)] += lendable
        return cls(forest, supply, own)

    def to(self, cq: Json, cell: Cell) -> Quantity | None:
        """What the rest of a ClusterQueue's tree could lend it (None outside a cohort).

        Cohort-level limits are ignored, so this is an upper bound."""
        tree = self.forest.tree_of(cq)
        if tree is None:
            return None
        rest = self.supply.get((tree, cell), ZERO) - self.own.get((_name(cq), cell), ZERO)
        return max(rest, ZERO)


@dataclass(frozen=True)
class Pool:
    """One cell of a cohort's subtree: what it can share, and what its members draw from it."""

    quota: Quantity  # the cohort's own quota plus what each member below lends up
    drawn: Quantity  # what members use beyond what they keep for themselves
    borrowers: tuple[str, ...]  # ClusterQueues below it using more than their nominal quota

    @property
    def over(self) -> Quantity:
        """What the members draw beyond the pool: borrowed from above it, or to be reclaimed."""
        return max(self.drawn - self.quota, ZERO)


def pool(objs: t.Iterable[Json], cohort: str, cell: Cell, used: Usage) -> Pool:
    """The pool of `cohort`'s subtree for one cell; a child Cohort's lendingLimit caps what
    its own subtree lends up. A cohort named by members but with no object holds nothing."""
    children: dict[str, list[Json]] = defaultdict(list)
    own: dict[str, Json] = {}
    for obj in objs:
        if obj.get("kind") == "Cohort":
            own[_name(obj)] = obj
        if parent := parent_of(obj):
            children[parent].append(obj)

    def walk(name: str, seen: frozenset[str]) -> Pool:
        entry = cell_of(own.get(name) or {}, *cell)
        quota = (entry.quantity(NOMINAL) if entry else None) or ZERO
        drawn, borrowers = ZERO, []
        for child in children[name]:
            entry = cell_of(child, *cell)
            if child.get("kind") == "ClusterQueue":
                held = used(child, cell)
                nominal = (entry.quantity(NOMINAL) if entry else None) or ZERO
                lent = entry.lendable("ClusterQueue") if entry else ZERO
                if held > nominal:
                    borrowers.append(_name(child))
            elif _name(child) not in seen:  # a cycle stops here
                below = walk(_name(child), seen | {_name(child)})
                held, nominal = below.drawn, below.quota
                limit = entry.quantity(LENDING) if entry else None
                lent = nominal if limit is None else min(limit, nominal)
                borrowers += below.borrowers
            else:
                continue
            quota += lent
            drawn += max(held - (nominal - lent), ZERO)
        return Pool(quota, drawn, tuple(borrowers))

    return walk(cohort, frozenset({cohort}))
