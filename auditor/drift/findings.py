"""The drift findings, one builder per kind of difference: a field modified live, an object
missing live or unmanaged (live only), a kind the cluster does not serve, an object read in
another API version. Each names its rule (auditor/drift/classify.py), the repository file and
line, and for a modified field who changed it (auditor/drift/managed.py).

What counts as unmanaged, so a real cluster's own objects do not flood the report: Kueue's kinds
all of them; PriorityClasses all but the API server's reserved `system-*` ones; Namespaces only
those carrying the admission label; RBAC objects only through the powers they give
(auditor/drift/powers.py).
"""

from __future__ import annotations

import datetime
import logging
import typing as t

from auditor import rules
from auditor.drift import classify, managed, metadata
from auditor.drift.compare import DriftItem, Op, diff, reordered
from auditor.drift.normalize import Normalized, normalize
from auditor.drift.reading import KUEUE_KINDS, LiveSchemas, key_of
from auditor.k8s.objects import Json
from auditor.kueue import KUEUE_GROUP, multikueue, release
from auditor.model import Finding, Resource, Suppression, format_path
from auditor.repo import boundaries
from auditor.repo.profiles import ClusterProfile

RULES = rules.of(__name__)
DRIFT_ADMISSION_LABEL = RULES["drift-admission-label"]
CONTROLLER_OWNED = RULES["drift-controller-owned"]
log = logging.getLogger(__name__)


def kueue_owned(profile: ClusterProfile, desired: t.Sequence[Resource]) -> dict[str, Resource]:
    """The ClusterQueues whose quota Kueue writes on this cluster (MultiKueue quota automation
    on its release and Configuration), each with the MultiKueueConfig that hands it over."""
    config = boundaries.configuration(boundaries.config_map(desired))
    known = release.nearest_release(profile.kueue_version)
    bodies = [r.body for r in desired]
    owned = multikueue.automated(bodies, config, known)
    configs = {
        r.name: r for r in desired if r.kind == "MultiKueueConfig" and r.key.group == KUEUE_GROUP
    }
    managers = multikueue.managers(bodies)
    return {q: configs[managers[q].config] for q in owned}


def modified(
    profile: ClusterProfile,
    resource: Resource,
    live_obj: Json,
    schemas: LiveSchemas,
    readers: metadata.Readers,
    owned: t.Mapping[str, Resource] | None = None,
    want: Normalized | None = None,
) -> list[Finding]:
    """A finding per field that differs; `owned`: the ClusterQueues whose quota Kueue writes
    (kueue_owned), where a difference in that quota is Kueue's, accepted, not drift to heal.
    `want`: the repository object normalized already (with the same schemas; it is changed)."""
    schema = schemas.schema(resource.api_version, resource.kind)
    want = want or normalize(resource.body, schema)
    have = normalize(live_obj, schema)
    dropped = metadata.drop_unread(resource.kind, want.body, have.body, readers)
    if dropped:
        log.debug("%s: %s set live only, read by nothing: not drift", resource.key, dropped)
    # Equal as dicts may still differ in the order of a flavor list.
    items = reordered(want, have) if want.body == have.body else diff(want, have)
    found = [_field(profile, resource, live_obj, item, want) for item in items]
    handed = (owned or {}).get(resource.name) if resource.kind == "ClusterQueue" else None
    if handed is not None and resource.key.group == KUEUE_GROUP:
        for finding, item in zip(found, items, strict=True):
            if multikueue.owns(item.path):
                _to_kueue(finding, handed)
    return found


def _to_kueue(finding: Finding, config: Resource) -> None:
    """A difference in quota Kueue writes: attributed to Kueue, accepted, never counted."""
    who = finding.extra.get("changedBy") or {}
    manager = who.get("manager") or "nobody managedFields names"
    finding.rule = CONTROLLER_OWNED
    last = "" if manager == multikueue.FIELD_MANAGER else f" (last written by {manager})"
    finding.message += (
        f"; Kueue writes this quota (MultiKueue quota automation: MultiKueueConfig "
        f"{config.name} says quotaManagement: Automated), field manager "
        f"{multikueue.FIELD_MANAGER}{last}: not drift to heal"
    )
    line = config.line_of(("spec", "quotaManagement"))
    finding.suppressed = Suppression(
        "Kueue writes a MultiKueue manager's quota", datetime.date.max, f"{config.file}:{line}"
    )


