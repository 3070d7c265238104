from __future__ import annotations

import typing as t

import jsonschema

from auditor.schemas.convert import from_crd, from_openapi

CRD_SCHEMA = {
    "type": "object",
    "description": "prose is dropped",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "quota": {
                    "x-kubernetes-int-or-string": True,
                    "pattern": "^[0-9]+(Gi)?$",
                },
                "free": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"known": {"type": "string"}},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "description": {"type": "string", "description": "a field named description"},
            },
        }
    },
}


def test_objects_with_properties_reject_unknown_fields() -> None:
    validator = jsonschema.Draft4Validator(from_crd(CRD_SCHEMA))
    assert not validator.is_valid({"spec": {"typo": 1}})
    assert not validator.is_valid({"extra": 1})


def test_preserve_unknown_fields_stays_open() -> None:
    schema = from_crd(CRD_SCHEMA)
    assert "additionalProperties" not in schema["properties"]["spec"]["properties"]["free"]
    assert jsonschema.Draft4Validator(schema).is_valid({"spec": {"free": {"anything": [1]}}})


def test_int_or_string_accepts_both_and_keeps_the_pattern() -> None:
    validator = jsonschema.Draft4Validator(from_crd(CRD_SCHEMA))
    assert validator.is_valid({"spec": {"quota": 4}})
    assert validator.is_valid({"spec": {"quota": "4Gi"}})
    assert not validator.is_valid({"spec": {"quota": "four"}})
    assert not validator.is_valid({"spec": {"quota": [4]}})


def test_descriptions_go_but_a_field_named_description_stays() -> None:
    spec = from_crd(CRD_SCHEMA)["properties"]["spec"]
    assert "description" in spec["properties"]
    assert "description" not in spec["properties"]["description"]
    assert "description" not in from_crd(CRD_SCHEMA)


def test_map_values_keep_their_schema() -> None:
    validator = jsonschema.Draft4Validator(from_crd(CRD_SCHEMA))
    assert validator.is_valid({"spec": {"labels": {"a": "b"}}})
    assert not validator.is_valid({"spec": {"labels": {"a": 1}}})


def test_openapi_definitions_are_bundled_and_references_rewritten() -> None:
    components: dict[str, dict[str, t.Any]] = {
        "x.Thing": {
            "type": "object",
            "properties": {"meta": {"allOf": [{"$ref": "#/components/schemas/x.Meta"}]}},
        },
        "x.Meta": {"type": "object", "properties": {"name": {"type": "string"}}},
        "x.Unused": {"type": "object"},
    }
    schema = from_openapi(components, "x.Thing")
    assert set(schema["definitions"]) == {"x.Meta"}
    validator = jsonschema.Draft4Validator(schema)
    assert validator.is_valid({"meta": {"name": "a"}})
    assert not validator.is_valid({"meta": {"nmae": "a"}})


def test_a_bare_crd_metadata_becomes_object_meta() -> None:
    components: dict[str, dict[str, t.Any]] = {
        "meta.ObjectMeta": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "owner": {"allOf": [{"$ref": "#/components/schemas/meta.Owner"}]},
            },
        },
        "meta.Owner": {"type": "object", "properties": {"uid": {"type": "string"}}},
    }
    object_meta = from_openapi(components, "meta.ObjectMeta")
    crd = {"type": "object", "properties": {"metadata": {"type": "object"}}}
    validator = jsonschema.Draft4Validator(from_crd(crd, object_meta))
    assert validator.is_valid({"metadata": {"name": "a", "owner": {"uid": "1"}}})
    assert not validator.is_valid({"metadata": {"nmae": "a"}})
    assert not validator.is_valid({"metadata": {"owner": {"uid": 1}}})
