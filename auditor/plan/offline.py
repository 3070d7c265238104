"""What a change between two revisions does to each cluster, in cluster terms.

Per cluster: quota deltas per ClusterQueue (and Cohort), flavor and resource, compared by value;
cohort moves; namespaces that gain or lose admission; effective RBAC powers gained or lost (the
powers auditor.k8s.rbac watches, through the repo's roles and bindings); objects added, removed or
changed.
plan/live.py then weighs the risky ones against live usage.
"""

from __future__ import annotations

import typing as t

from auditor.k8s import rbac as k8s_rbac
from auditor.k8s.objects import RBAC_GROUP, RBAC_KINDS, ResourceKey
from auditor.k8s.quantity import is_binary, shown, value_of
from auditor.kueue import cohorts
from auditor.kueue.quota import (
    NOMINAL,
    QUANTITY_FIELDS,
    QUOTA_FIELDS,
    QUOTA_KINDS,
    QuotaCell,
    table,
)
from auditor.model import ClusterResult, Report, Resource, format_path
from auditor.plan import immutable, removals
from auditor.plan.model import Change, ClusterPlan, ClusterRevision, Plan
from auditor.repo.layout import Loaded, Repository
from auditor.repo.profiles import ClusterProfile

# Fields with a section of their own; the generic "changed" list leaves them out.
_COVERED = {
    "ClusterQueue": ("spec.resourceGroups", "spec.cohortName", "spec.cohort"),
    "Cohort": ("spec.resourceGroups", "spec.parentName"),
}


# -- building the plan ----------------------------------------------------------------------


def build(base: Repository, head: Repository, clusters: t.Sequence[str] = ()) -> Plan:
    """Compare two revisions, cluster by cluster (all clusters of either when none are named)."""
    names = sorted(set(base.clusters) | set(head.clusters))
    if clusters:
        for name in clusters:
            if name not in names:
                head.cluster(name)  # raises the ConfigError that lists the known clusters
        names = [n for n in names if n in clusters]
    base_loaded, head_loaded = _load(base, names), _load(head, names)
    report = Report(
        "plan", findings=list(head_loaded.findings), clusters=[ClusterResult(n) for n in names]
    )
    plans = []
    for name in names:
        plan = ClusterPlan(
            name,
            ClusterRevision(base.clusters.get(name), _by_key(base_loaded.for_cluster(name))),
            ClusterRevision(head.clusters.get(name), _by_key(head_loaded.for_cluster(name))),
        )
        plan.changes = list(_changes(plan))
        report.findings.extend(immutable.findings(plan, head))
        report.findings.extend(removals.findings(plan))
        plans.append(plan)
    return Plan(base.label, head.label, plans, report)


def _load(repo: Repository, names: list[str]) -> Loaded:
    present = [n for n in names if n in repo.clusters]
    return repo.load(present) if present else Loaded()


def _by_key(resources: list[Resource]) -> dict[ResourceKey, Resource]:
    return {r.key: r for r in resources}


def _changes(plan: ClusterPlan) -> t.Iterator[Change]:
    base, head = plan.base.objects, plan.head.objects
    for key in sorted(base.keys() | head.keys()):
        old, new = base.get(key), head.get(key)
        if key.kind in QUOTA_KINDS:
            yield from _quota_changes(plan.name, key, old, new)
        if key.kind in QUOTA_KINDS and old and new:
            yield from _cohort_move(plan.name, key, old, new)
        if key.kind == "Namespace":
            yield from _admission(plan, key, old, new)
        yield from _object_change(plan, key, old, new)
    yield from _rbac_changes(plan)


def _object_change(
    plan: ClusterPlan, key: ResourceKey, old: Resource | None, new: Resource | None
) -> t.Iterator[Change]:
    cluster = plan.name
    if old is None and new is not None:
        yield Change(
            cluster, "object", "added", key, f"{key} is added", file=new.file, line=new.line
        )
    elif new is None and old is not None:
        yield Change(
            cluster, "object", "removed", key, f"{key} is removed", file=old.file, line=old.line
        )
    elif old is not None and new is not None:
        covered = _COVERED.get(key.kind, ())
        if key.kind == "Namespace":  # the admission label has a section of its own
            covered = (format_path(("metadata", "labels", plan.profile.admission_label[0])),)
        paths = [
            p
            for p in _diff_paths(old.body, new.body)
            if not any(p == c or p.startswith((c + ".", c + "[")) for c in covered)
        ]
        if paths:
            yield Change(
                cluster,
                "object",
                "changed",
                key,
                f"{key} changes {', '.join(paths)}",
                path=", ".join(paths),
                file=new.file,
                line=new.line,
            )