def _field(
    profile: ClusterProfile, resource: Resource, live_obj: Json, item: DriftItem, want: Normalized
) -> Finding:
    who = managed.changed_by(live_obj, item.path)
    repo = f"{item.desired!r}" + ("" if _written(want, item.path) else " (the default)")
    what = {
        Op.CHANGE: f"is {item.live!r} live but {repo} in the repo"
        + ("; Kueue tries them in this order" if item.order else ""),
        Op.ADD: f"is set live ({item.live!r}) but not in the repo",
        Op.REMOVE: f"is {item.desired!r} in the repo but absent live",
    }[item.op]
    by = f"; changed by {who['manager']} at {who['time']}" if who else ""
    finding = Finding.about(
        resource,
        classify.rule(resource.kind, item.path),
        f"{format_path(item.path)} {what}{by}",
        path=item.path,
        cluster=profile.name,
        change="modified",
        desired=item.desired,
        live=item.live,
        extra={"changedBy": who} if who else {},
    )
    finding.file, finding.line, _traced = resource.where(_file_path(resource.body, item.path))
    return finding


def _written(side: Normalized, path: t.Sequence[str | int]) -> bool:
    try:
        side.original(tuple(path))
    except KeyError:
        return False
    return True


def _file_path(body: t.Any, path: t.Sequence[str | int]) -> list[str | int]:
    """`path` with list-map keys (`[a100]`) turned back into the indexes the file has."""
    out: list[str | int] = []
    node = body
    for part in path:
        if isinstance(part, str) and part.startswith("[") and isinstance(node, list):
            wanted = part[1:-1]
            index = next(
                (i for i, v in enumerate(node) if isinstance(v, dict) and _entry(v) == wanted),
                None,
            )
            if index is None:
                break
            out.append(index)
            node = node[index]
            continue
        out.append(part)
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return out


def _entry(item: Json) -> str:
    return str(item.get("name", item.get("type", "")))


def missing(profile: ClusterProfile, resource: Resource) -> Finding:
    return Finding.about(
        resource,
        classify.of_object(resource.api_version, resource.kind, resource.namespace, resource.name),
        f"{resource.key} is in the repo but not on the cluster; Argo CD has not synced it, "
        "or someone deleted it",
        cluster=profile.name,
        change="missing",
    )


def not_served(profile: ClusterProfile, resource: Resource, why: str) -> Finding:
    return Finding.about(
        resource,
        classify.VERSION,
        f"{why}, so {resource.key} cannot exist there: the CRD or API version is missing",
        cluster=profile.name,
        change="missing",
    )


def version_differs(profile: ClusterProfile, resource: Resource, live_version: str) -> Finding:
    return Finding.about(
        resource,
        classify.VERSION,
        f"written as {resource.api_version} but the cluster is read as {live_version}; "
        "fields were not compared",
        cluster=profile.name,
        change="modified",
        desired=resource.api_version,
        live=live_version,
    )


def unmanaged_matters(profile: ClusterProfile, obj: Json) -> bool:
    kind, meta = obj.get("kind"), obj.get("metadata") or {}
    if kind in KUEUE_KINDS:
        return True
    if kind == "PriorityClass":
        return not str(meta.get("name", "")).startswith("system-")
    if kind == "Namespace":
        return profile.admits(meta.get("labels"))
    return False  # RBAC: judged by the powers it gives, below


def unmanaged(profile: ClusterProfile, obj: Json) -> Finding:
    meta, kind = obj.get("metadata") or {}, str(obj.get("kind"))
    key = key_of(obj)
    if kind == "Namespace":
        label = "=".join(profile.admission_label)
        message = (
            f"namespace {key.name} carries the admission label {label} but is not in the repo: "
            "it can admit work nobody approved"
        )
        rule = DRIFT_ADMISSION_LABEL
    else:
        message = f"{key} exists on the cluster but not in the repo; nobody reviewed it"
        rule = classify.rule(kind)
    return Finding(
        rule,
        message,
        cluster=profile.name,
        api_version=obj.get("apiVersion"),
        kind=kind,
        namespace=meta.get("namespace"),
        name=meta.get("name"),
        change="unmanaged",
    )
