"""An object as a person writes it: what the API server, controllers and tools add taken away.

The server adds metadata of its own (uid, resourceVersion, timestamps, managedFields), a status,
the `kubernetes.io/metadata.name` label on every Namespace; kubectl its last-applied
annotation; Argo CD its tracking id; Kueue its `resource-in-use` finalizer; and the server
fills every field the schema gives a `default:` (the CRDs' schemas, and for built-in kinds the
Go defaults of CORE_DEFAULTS).
drift's normalization (auditor/drift/normalize.py) fills the same defaults in before comparing,
so an object written here without them compares equal to the live one it came from.
"""

from __future__ import annotations

import typing as t

from auditor.k8s.objects import SCHEDULING_GROUP, Json

Schema = dict[str, t.Any]

KUEUE_FINALIZER = "kueue.x-k8s.io/resource-in-use"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
ARGOCD_TRACKING = "argocd.argoproj.io/tracking-id"  # Argo CD's mark of what it synced
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# The metadata a person writes; everything else under metadata is the server's.
AUTHORED_METADATA = ("name", "namespace", "labels", "annotations", "finalizers")

ADMISSION_GROUP = "admissionregistration.k8s.io"
# What the API server fills into an admission policy's match criteria when they are left out.
_MATCH_DEFAULTS: Schema = {
    "namespaceSelector": {"default": {}},
    "objectSelector": {"default": {}},
    "matchPolicy": {"default": "Equivalent"},
}
# The built-in kinds default in Go, not in their OpenAPI; the same defaults as schema fragments.
CORE_DEFAULTS: dict[tuple[str, str], Schema] = {
    ("", "Namespace"): {
        "properties": {"spec": {"default": {"finalizers": ["kubernetes"]}}},
    },
    (SCHEDULING_GROUP, "PriorityClass"): {
        "properties": {
            "preemptionPolicy": {"default": "PreemptLowerPriority"},
            "globalDefault": {"default": False},  # a plain bool: false is never stored
        },
    },
    (ADMISSION_GROUP, "ValidatingAdmissionPolicy"): {
        "properties": {
            "spec": {
                "properties": {
                    "matchConstraints": {
                        "properties": {
                            **_MATCH_DEFAULTS,
                            "resourceRules": {"items": {"properties": {"scope": {"default": "*"}}}},
                        }
                    }
                }
            }
        }
    },
    (ADMISSION_GROUP, "ValidatingAdmissionPolicyBinding"): {
        "properties": {
            "spec": {
                "properties": {
                    "matchResources": {
                        "properties": {
                            k: v for k, v in _MATCH_DEFAULTS.items() if k != "namespaceSelector"
                        }
                    }
                }
            }
        }
    },
}


def authored(obj: Json, schema: Schema | None = None) -> Json:
    """`obj` (as read from a cluster) the way a person would write it: no status, no server
    metadata, no field whose value is the server's default (`schema`: the kind's
    openAPIV3Schema; built-in kinds need none). The input is not changed."""
    api_version = str(obj.get("apiVersion", ""))
    kind = str(obj.get("kind", ""))
    group = api_version.rpartition("/")[0]
    root = _with(schema or {}, CORE_DEFAULTS.get((group, kind)))
    out: Json = {"apiVersion": api_version, "kind": kind}
    out["metadata"] = _metadata(obj.get("metadata") or {}, kind)
    for key, value in obj.items():
        if key in ("apiVersion", "kind", "metadata", "status"):
            continue
        sub = _child(root, key)
        default = _defaults(root).get(key, _ABSENT)
        if default is not _ABSENT and filled(value, sub) == filled(default, sub):
            continue
        out[key] = without_defaults(value, sub)
    return out


def _metadata(meta: Json, kind: str) -> Json:
    out: Json = {}
    for key in AUTHORED_METADATA:
        value = meta.get(key)
        if key == "labels" and kind == "Namespace" and value:
            value = {k: v for k, v in value.items() if k != NAMESPACE_NAME_LABEL}
        elif key == "annotations" and value:
            value = {k: v for k, v in value.items() if k not in (LAST_APPLIED, ARGOCD_TRACKING)}
        elif key == "finalizers" and value:
            value = [f for f in value if f != KUEUE_FINALIZER]
        if value not in (None, {}, [], ""):
            out[key] = value
    return out


class _Absent:
    pass


_ABSENT = _Absent()


def without_defaults(value: t.Any, schema: Schema) -> t.Any:
    """`value` with every field equal to its schema default taken out, at any depth."""
    if isinstance(value, dict):
        defaults = _defaults(schema)
        out = {}
        for key, sub_value in value.items():
            sub = _child(schema, key)
            default = defaults.get(key, _ABSENT)
            if default is not _ABSENT and filled(sub_value, sub) == filled(default, sub):
                continue
            out[key] = without_defaults(sub_value, sub)
        return out
    if isinstance(value, list):
        item = _items(schema)
        return [without_defaults(v, item) for v in value]
    return value


def filled(value: t.Any, schema: Schema) -> t.Any:
    """`value` with every default its schema gives filled in, at any depth (as the server
    stores it)."""
    if isinstance(value, dict):
        out = {k: filled(v, _child(schema, k)) for k, v in value.items()}
        for key, default in _defaults(schema).items():
            if key not in out:
                out[key] = filled(default, _child(schema, key))
        return out
    if isinstance(value, list):
        item = _items(schema)
        return [filled(v, item) for v in value]
    return value


# -- reading a schema node, through allOf/anyOf/oneOf ----------------------------------------------


def _with(schema: Schema, extra: Schema | None) -> Schema:
    return {"allOf": [schema, extra]} if extra else schema


def _branches(schema: Schema) -> list[Schema]:
    out = [schema]
    for key in ("allOf", "anyOf", "oneOf"):
        for branch in schema.get(key) or []:
            if isinstance(branch, dict):
                out += _branches(branch)
    return out


def _defaults(schema: Schema) -> dict[str, t.Any]:
    found: dict[str, t.Any] = {}
    for branch in _branches(schema):
        for key, sub in (branch.get("properties") or {}).items():
            if isinstance(sub, dict) and "default" in sub:
                found.setdefault(key, sub["default"])
    return found


def _child(schema: Schema, key: str) -> Schema:
    subs = [
        b["properties"][key]
        for b in _branches(schema)
        if isinstance((b.get("properties") or {}).get(key), dict)
    ]
    if not subs:
        subs = [
            b["additionalProperties"]
            for b in _branches(schema)
            if isinstance(b.get("additionalProperties"), dict)
        ]
    if not subs:
        return {}
    return subs[0] if len(subs) == 1 else {"allOf": subs}


def _items(schema: Schema) -> Schema:
    found = [b["items"] for b in _branches(schema) if isinstance(b.get("items"), dict)]
    return found[0] if len(found) == 1 else {"allOf": found} if found else {}
