"""The cohort trees a change touches, as a mermaid flowchart for the plan's PR comment.

Each tree the change reaches is drawn whole: its cohorts, and under them every ClusterQueue. A
queue or cohort the change touches lists its quota per flavor and resource, nominal, borrowing
and lending limit, `before → after` where they differ; the others show their name only. An
object added or removed says so; a move to another cohort draws the old edge dotted.
"""

from __future__ import annotations

import hashlib
import re
import typing as t

from auditor.k8s.objects import Json
from auditor.kueue import cohorts, quota

if t.TYPE_CHECKING:
    from auditor.plan.model import ClusterPlan

TREE_KINDS = ("ClusterQueue", "Cohort")
FIELDS = (("nominal", quota.NOMINAL), ("borrowing", quota.BORROWING), ("lending", quota.LENDING))
MAX_NODES = 60  # past this a diagram stops helping; the tables say the rest


def _objects(side: t.Any) -> dict[tuple[str, str], Json]:
    return {(k.kind, k.name): r.body for k, r in side.objects.items() if k.kind in TREE_KINDS}


def _id(kind: str, name: str) -> str:
    digest = hashlib.sha1(f"{kind}/{name}".encode()).hexdigest()[:6]
    return f"{kind[:2].lower()}_{re.sub(r'[^A-Za-z0-9]', '_', name)}_{digest}"


def _value(fields: Json | None, key: str) -> str:
    found = (fields or {}).get(key)
    return "—" if found is None else str(found)


def _cells(before: Json | None, after: Json | None) -> list[str]:
    """One line per quota cell whose fields differ between the two versions."""
    old = quota.table(before) if before else {}
    new = quota.table(after) if after else {}
    lines = []
    for cell in sorted(set(old) | set(new)):
        a = old[cell].fields if cell in old else None
        b = new[cell].fields if cell in new else None
        if a == b:
            continue
        parts = []
        for label, key in FIELDS:
            x, y = _value(a, key), _value(b, key)
            if x == y == "—":
                continue
            parts.append(f"{label} {x}" if x == y else f"{label} {x} → {y}")
        lines.append(f"{cell[0]} {cell[1]}: {' · '.join(parts)}")
    return lines


def _label(text: str) -> str:
    return '"' + text.replace('"', "#quot;") + '"'


def diagram(cluster: ClusterPlan) -> str | None:
    """The mermaid flowchart of the trees `cluster`'s quota and cohort changes touch (None:
    no such change, or too large a tree to draw)."""
    base, head = _objects(cluster.base), _objects(cluster.head)
    touched = {
        (c.key.kind, c.key.name)
        for c in cluster.changes
        if c.category in ("quota", "cohort") and c.key.kind in TREE_KINDS
    }
    if not touched:
        return None
    forests = {"base": cohorts.Forest.of(base.values()), "head": cohorts.Forest.of(head.values())}
    sides = {"base": base, "head": head}

    def roots(key: tuple[str, str]) -> set[str]:
        out = set()
        for side, objs in sides.items():
            if key in objs:
                found = forests[side].tree_of(objs[key])
                out.add(found or f"{key[0]}/{key[1]}")  # a queue in no cohort: a tree alone
        return out

    wanted = set().union(*(roots(k) for k in touched))
    nodes = sorted(k for k in set(base) | set(head) if roots(k) & wanted)
    if len(nodes) > MAX_NODES:
        return None
    lines = ["flowchart TD"]
    styled: dict[str, list[str]] = {"changed": [], "added": [], "removed": []}
    for kind, name in nodes:
        key = (kind, name)
        node = _id(kind, name)
        state = "added" if key not in base else "removed" if key not in head else None
        title = f"{kind} {name}" + (f" ({state})" if state else "")
        detail = _cells(base.get(key), head.get(key)) if key in touched else []
        lines.append(f"  {node}[{_label('<br/>'.join([title, *detail]))}]")
        if state:
            styled[state].append(node)
        elif key in touched:
            styled["changed"].append(node)
    for kind, name in nodes:
        now = cohorts.parent_of(head[(kind, name)]) if (kind, name) in head else None
        was = cohorts.parent_of(base[(kind, name)]) if (kind, name) in base else None
        child = _id(kind, name)
        if now:
            lines.append(f"  {_id('Cohort', now)} --> {child}")
        if was and was != now:
            lines.append(f"  {_id('Cohort', was)} -. before .-> {child}")
    drawn = {n for k, n in nodes if k == "Cohort"}
    for parent in sorted({p for k in nodes for p in _parents(k, sides)} - drawn):
        lines.append(f"  {_id('Cohort', parent)}[{_label(f'Cohort {parent} (no object)')}]")
    lines += [
        "  classDef changed fill:#fff4ce,stroke:#9a6700",
        "  classDef added fill:#dafbe1,stroke:#1a7f37",
        "  classDef removed fill:#ffebe9,stroke:#cf222e,stroke-dasharray: 4 2",
    ]
    lines += [f"  class {','.join(ids)} {state}" for state, ids in styled.items() if ids]
    return "\n".join(lines) + "\n"


def _parents(key: tuple[str, str], sides: dict[str, dict[tuple[str, str], Json]]) -> set[str]:
    """The cohorts `key` names as its parent on either side (they may have no object)."""
    found = {cohorts.parent_of(objs[key]) for objs in sides.values() if key in objs}
    return {p for p in found if p}
