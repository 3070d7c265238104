"""Which live labels and annotations count as drift when the repository does not set them.

A label or annotation the repository sets is compared like any field. One it never sets (no
repo object of that kind carries the key) changes nothing unless something reads it, so it is
left out of the comparison. What reads labels here:
- label selectors: a ClusterQueue's namespaceSelector, Kueue's managedJobsNamespaceSelector,
  an admission policy's or binding's namespaceSelector and objectSelector, a ClusterRole's
  aggregationRule (from the repository and from the live objects alike);
- the cluster profile's admission and tenant labels;
- an admission policy's CEL expressions that name the key (read as text: a key quoted in an
  expression, or `labels.<key>`, is taken as read).
Two Namespace annotations change where Pods run (the PodNodeSelector and
PodTolerationRestriction admission plugins), so they always count.
"""

from __future__ import annotations

import re
import typing as t
from dataclasses import dataclass, field

from auditor.k8s.objects import Json
from auditor.repo.profiles import ClusterProfile

if t.TYPE_CHECKING:
    from auditor.model import Resource

FIELDS = ("labels", "annotations")
ANY_KIND = "*"
BEHAVIOUR_ANNOTATIONS = {
    "Namespace": frozenset(
        {
            "scheduler.alpha.kubernetes.io/node-selector",
            "scheduler.alpha.kubernetes.io/defaultTolerations",
        }
    )
}
ADMISSION_POLICY_KINDS = ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")


@dataclass
class Readers:
    """The label keys something reads, per kind of the labelled object, and the keys the
    repository itself sets (per kind and field)."""

    labels: dict[str, set[str]] = field(default_factory=dict)  # kind or ANY_KIND -> keys
    expressions: list[str] = field(default_factory=list)  # CEL text of admission policies
    written: set[tuple[str, str, str]] = field(default_factory=set)  # (kind, field, key)

    def read(self, kind: str, key: str) -> bool:
        if key in self.labels.get(kind, ()) or key in self.labels.get(ANY_KIND, ()):
            return True
        # As CEL names a key: labels["k"], labels[?'k'], or labels.k for a plain one.
        named = re.compile(rf"""["']{re.escape(key)}["']|labels\.{re.escape(key)}\b""")
        return any(named.search(text) for text in self.expressions)

    def counts(self, kind: str, where: str, key: str) -> bool:
        """Whether a live `where` (labels/annotations) key the repo object lacks is drift."""
        if (kind, where, key) in self.written:
            return True
        if where == "annotations":
            return key in BEHAVIOUR_ANNOTATIONS.get(kind, ())
        return self.read(kind, key)


def readers(profile: ClusterProfile, desired: list[Resource], live: t.Iterable[Json]) -> Readers:
    found = Readers()
    found.labels.setdefault("Namespace", set()).add(profile.admission_label[0])
    if profile.tenant_label:
        found.labels["Namespace"].add(profile.tenant_label)
    for resource in desired:
        meta = resource.body.get("metadata")
        for where in FIELDS:
            values = meta.get(where) if isinstance(meta, dict) else None
            for key in values if isinstance(values, dict) else ():
                found.written.add((resource.kind, where, str(key)))
    from auditor.repo import boundaries  # Kueue's configuration: the comparing process's import

    config = boundaries.configuration(boundaries.config_map(desired))
    for key in ("managedJobsNamespaceSelector", "namespaceSelector"):
        _add(found, "Namespace", (config or {}).get(key))
    for obj in [*(r.body for r in desired), *live]:
        _selectors_of(found, obj)
    return found


def _selectors_of(found: Readers, obj: Json) -> None:
    kind, spec = obj.get("kind"), obj.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    if kind == "ClusterQueue":
        _add(found, "Namespace", spec.get("namespaceSelector"))
    elif kind in ADMISSION_POLICY_KINDS:
        match = spec.get("matchConstraints") or spec.get("matchResources") or {}
        if isinstance(match, dict):
            _add(found, "Namespace", match.get("namespaceSelector"))
            _add(found, ANY_KIND, match.get("objectSelector"))
        found.expressions.extend(_strings(spec))
    elif kind == "ClusterRole":
        rule = obj.get("aggregationRule")
        selectors = rule.get("clusterRoleSelectors") if isinstance(rule, dict) else None
        for selector in selectors if isinstance(selectors, list) else ():
            _add(found, "ClusterRole", selector)


def _add(found: Readers, kind: str, selector: t.Any) -> None:
    if not isinstance(selector, dict):
        return
    keys = set(map(str, (selector.get("matchLabels") or {}).keys()))
    for expr in selector.get("matchExpressions") or []:
        if isinstance(expr, dict) and expr.get("key"):
            keys.add(str(expr["key"]))
    found.labels.setdefault(kind, set()).update(keys)


def _strings(node: t.Any) -> t.Iterator[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)


def drop_unread(kind: str, desired: Json, live: Json, found: Readers) -> list[str]:
    """Remove from the normalized `live` body the labels and annotations the repo object does
    not set and nothing reads; return them as `labels.key` (for a debug line).

    Where only one side has labels (or annotations) left, the other gets an empty map, so a
    difference is reported per key, not for the whole map."""
    dropped: list[str] = []
    want, have = desired.setdefault("metadata", {}), live.setdefault("metadata", {})
    for where in FIELDS:
        extra = have.get(where)
        if isinstance(extra, dict):
            ours = want.get(where) or {}
            for key in [k for k in extra if k not in ours and not found.counts(kind, where, k)]:
                del extra[key]
                dropped.append(f"{where}.{key}")
            if not extra:
                del have[where]
        if bool(want.get(where)) != bool(have.get(where)):
            want.setdefault(where, {})
            have.setdefault(where, {})
    return dropped
