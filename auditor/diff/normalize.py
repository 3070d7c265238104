"""Bring a desired (repo) and a live object to one comparable shape, the same way for both.

What a real API server or Kueue adds or rewrites must not count as drift: status, server-owned
metadata, Kueue's `resource-in-use` finalizer, Argo CD's tracking marks, kubectl's last-applied
annotation, defaults from the CRD schema (`default:` keywords) and a few built-in defaults the
core API types set in Go code, and the spelling of quantities (`512Gi` is `549755813888`).
List-maps become dicts keyed `[key]` so a path reads `flavors[a100].resources[cpu]`, and a
nil `namespaceSelector` stays distinct from `{}` (nothing empty is pruned inside `spec`).
"""

from __future__ import annotations

import copy
import typing as t
from dataclasses import dataclass, field

from auditor import quantity

Json = dict[str, t.Any]
Schema = dict[str, t.Any]
Path = tuple[str | int, ...]

KUEUE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ARGOCD_INSTANCE = "app.kubernetes.io/instance"
ARGOCD_PREFIX = "argocd.argoproj.io/"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
KEPT_METADATA = ("name", "namespace", "labels", "annotations", "finalizers")

# Quantity fields when no schema says so (the schema's int-or-string marker wins when present).
QUANTITY_FIELDS = frozenset({"nominalQuota", "borrowingLimit", "lendingLimit", "weight"})
# List-maps keyed by name when no schema says so (Kueue's own CRDs declare these as list-maps).
NAMED_LISTS = frozenset({"flavors", "resources"})

# The built-in kinds default in Go, not in their OpenAPI; the same defaults as schema fragments.
CORE_DEFAULTS: dict[tuple[str, str], Schema] = {
    ("", "Namespace"): {
        "properties": {"spec": {"default": {"finalizers": ["kubernetes"]}}},
    },
    ("scheduling.k8s.io", "PriorityClass"): {
        "properties": {
            "preemptionPolicy": {"default": "PreemptLowerPriority"},
            "globalDefault": {"default": False},  # a plain bool: false is never stored
        },
    },
}
RBAC_GROUP = "rbac.authorization.k8s.io"


def quantity_value(value: t.Any) -> str | None:
    """One spelling per value (`12`, `"12000m"` -> `12`; `1Ti` -> `1099511627776`), or None."""
    try:
        parsed = quantity.parse(value)
    except quantity.QuantityError:
        return None
    return format(parsed.value, "f")


@dataclass
class Normalized:
    """An object ready to compare, and the original spelling of each quantity it held."""

    body: Json
    originals: dict[Path, t.Any] = field(default_factory=dict)


def normalize(obj: Json, schema: Schema | None = None) -> Normalized:
    """The comparable form of one object, desired or live alike."""
    body = copy.deepcopy(obj)
    group = str(body.get("apiVersion", "")).rpartition("/")[0]
    kind = str(body.get("kind", ""))
    body.pop("status", None)
    body["metadata"] = _metadata(body.get("metadata") or {}, kind)
    full_schema = _merge(schema or {}, CORE_DEFAULTS.get((group, kind), {}))
    apply_defaults(body, full_schema)
    if group == RBAC_GROUP:
        _rbac_defaults(body)
    out = Normalized(body)
    out.body = t.cast(Json, _shape(body, full_schema, (), out.originals))
    return out


def _metadata(meta: Json, kind: str) -> Json:
    kept = {k: copy.deepcopy(meta[k]) for k in KEPT_METADATA if k in meta}
    labels = {
        k: v
        for k, v in (kept.get("labels") or {}).items()
        if k != ARGOCD_INSTANCE and not k.startswith(ARGOCD_PREFIX)
    }
    if kind == "Namespace" and labels.get(NAMESPACE_NAME_LABEL) == meta.get("name"):
        del labels[NAMESPACE_NAME_LABEL]  # the API server sets it on every namespace
    annotations = {
        k: v
        for k, v in (kept.get("annotations") or {}).items()
        if k != LAST_APPLIED and not k.startswith(ARGOCD_PREFIX)
    }
    finalizers = [f for f in kept.get("finalizers") or [] if f != KUEUE_FINALIZER]
    kept.update(labels=labels, annotations=annotations, finalizers=finalizers)
    return {k: v for k, v in kept.items() if v not in ({}, [], None)}


