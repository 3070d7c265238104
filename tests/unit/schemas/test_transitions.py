"""Transition rules (CEL reading `oldSelf`) on two revisions, as the API server runs them."""

from __future__ import annotations

import json
import typing as t

import pytest

from auditor.schemas import cel, transitions
from tests.estate import ESTATE

IMMUTABLE = [{"rule": "self == oldSelf", "message": "field is immutable"}]
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "queue": {"type": "string", "x-kubernetes-validations": IMMUTABLE},
                "mode": {"type": "string", "default": "Try"},
                "ports": {  # a list-map: items pair up by name
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "port": {"type": "integer", "x-kubernetes-validations": IMMUTABLE},
                        },
                    },
                },
                "args": {  # an atomic list: items never pair up
                    "type": "array",
                    "items": {"type": "string", "x-kubernetes-validations": IMMUTABLE},
                },
                "labels": {  # a map: values pair up by key
                    "type": "object",
                    "additionalProperties": {
                        "type": "string",
                        "x-kubernetes-validations": IMMUTABLE,
                    },
                },
            },
            "x-kubernetes-validations": [
                {
                    "rule": "oldSelf.mode != 'Locked' || self.mode == 'Locked'",
                    "message": "a locked spec stays locked",
                    "fieldPath": ".mode",
                },
                {
                    "rule": "has(oldSelf.queue) || !has(self.queue) || self.queue != 'x'",
                    "message": "x may not be set",
                    "optionalOldSelf": True,
                },
            ],
        }
    },
}
RULES = cel.collect(SCHEMA)


def broken(old: t.Any, new: t.Any, unsupported: set[str] | None = None) -> list[tuple[t.Any, ...]]:
    before, after = cel.with_defaults(SCHEMA, old), cel.with_defaults(SCHEMA, new)
    return [(v.path, v.message) for v in transitions.evaluate(RULES, before, after, unsupported)]


def test_a_changed_immutable_field_breaks_its_rule_at_its_path() -> None:
    assert broken({"spec": {"queue": "a"}}, {"spec": {"queue": "b"}}) == [
        (("spec", "queue"), "field is immutable")
    ]


def test_unchanged_set_for_the_first_time_or_removed_is_not_judged() -> None:
    assert broken({"spec": {"queue": "a"}}, {"spec": {"queue": "a", "mode": "Other"}}) == []
    assert broken({"spec": {}}, {"spec": {"queue": "a"}}) == []  # no oldSelf to compare with
    assert broken({"spec": {"queue": "a"}}, {"spec": {}}) == []  # no self: `required` says it


def test_list_map_items_pair_up_by_their_keys_whatever_their_order() -> None:
    old = {"spec": {"ports": [{"name": "http", "port": 80}, {"name": "grpc", "port": 90}]}}
    reordered = {"spec": {"ports": [{"name": "grpc", "port": 90}, {"name": "http", "port": 80}]}}
    assert broken(old, reordered) == []
    moved = {"spec": {"ports": [{"name": "grpc", "port": 91}, {"name": "new", "port": 1}]}}
    assert broken(old, moved) == [(("spec", "ports", 0, "port"), "field is immutable")]


def test_atomic_list_items_are_never_paired_and_map_values_pair_by_key() -> None:
    assert broken({"spec": {"args": ["a"]}}, {"spec": {"args": ["b"]}}) == []
    old = {"spec": {"labels": {"team": "a", "tier": "1"}}}
    new = {"spec": {"labels": {"team": "b", "zone": "1"}}}
    assert broken(old, new) == [(("spec", "labels", "team"), "field is immutable")]


def test_field_path_and_defaults_as_the_api_server_applies_them() -> None:
    # The old spec had mode Locked; the new one leaves mode out, so its default (Try) applies.
    assert broken({"spec": {"mode": "Locked"}}, {"spec": {}}) == [
        (("spec", "mode"), "a locked spec stays locked")
    ]


def test_optional_old_self_rules_are_named_unsupported_never_guessed() -> None:
    unsupported: set[str] = set()
    assert broken({"spec": {"mode": "a"}}, {"spec": {"mode": "b"}}, unsupported) == []
    assert unsupported == {"has(oldSelf.queue) || !has(self.queue) || self.queue != 'x'"}


FLAVOR = json.loads(
    (ESTATE / "schemas/gpu-prod/kueue.x-k8s.io/resourceflavor_v1beta2.json").read_text()
)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ({"nodeLabels": {"pool": "gpu"}}, {"nodeLabels": {"pool": "cpu"}}, []),
        (
            {"topologyName": "racks", "nodeLabels": {"pool": "gpu"}},
            {"topologyName": "racks", "nodeLabels": {"pool": "cpu"}},
            [(("spec", "nodeLabels"), "nodeLabels are immutable when topologyName is set")],
        ),
        (
            {"topologyName": "racks", "nodeLabels": {"pool": "gpu"}},
            {"topologyName": "rows", "nodeLabels": {"pool": "gpu"}},
            [(("spec", "topologyName"), "topologyName is immutable when topologyName is set")],
        ),
        (
            {"nodeLabels": {"pool": "gpu"}},
            {"topologyName": "racks", "nodeLabels": {"pool": "gpu"}},
            [],  # a flavor may become topology-aware
        ),
    ],
    ids=["no-topology", "labels-with-topology", "topology-renamed", "topology-added"],
)
def test_kueues_conditional_flavor_rules(
    old: dict[str, t.Any], new: dict[str, t.Any], expected: list[t.Any]
) -> None:
    rules = [r for r in cel.collect(FLAVOR) if r.transition]
    found = transitions.evaluate(rules, {"spec": old}, {"spec": new})
    assert [(v.path, v.message) for v in found] == expected


def test_every_committed_transition_rule_can_be_judged_offline() -> None:
    seen = 0
    for path in sorted((ESTATE / "schemas").glob("*/*/*.json")):
        schema = json.loads(path.read_text())
        for rule in cel.collect(schema) if isinstance(schema, dict) else []:
            if rule.transition:
                seen += 1
                assert not rule.optional_old_self, (path.name, rule.rule)
                assert cel.verdict(rule, "{}", '{"x": 1}') != cel.UNSUPPORTED, (path, rule.rule)
    assert seen >= 10
