"""Bring a desired (repo) and a live object to one comparable shape, the same way for both.

What a real API server or Kueue adds or rewrites must not count as drift: status, server-owned
metadata, Kueue's `resource-in-use` finalizer, Argo CD's tracking marks, kubectl's last-applied
annotation, defaults from the CRD schema (`default:` keywords) and a few built-in defaults the
core API types set in Go code, and the spelling of quantities (`512Gi` is `549755813888`).
List-maps become dicts keyed `[key]` so a path reads `flavors[a100].resources[cpu]`, lists of
strings that are sets (verbs, coveredResources) are sorted, and a nil `namespaceSelector` stays
distinct from `{}` (nothing empty is pruned inside `spec`). A resource group's flavors stay in
their order (auditor.drift.compare compares it: Kueue tries them in that order).
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

import yaml

from auditor.k8s import quantity

# The server's own metadata and the built-in kinds' Go defaults: one home, shared with import.
from auditor.k8s.authored import CORE_DEFAULTS as CORE_DEFAULTS
from auditor.k8s.authored import KUEUE_FINALIZER as KUEUE_FINALIZER
from auditor.k8s.authored import LAST_APPLIED as LAST_APPLIED
from auditor.k8s.authored import NAMESPACE_NAME_LABEL as NAMESPACE_NAME_LABEL
from auditor.k8s.objects import RBAC_GROUP, FieldPath, Json
from auditor.kueue import config as kueue_config

# Quantity fields when no schema says so (the schema's int-or-string marker wins when present).
from auditor.kueue.quota import QUANTITY_FIELDS as QUANTITY_FIELDS
from auditor.repo import pyyaml_reader

Path = FieldPath  # the drift modules' name for it (auditor/k8s/objects.py)

Schema = dict[str, t.Any]

ARGOCD_INSTANCE = "app.kubernetes.io/instance"
ARGOCD_PREFIX = "argocd.argoproj.io/"

# List-maps keyed by name when no schema says so (Kueue's own CRDs declare these as list-maps).
NAMED_LISTS = frozenset({"flavors", "resources"})
# Lists of strings read as sets: a resource group's coveredResources (each resource belongs to
# one group; Kueue only requires the flavors' resources to follow the same order) and an RBAC
# rule's verbs, groups, resources, names and URLs. Compared sorted, shown as written.
SET_LISTS = frozenset(
    {"coveredResources", "verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs"}
)


def quantity_value(value: t.Any) -> str | None:
    """One spelling per value (`12`, `"12000m"` -> `12`; `1Ti` -> `1099511627776`), or None."""
    try:
        parsed = quantity.parse(value)
    except quantity.QuantityError:
        return None
    return format(parsed.value, "f")


@dataclass
class Normalized:
    """An object ready to compare, and the object it came from (for values as written)."""

    body: Json
    source: Json = field(default_factory=dict)
    root: _Node | None = None

    def original(self, path: Path) -> t.Any:
        """The value at a normalized path as the source wrote it; KeyError when absent."""
        node, value = self.root or _node(EMPTY), t.cast(t.Any, self.source)
        for part in path:
            if isinstance(value, list) and isinstance(part, str):
                keys = node.map_keys or ["name"]
                found = [e for e in value if isinstance(e, dict) and list_map_key(e, keys) == part]
                if not found:
                    raise KeyError(part)
                value, node = found[0], node.item()
            elif isinstance(value, list) and isinstance(part, int):
                if not 0 <= part < len(value):
                    raise KeyError(part)
                value, node = value[part], node.item()
            elif isinstance(value, dict) and isinstance(part, str):
                value, node = value[part], node.child(part)
            else:
                raise KeyError(part)
        return value


def normalize(obj: Json, schema: Schema | None = None) -> Normalized:
    """The comparable form of one object, desired or live alike (the input is not changed)."""
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    kind = str(obj.get("kind", ""))
    root = _node(schema or EMPTY, CORE_DEFAULTS.get((group, kind)))
    out = Normalized({}, obj, root)
    for key, value in obj.items():
        if key == "metadata":
            out.body[key] = _metadata(value or {}, kind)
        elif key != "status":
            out.body[key] = _shape(value, root.child(key), key)
    for key, default in root.defaults.items():
        if key not in obj and key not in ("metadata", "status"):
            out.body[key] = _shape(default, root.child(key), key)
    for key in [k for k, v in out.body.items() if v == {} and k != "metadata"]:
        # An empty top-level struct is its absence: Go writes a struct field even when empty,
        # so a ResourceFlavor applied without `spec` reads back with `spec: {}`.
        del out.body[key]
    if group == RBAC_GROUP:
        _rbac_defaults(out.body)
    meta = obj.get("metadata") or {}
    if kueue_config.is_config_map(
        str(obj.get("apiVersion")), kind, meta.get("namespace"), meta.get("name", "")
    ):
        _kueue_configuration(out)
    return out


def _kueue_configuration(out: Normalized) -> None:
    """Kueue's Configuration, compared as what it says rather than as text (comments and
    layout are not drift): the YAML under its key, parsed, when it parses."""
    data = out.body.get("data")
    if not isinstance(data, dict) or not isinstance(data.get(kueue_config.KEY), str):
        return
    try:
        parsed = pyyaml_reader.load_one(data[kueue_config.KEY])
    except yaml.YAMLError:
        return
    if isinstance(parsed, dict):
        data[kueue_config.KEY] = parsed
        source = out.source.get("data") or {}
        out.source = {**out.source, "data": {**source, kueue_config.KEY: parsed}}


def _metadata(meta: Json, kind: str) -> Json:
    """Name, namespace, labels, annotations and finalizers, minus what servers and tools add."""
    name = meta.get("name")
    if "labels" not in meta and "annotations" not in meta and "finalizers" not in meta:
        return {k: meta[k] for k in ("name", "namespace") if meta.get(k)}
    labels = {
        k: v
        for k, v in (meta.get("labels") or {}).items()
        if k != ARGOCD_INSTANCE and not k.startswith(ARGOCD_PREFIX)
    }
    if kind == "Namespace" and labels.get(NAMESPACE_NAME_LABEL) == name:
        del labels[NAMESPACE_NAME_LABEL]  # the API server sets it on every namespace
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k != LAST_APPLIED and not k.startswith(ARGOCD_PREFIX)
    }
    finalizers = [f for f in meta.get("finalizers") or [] if f != KUEUE_FINALIZER]
    kept = {
        "name": name,
        "namespace": meta.get("namespace"),
        "labels": labels,
        "annotations": annotations,
        "finalizers": finalizers,
    }
    return {k: v for k, v in kept.items() if v not in ({}, [], None)}


def _rbac_defaults(body: Json) -> None:
    """rbac/v1 defaults a User or Group subject's apiGroup (SetDefaults_Subject)."""
    for subject in body.get("subjects") or []:
        if subject.get("kind") in ("User", "Group") and not subject.get("apiGroup"):
            subject["apiGroup"] = RBAC_GROUP