def _rbac_defaults(body: Json) -> None:
    """rbac/v1 defaults a User or Group subject's apiGroup (SetDefaults_Subject)."""
    for subject in body.get("subjects") or []:
        if subject.get("kind") in ("User", "Group") and not subject.get("apiGroup"):
            subject["apiGroup"] = RBAC_GROUP


def _merge(a: Schema, b: Schema) -> Schema:
    if not b:
        return a
    out = dict(a)
    for key, value in b.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _branches(schema: Schema) -> list[Schema]:
    """The schema and the alternatives it composes (allOf/anyOf/oneOf), for lookups."""
    out = [schema]
    for key in ("allOf", "anyOf", "oneOf"):
        out.extend(s for s in schema.get(key) or [] if isinstance(s, dict))
    return out


def _child(schema: Schema, key: str) -> Schema:
    for branch in _branches(schema):
        props = branch.get("properties") or {}
        if key in props:
            return t.cast(Schema, props[key])
    for branch in _branches(schema):
        extra = branch.get("additionalProperties")
        if isinstance(extra, dict):
            return extra
    return {}


def _items(schema: Schema) -> Schema:
    for branch in _branches(schema):
        items = branch.get("items")
        if isinstance(items, dict):
            return items
    return {}


def apply_defaults(value: t.Any, schema: Schema) -> None:
    """Fill absent fields with their schema `default`, as the API server's structural defaulting.

    Works on a CRD's openAPIV3Schema and on the JSON Schema converted from it alike.
    """
    if isinstance(value, dict):
        for branch in _branches(schema):
            for key, sub in (branch.get("properties") or {}).items():
                if key not in value and isinstance(sub, dict) and "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
        for key, sub_value in value.items():
            apply_defaults(sub_value, _child(schema, key))
    elif isinstance(value, list):
        items = _items(schema)
        for item in value:
            apply_defaults(item, items)


def _is_quantity(schema: Schema, key: str | int) -> bool:
    if schema.get("x-kubernetes-int-or-string"):
        return True
    types = {b.get("type") for b in schema.get("anyOf") or [] if isinstance(b, dict)}
    if types == {"integer", "string"}:
        return True
    return not schema and key in QUANTITY_FIELDS


def _map_keys(schema: Schema, key: str | int, items: list[t.Any]) -> list[str] | None:
    for branch in _branches(schema):
        if branch.get("x-kubernetes-list-type") == "map" and branch.get(
            "x-kubernetes-list-map-keys"
        ):
            return list(branch["x-kubernetes-list-map-keys"])
    named = key in NAMED_LISTS and all(isinstance(i, dict) and "name" in i for i in items)
    return ["name"] if named and not schema.get("x-kubernetes-list-type") else None


def list_map_key(item: Json, keys: list[str]) -> str:
    return "[" + ",".join(str(item.get(k, "")) for k in keys) + "]"


def _shape(value: t.Any, schema: Schema, path: Path, originals: dict[Path, t.Any]) -> t.Any:
    key = path[-1] if path else ""
    if isinstance(value, dict):
        return {k: _shape(v, _child(schema, k), (*path, k), originals) for k, v in value.items()}
    if isinstance(value, list):
        items = _items(schema)
        keys = _map_keys(schema, key, value)
        if keys:
            out: dict[str, t.Any] = {}
            for item in value:
                name = list_map_key(item, keys)
                out[name] = _shape(item, items, (*path, name), originals)
            return out
        return [_shape(v, items, (*path, i), originals) for i, v in enumerate(value)]
    if _is_quantity(schema, key):
        parsed = quantity_value(value)
        if parsed is not None:
            originals[path] = value
            return parsed
    return value
