from __future__ import annotations

from auditor.schemas.versions import has_field

SCHEMA = {
    "properties": {
        "spec": {
            "properties": {
                "cohortName": {"type": "string"},
                "groups": {"items": {"properties": {"name": {"type": "string"}}}},
                "labels": {"additionalProperties": {"type": "string"}},
            }
        }
    }
}


def test_fields_are_found_through_lists_and_maps() -> None:
    assert has_field(SCHEMA, ("spec", "cohortName"))
    assert has_field(SCHEMA, ("spec", "groups", 3, "name"))
    assert has_field(SCHEMA, ("spec", "labels", "any-key"))


def test_fields_the_schema_does_not_declare() -> None:
    assert not has_field(SCHEMA, ("spec", "cohort"))
    assert not has_field(SCHEMA, ("spec", "groups", 0, "weight"))
    assert not has_field(SCHEMA, ("spec", "cohortName", 0))
