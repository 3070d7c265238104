"""Lists that hold each entry once, which JSON Schema cannot say: `x-kubernetes-list-type: set`
(each value once) and `map` (each entry once by its `x-kubernetes-list-map-keys`).

The API server refuses an object that repeats one ("Duplicate value"; a server-side apply, as
Argo CD's ServerSideApply=true sync does, fails with "duplicate entries for key"), so a
ClusterQueue whose admission check names a flavor twice in `onFlavors`, or names the same check
twice, never syncs. The walk follows the schema's `properties`, `additionalProperties` and
`items`; a part it cannot follow (a `$ref`, an `anyOf`) is not judged, never guessed.
"""

from __future__ import annotations

import json
import typing as t

from auditor.k8s.objects import FieldPath, Json


def duplicates(schema: Json, body: t.Any) -> t.Iterator[tuple[FieldPath, str]]:
    """Each repeated entry of a set or map list in `body`: where (the repeat) and why."""
    for path, node, items in _lists(schema, body, ()):
        kind = node.get("x-kubernetes-list-type")
        keys = [str(k) for k in node.get("x-kubernetes-list-map-keys") or []]
        once = "value" if kind == "set" else f"entry by its {', '.join(keys)}"
        seen: set[str] = set()
        for i, item in enumerate(items):
            found = _identity(kind, keys, item)
            if found is None:
                continue
            ident, said = found
            if ident in seen:
                yield (*path, i), f"{said} is listed twice: the list holds each {once} once"
            seen.add(ident)


def _identity(kind: t.Any, keys: list[str], item: t.Any) -> tuple[str, str] | None:
    """What makes `item` one of a kind in its list, and how to name it; None: nothing does."""
    if kind == "set":
        return _json(item, sort_keys=True), _json(item)
    if kind != "map" or not keys or not isinstance(item, dict) or not any(k in item for k in keys):
        return None
    named = {k: item.get(k) for k in keys}
    said = ", ".join(f"{k}={_json(v)}" for k, v in named.items())
    return _json(named, sort_keys=True), f"the entry with {said}"


def _json(value: t.Any, sort_keys: bool = False) -> str:
    """`value` as JSON; what YAML reads that JSON has not (a date, binary) as its text: the
    schema names such a value's type, this only tells entries apart."""
    return json.dumps(value, sort_keys=sort_keys, default=str)


def _lists(
    schema: Json, value: t.Any, path: FieldPath
) -> t.Iterator[tuple[FieldPath, Json, list[t.Any]]]:
    if not _holds_unique(schema):  # no set or map list below: nothing to find (most objects)
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        others = schema.get("additionalProperties")
        for key, sub in value.items():
            node = properties.get(key, others)
            if isinstance(node, dict):
                yield from _lists(node, sub, (*path, key))
    elif isinstance(value, list):
        yield path, schema, value
        items = schema.get("items")
        if isinstance(items, dict):
            for i, sub in enumerate(value):
                yield from _lists(items, sub, (*path, i))


_HOLDS: dict[int, tuple[Json, bool]] = {}  # id(schema node) -> (the node, whether it holds one)


def _holds_unique(schema: Json) -> bool:
    """Whether a set or map list is at or below `schema` along the paths the walk follows
    (asked once per schema node: the schemas live for the run)."""
    known = _HOLDS.get(id(schema))
    if known is not None and known[0] is schema:
        return known[1]
    below = [*(schema.get("properties") or {}).values()]
    below += [schema.get("additionalProperties"), schema.get("items")]
    holds = schema.get("x-kubernetes-list-type") in ("set", "map") or any(
        isinstance(node, dict) and _holds_unique(node) for node in below
    )
    _HOLDS[id(schema)] = (schema, holds)
    return holds