def _diff_paths(old: t.Any, new: t.Any, path: tuple[str | int, ...] = ()) -> list[str]:
    """The paths where two bodies differ: down through mappings, lists as a whole, a Quantity
    by value (a fairSharing.weight of 0.5 is 500m)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for k in sorted(old.keys() | new.keys(), key=str):
            out += _diff_paths(old.get(k), new.get(k), (*path, str(k)))
        return out
    if path and path[-1] in QUANTITY_FIELDS and _same(old, new):
        return []
    return [] if old == new else [format_path(path)]


# -- quota ----------------------------------------------------------------------------------


def _quota_changes(
    cluster: str, key: ResourceKey, old: Resource | None, new: Resource | None
) -> t.Iterator[Change]:
    before = table(old.body) if old else {}
    after = table(new.body) if new else {}
    for cell in sorted(before.keys() | after.keys()):
        flavor, resource = cell
        for name in QUOTA_FIELDS:
            if name != NOMINAL and not (cell in before and cell in after):
                continue  # the limits of a cell that appears or goes go with its nominal quota
            was = before[cell].fields.get(name) if cell in before else None
            now = after[cell].fields.get(name) if cell in after else None
            located: QuotaCell = after.get(cell) or before[cell]
            at, path = (*located.path, name), f"{located.shown}.{name}"
            if _same(was, now):
                continue
            where = new if cell in after and new is not None else old
            assert where is not None
            action, delta = _direction(name, was, now)
            yield Change(
                cluster,
                "quota",
                action,
                key,
                f"{key.kind} {key.name}: {flavor} {resource} {name} "
                f"{_text(name, was)} → {_text(name, now)}" + (f" ({delta})" if delta else ""),
                path=path,
                before=was,
                after=now,
                delta=delta,
                file=where.where(at)[0],
                line=where.where(at)[1],
                cell=cell,
            )


def _same(a: t.Any, b: t.Any) -> bool:
    if a is None or b is None:
        return a is b
    try:
        return value_of(a) == value_of(b)
    except ValueError:
        return bool(a == b)


def _text(name: str, value: t.Any) -> str:
    if value is None:
        return "none" if name == NOMINAL else "unlimited"
    return str(value)


def _direction(name: str, was: t.Any, now: t.Any) -> tuple[str, str | None]:
    """Whether the queue may use more or less, and by how much when both values are set."""
    if name == NOMINAL:  # a nominal quota that appears or goes counts from zero
        was, now = was if was is not None else 0, now if now is not None else 0
    elif was is None or now is None:  # an unlimited limit that gets a value restricts
        return ("increased" if now is None else "decreased"), None
    try:
        diff = value_of(now) - value_of(was)
    except ValueError:
        return "changed", None
    binary = is_binary(was, now)
    sign = "+" if diff > 0 else "-" if diff < 0 else "±"
    return ("increased" if diff > 0 else "decreased"), sign + shown(abs(diff), binary=binary)


# -- cohorts and admission ------------------------------------------------------------------


def _cohort_move(
    cluster: str, key: ResourceKey, old: Resource, new: Resource
) -> t.Iterator[Change]:
    was, now = cohorts.parent_of(old.body), cohorts.parent_of(new.body)
    if was == now:
        return
    field_name = cohorts.parent_field(new.body)
    what = "cohort" if key.kind == "ClusterQueue" else "parent cohort"
    yield Change(
        cluster,
        "cohort",
        "changed",
        key,
        f"{key.kind} {key.name} moves from {what} {was or '(none)'} to {now or '(none)'}",
        path=f"spec.{field_name}",
        before=was,
        after=now,
        file=new.where(("spec", field_name))[0],
        line=new.where(("spec", field_name))[1],
    )


def admits(namespace: Resource | None, profile: ClusterProfile | None) -> bool:
    if namespace is None or profile is None:
        return False
    return profile.admits((namespace.body.get("metadata") or {}).get("labels"))


def _admission(
    plan: ClusterPlan, key: ResourceKey, old: Resource | None, new: Resource | None
) -> t.Iterator[Change]:
    was, now = admits(old, plan.base.profile), admits(new, plan.head.profile)
    if was == now:
        return
    label, value = plan.profile.admission_label
    where = new or old
    assert where is not None
    why = "is removed" if new is None else f"{'gets' if now else 'loses'} {label}={value}"
    yield Change(
        plan.name,
        "admission",
        "gains" if now else "loses",
        key,
        f"namespace {key.name} {'gains' if now else 'loses'} admission to Kueue ({why})",
        path=f"metadata.labels[{label}]",
        before=was,
        after=now,
        file=where.where(("metadata", "labels", label))[0],
        line=where.where(("metadata", "labels", label))[1],
    )


# -- RBAC powers ----------------------------------------------------------------------------


def _held(side: ClusterRevision) -> dict[tuple[k8s_rbac.Subject, k8s_rbac.Power], k8s_rbac.Grant]:
    bodies = [r.body for r in side.objects.values() if r.kind in RBAC_KINDS]
    held: dict[tuple[k8s_rbac.Subject, k8s_rbac.Power], k8s_rbac.Grant] = {}
    for grant in k8s_rbac.grants(bodies):
        held.setdefault((grant.subject, grant.power), grant)
    return held


def _rbac_changes(plan: ClusterPlan) -> t.Iterator[Change]:
    before, after = _held(plan.base), _held(plan.head)
    for action, held, other, side in (
        ("gains", after, before, plan.head),
        ("loses", before, after, plan.base),
    ):
        # A power is gained only if no power held before covers it (cluster-wide, any name).
        for pair in sorted(p for p in held if not k8s_rbac.within(other, *p)):
            grant = held[pair]
            meta = grant.binding.body.get("metadata") or {}
            key = ResourceKey(
                RBAC_GROUP,
                str(grant.binding.body.get("kind")),
                meta.get("namespace"),
                str(meta.get("name")),
            )
            where = side.objects.get(key)
            yield Change(
                plan.name,
                "rbac",
                action,
                key,
                f"{grant.subject} {action} {grant.power} (through {grant.path})",
                path=str(grant.power),
                before=action == "loses",
                after=action == "gains",
                file=where.file if where else None,
                line=where.line if where else None,
            )
