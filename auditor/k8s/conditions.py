"""Status conditions (`status.conditions[]`), read the way controllers write them."""

from __future__ import annotations

from auditor.k8s.objects import Json


def conditions(obj: Json) -> dict[str, Json]:
    """An object's conditions by type (the last one wins if a type repeats)."""
    found = (obj.get("status") or {}).get("conditions") or []
    return {str(c.get("type")): dict(c) for c in found if isinstance(c, dict)}


def condition(obj: Json, kind: str) -> Json:
    """The condition of type `kind`, or {} when the object has none."""
    return conditions(obj).get(kind, {})


def is_true(obj: Json, kind: str) -> bool:
    return condition(obj, kind).get("status") == "True"


def is_false(obj: Json, kind: str) -> bool:
    return condition(obj, kind).get("status") == "False"


def decided(obj: Json, kind: str) -> bool:
    """Whether the controller has set the condition either way (Unknown or absent: not yet)."""
    return is_true(obj, kind) or is_false(obj, kind)


def reason(obj: Json, kind: str) -> str | None:
    return condition(obj, kind).get("reason")


def message(obj: Json, kind: str) -> str:
    return str(condition(obj, kind).get("message") or "")
