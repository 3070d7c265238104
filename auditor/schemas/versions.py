"""The API version contract: what each cluster serves, deprecates, and which fields are whose.

A manifest's apiVersion must be served by the cluster it targets; a deprecated version warns.
A field that exists only in another served version of the kind (v1beta1 `cohort` in a v1beta2
ClusterQueue, or the reverse) means the object was half migrated: changing the apiVersion string
does not migrate an object, its fields must follow that version's schema.
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.k8s.objects import group_of
from auditor.model import Finding, Resource, format_path
from auditor.schemas.catalog import Schema, SchemaCatalog, schema_file

_RULES = rules.of(__name__)
UNKNOWN_KIND = _RULES["unknown-kind"]
VERSION_NOT_SERVED = _RULES["version-not-served"]
VERSION_DEPRECATED = _RULES["version-deprecated"]
FIELD_OF_OTHER_VERSION = _RULES["field-of-other-version"]

# Fields Kueue renamed between versions, to name the one to use (kueue-api.md §2.11).
RENAMED: dict[tuple[str, str], str] = {
    ("ClusterQueue", "spec.cohort"): "spec.cohortName",
    ("ClusterQueue", "spec.cohortName"): "spec.cohort",
}


def served(resource: Resource, catalog: SchemaCatalog) -> Finding | None:
    """An error when the cluster does not serve the object's apiVersion; a deprecation warning."""
    group = group_of(resource.api_version)
    version = resource.api_version.rpartition("/")[2]
    entry = catalog.kind(group, resource.kind)
    if entry is None:
        return Finding.about(
            resource,
            UNKNOWN_KIND,
            f"cluster {catalog.cluster} serves no {resource.kind} in "
            f"{group or 'the core group'}: no schema in {catalog.source.describe()} "
            "(a typo, or run `kueue-gitops schemas fetch` after installing its CRD)",
            path=("kind",),
        )
    if version not in entry["served"]:
        return Finding.about(
            resource,
            VERSION_NOT_SERVED,
            f"cluster {catalog.cluster} does not serve {resource.api_version} {resource.kind} "
            f"(served: {', '.join(entry['served'])})",
            path=("apiVersion",),
        )
    if version in entry.get("deprecated", []):
        storage = entry.get("storage")
        return Finding.about(
            resource,
            VERSION_DEPRECATED,
            f"{resource.api_version} {resource.kind} is deprecated on cluster {catalog.cluster}"
            + (f"; migrate the object to the {storage} schema" if storage else ""),
            path=("apiVersion",),
        )
    return None


def foreign_field(
    resource: Resource, catalog: SchemaCatalog, path: tuple[str | int, ...]
) -> Finding | None:
    """An error when the unknown field at `path` belongs to another served version of the kind."""
    group = group_of(resource.api_version)
    version = resource.api_version.rpartition("/")[2]
    entry = catalog.kind(group, resource.kind) or {}
    for other in entry.get("served", []):
        if other == version:
            continue
        schema = catalog.schema(f"{group}/{other}" if group else other, resource.kind)
        if schema is None or not has_field(schema, path):
            continue
        field = format_path(path)
        own = catalog.where(schema_file(group, resource.kind, version))
        instead = RENAMED.get((resource.kind, field))
        return Finding.about(
            resource,
            FIELD_OF_OTHER_VERSION,
            f"{field} is a field of {group}/{other} {resource.kind}, not of {version}: the "
            f"apiVersion string alone does not migrate an object; write it to the {version} "
            f"schema ({own})" + (f", which calls it {instead}" if instead else ""),
            path=path,
        )
    return None


def has_field(schema: Schema, path: t.Sequence[str | int]) -> bool:
    """Whether `path` names a field the schema declares (list items and map values included)."""
    node: Schema = schema
    for part in path:
        if isinstance(part, int):
            items = node.get("items")
            if not isinstance(items, dict):
                return False
            node = items
            continue
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        if part in properties:
            node = properties[part]
        elif isinstance(extra, dict):
            node = extra
        else:
            return False
    return True
