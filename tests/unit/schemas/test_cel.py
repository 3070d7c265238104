from __future__ import annotations

from auditor.schemas import cel

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "!has(self.preference) || self.mode == 'Try'", "message": "need Try"},
                {"rule": "self.name == oldSelf.name", "message": "immutable"},
            ],
            "properties": {
                "mode": {"type": "string", "default": "Try"},
                "preference": {"type": "string"},
                "name": {"type": "string"},
                "taints": {
                    "type": "array",
                    "x-kubernetes-validations": [
                        {"rule": "self.all(x, x.effect in ['NoSchedule', 'NoExecute'])"}
                    ],
                    "items": {"type": "object", "properties": {"effect": {"type": "string"}}},
                },
            },
        }
    },
}
RULES = cel.collect(SCHEMA)


def test_rules_are_found_where_they_bind_self() -> None:
    assert [r.location for r in RULES] == [("spec",), ("spec",), ("spec", "taints")]
    assert [r.transition for r in RULES] == [False, True, False]


def test_a_broken_rule_is_reported_with_its_message_and_path() -> None:
    body = {"spec": {"preference": "x", "mode": "Other"}}
    [violation] = cel.evaluate(RULES, cel.with_defaults(SCHEMA, body))
    assert violation.message == "need Try" and violation.path == ("spec",)


def test_defaults_apply_before_the_rules_as_on_the_server() -> None:
    body = {"spec": {"preference": "x"}}
    assert cel.evaluate(RULES, body) != []  # without the default, `mode` is missing
    assert cel.evaluate(RULES, cel.with_defaults(SCHEMA, body)) == []
    assert body == {"spec": {"preference": "x"}}  # the object itself is left alone


def test_list_rules_use_the_kubernetes_default_message() -> None:
    body = {"spec": {"taints": [{"effect": "NoSchedule"}, {"effect": "Sometimes"}]}}
    [violation] = cel.evaluate(RULES, body)
    assert violation.path == ("spec", "taints")
    assert violation.message.startswith("failed rule: self.all(")


def test_transition_rules_are_not_evaluated_offline() -> None:
    assert cel.evaluate(RULES, {"spec": {"name": "a"}}) == []


def rule(text: str) -> list[cel.Rule]:
    return [cel.Rule((), text, "failed", None)]


def test_kubernetes_string_list_and_quantity_extensions() -> None:
    holds = [
        "self.name.lowerAscii() == 'gpu'",
        "self.name.split('.').size() == 1",
        "isQuantity(self.q) && quantity(self.q).isGreaterThan(quantity('1Gi'))",
        "quantity(self.q).compareTo(quantity('2048Mi')) == 0",
        "self.nums.isSorted() && self.nums.sum() == 6 && self.nums.max() == 3",
    ]
    body = {"name": "GPU", "q": "2Gi", "nums": [1, 2, 3]}
    for text in holds:
        assert cel.evaluate(rule(text), body) == [], text
    assert cel.evaluate(rule("quantity(self.q).isLessThan(quantity('1'))"), body) != []


def test_a_rule_needing_a_missing_function_is_skipped_and_said() -> None:
    unsupported: set[str] = set()
    text = "self.name.format(['x']) == 'y'"
    assert cel.evaluate(rule(text), {"name": "a"}, unsupported) == []
    assert unsupported == {text}


def test_a_runtime_error_fails_the_rule_as_on_the_server() -> None:
    [violation] = cel.evaluate(rule("self.missing == 1"), {"name": "a"})
    assert "could not be evaluated" in violation.message
