"""Turn a CRD's openAPIV3Schema, or a definition of the live /openapi/v3, into a JSON Schema.

The result is draft-04 JSON Schema (OpenAPI 3.0's dialect: boolean exclusiveMinimum), standalone
(references inlined into `definitions`), and strict: an object that lists its properties rejects
others, except where the API server itself keeps unknown fields
(`x-kubernetes-preserve-unknown-fields`, the case kubeconform's converter gets wrong).
`x-kubernetes-validations` stay in place for the offline CEL evaluator.
"""

from __future__ import annotations

import typing as t

Schema = dict[str, t.Any]

# Keywords whose value is one schema, a list of schemas, or a name -> schema map.
_ONE = ("additionalProperties", "items", "not")
_MANY = ("allOf", "anyOf", "oneOf")
_BY_NAME = ("properties", "patternProperties", "definitions")
_DROPPED = ("description", "example", "externalDocs")
_INT_OR_STRING: list[Schema] = [{"type": "integer"}, {"type": "string"}]
_REF_PREFIX = "#/components/schemas/"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def strict(node: Schema) -> Schema:
    """A copy of `node`, strict where Kubernetes is strict, and without prose."""
    out: Schema = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in _BY_NAME and isinstance(value, dict):
            out[key] = {name: strict(sub) for name, sub in value.items()}
        elif key in _MANY and isinstance(value, list):
            out[key] = [strict(sub) for sub in value]
        elif key in _ONE and isinstance(value, dict):
            out[key] = strict(value)
        elif key == "items" and isinstance(value, list):
            out[key] = [strict(sub) for sub in value]
        elif key == "$ref" and isinstance(value, str) and value.startswith(_REF_PREFIX):
            out[key] = "#/definitions/" + value[len(_REF_PREFIX) :]
        else:
            out[key] = value
    int_or_string = out.get("x-kubernetes-int-or-string") or out.get("format") == "int-or-string"
    if int_or_string and "anyOf" not in out and "oneOf" not in out:
        out.pop("type", None)
        out["anyOf"] = _INT_OR_STRING
    if out.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    keeps_unknown = out.get("x-kubernetes-preserve-unknown-fields") is True
    if "properties" in out and "additionalProperties" not in out and not keeps_unknown:
        out["additionalProperties"] = False
    return out


def from_crd(open_api_v3_schema: Schema, object_meta: Schema | None = None) -> Schema:
    """The JSON Schema of one CRD version.

    A CRD declares `metadata` as a bare object, yet the API server decodes it as ObjectMeta and,
    with strict field validation, rejects unknown fields there; given ObjectMeta's schema (from
    the same cluster's OpenAPI), a bare `metadata` becomes that.
    """
    out = strict(open_api_v3_schema)
    properties = out.get("properties") or {}
    if object_meta is not None and set(properties.get("metadata", {"x": 1})) <= {"type"}:
        meta = dict(object_meta)
        out["definitions"] = {**out.get("definitions", {}), **meta.pop("definitions", {})}
        properties["metadata"] = meta
    return out


def from_openapi(components: dict[str, Schema], name: str) -> Schema:
    """The JSON Schema of definition `name`, with every definition it reaches bundled in."""
    reached: dict[str, Schema] = {}
    pending = [name]
    while pending:
        current = pending.pop()
        if current in reached:
            continue
        reached[current] = components[current]
        pending.extend(r for r in _refs(components[current]) if r not in reached)
    self_referenced = any(name in _refs(s) for s in reached.values())
    root = strict(components[name])
    root["definitions"] = {n: strict(s) for n, s in reached.items() if n != name or self_referenced}
    return root


def _refs(node: t.Any) -> t.Iterator[str]:
    """The definition names `node` references, directly."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            yield ref[len(_REF_PREFIX) :]
        for value in node.values():
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)