class _Node:
    """What normalizing needs from one schema node, worked out once per node and cached.

    Reads a CRD's openAPIV3Schema and the JSON Schema converted from it alike, looking through
    allOf/anyOf/oneOf branches.
    """

    def __init__(self, schema: Schema, extra: Schema | None = None) -> None:
        branches = [schema, extra] if extra else [schema]
        for key in ("allOf", "anyOf", "oneOf"):
            branches += [b for b in schema.get(key) or [] if isinstance(b, dict)]
        self.props: dict[str, list[Schema]] = {}
        self.defaults: dict[str, t.Any] = {}
        self.additional: Schema | None = None
        self.items: Schema | None = None
        self.map_keys: list[str] | None = None
        self.list_type = schema.get("x-kubernetes-list-type")
        types = {b.get("type") for b in schema.get("anyOf") or [] if isinstance(b, dict)}
        self.quantity = bool(schema.get("x-kubernetes-int-or-string")) or types == {
            "integer",
            "string",
        }
        self.empty = not schema and not extra
        for branch in branches:
            for key, sub in (branch.get("properties") or {}).items():
                if isinstance(sub, dict):
                    self.props.setdefault(key, []).append(sub)
                    if "default" in sub and key not in self.defaults:
                        self.defaults[key] = sub["default"]
            if isinstance(branch.get("additionalProperties"), dict) and self.additional is None:
                self.additional = branch["additionalProperties"]
            if isinstance(branch.get("items"), dict) and self.items is None:
                self.items = branch["items"]
            if branch.get("x-kubernetes-list-type") == "map" and not self.map_keys:
                self.map_keys = list(branch.get("x-kubernetes-list-map-keys") or []) or None
        self._children: dict[str, _Node] = {}

    def child(self, key: str) -> _Node:
        found = self._children.get(key)
        if found is None:
            subs = self.props.get(key) or ([self.additional] if self.additional else [])
            merged = subs[0] if subs else EMPTY
            for sub in subs[1:]:
                merged = _merge(merged, sub)
            found = self._children[key] = _node(merged)
        return found

    def item(self) -> _Node:
        return _node(self.items or EMPTY)


EMPTY: Schema = {}
_NODES: dict[tuple[int, int], tuple[Schema, Schema | None, _Node]] = {}


def _node(schema: Schema, extra: Schema | None = None) -> _Node:
    """The cached node of a schema (kept alive with it, so the id stays unique)."""
    key = (id(schema), id(extra))
    hit = _NODES.get(key)
    if hit is None or hit[0] is not schema or hit[1] is not extra:
        hit = _NODES[key] = (schema, extra, _Node(schema, extra))
    return hit[2]


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


def list_map_key(item: Json, keys: list[str]) -> str:
    return "[" + ",".join(str(item.get(k, "")) for k in keys) + "]"


def _shape(value: t.Any, node: _Node, key: str | int) -> t.Any:
    """A new value: defaults filled, list-maps keyed, quantities spelled one way."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            child = node.child(k)
            # Most leaves are plain strings: keep them without a call (the hot path).
            plain = type(v) is str and not child.quantity and k not in QUANTITY_FIELDS
            out[k] = v if plain else _shape(v, child, k)
        for name, default in node.defaults.items():
            if name not in value:
                out[name] = _shape(default, node.child(name), name)
        return out
    if isinstance(value, list):
        item = node.item()
        keys = node.map_keys
        if (
            keys is None
            and node.list_type is None
            and key in NAMED_LISTS
            and all(isinstance(i, dict) and "name" in i for i in value)
        ):
            keys = ["name"]  # no schema: the list-maps we know are keyed by name
        if keys:
            return {list_map_key(entry, keys): _shape(entry, item, key) for entry in value}
        if key in SET_LISTS and all(type(v) is str for v in value):
            return sorted(value)
        return [_shape(v, item, key) for v in value]
    if node.quantity or (node.empty and key in QUANTITY_FIELDS):
        parsed = quantity_value(value)
        if parsed is not None:
            return parsed
    return value
