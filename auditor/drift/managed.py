"""Who changed a field: the field manager and time that `metadata.managedFields` record for it."""

from __future__ import annotations

import json

from auditor.drift.normalize import Path, list_map_key
from auditor.k8s.objects import Json


def _owns(fields: Json, path: Path) -> bool:
    """Whether a fieldsV1 set covers `path` (itself, or an atomic value above it)."""
    node: Json | None = fields
    for part in path:
        if node is None:
            return False
        if not node:
            return True  # a leaf above the path: the whole value (an atomic list or map)
        if isinstance(part, int):
            return False  # a granular list is tracked by value, not by index
        if part.startswith("["):
            node = next(
                (v for k, v in node.items() if k.startswith("k:") and _entry_key(k) == part),
                None,
            )
        else:
            node = node.get(f"f:{part}")
    return node is not None


def _entry_key(key: str) -> str:
    try:
        fields = json.loads(key[2:])
    except ValueError:
        return ""
    return list_map_key(fields, list(fields))


def changed_by(live: Json, path: Path) -> Json | None:
    """The manager that set the field at `path` (the latest, if several), else the last editor."""
    entries = (live.get("metadata") or {}).get("managedFields") or []
    owners = [e for e in entries if _owns(e.get("fieldsV1") or {}, path)]
    if not owners:  # a removed field has no owner left; name whoever last edited the object
        owners = [e for e in entries if e.get("operation") == "Update"]
    if not owners:
        return None
    latest = max(owners, key=lambda e: e.get("time") or "")
    return {k: latest.get(k) for k in ("manager", "operation", "time")}
