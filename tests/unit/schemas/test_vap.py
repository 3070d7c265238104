"""The offline evaluator of ValidatingAdmissionPolicies: CEL's optional syntax, matching, and what
it will not judge (said, never guessed). Its agreement with a real API server on the generated
policies: tests/integration/test_policy_agreement.py."""

from __future__ import annotations

import pytest

from auditor.k8s.objects import Json
from auditor.schemas import vap


def test_optional_selection_and_index_become_calls_and_nothing_else_moves() -> None:
    assert vap.desugar("object.metadata.?labels[?'a/b'].orValue('') == 'x.?y'") == (
        "_opt_index(_opt_select(object.metadata, 'labels'), 'a/b').orValue('') == 'x.?y'"
    )
    assert vap.desugar("a ? [b[0]] : f(c.d(e), 1.5)") == "a ? [b[0]] : f(c.d(e) , 1.5)"


def policy(validation: str, *, failure: str = "Fail", condition: str | None = None) -> Json:
    spec: Json = {
        "failurePolicy": failure,
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": ["batch"],
                    "apiVersions": ["*"],
                    "resources": ["jobs"],
                    "operations": ["CREATE"],
                }
            ]
        },
        "variables": [
            {"name": "team", "expression": "object.metadata.?labels[?'team'].orValue('')"}
        ],
        "validations": [{"expression": validation, "messageExpression": "'no: ' + variables.team"}],
    }
    if condition:
        spec["matchConditions"] = [{"name": "c", "expression": condition}]
    return {"metadata": {"name": "p"}, "spec": spec}


BINDING: Json = {
    "spec": {
        "policyName": "p",
        "validationActions": ["Deny"],
        "matchResources": {"namespaceSelector": {"matchLabels": {"admit": "yes"}}},
    }
}


def request(
    labels: dict[str, str],
    namespace_labels: dict[str, str],
    operation: str = vap.CREATE,
    username: str = "",
    groups: tuple[str, ...] = (),
) -> vap.Request:
    obj = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "labels": labels}}
    ns = {"metadata": {"name": "n", "labels": namespace_labels}}
    return vap.Request(operation, "batch", "jobs", obj, None, ns, username, groups)


def test_validations_run_in_the_namespaces_the_binding_selects() -> None:
    rule = policy("variables.team != ''")
    assert vap.judge(rule, BINDING, request({}, {"admit": "yes"})) == vap.Verdict(True, ("no: ",))
    assert vap.judge(rule, BINDING, request({"team": "a"}, {"admit": "yes"})).failures == ()
    assert not vap.judge(rule, BINDING, request({}, {})).matched
    assert not vap.judge(rule, BINDING, request({}, {"admit": "yes"}, operation="UPDATE")).matched


def test_match_conditions_read_who_asks() -> None:
    rule = policy("false", condition="!('ops' in request.userInfo.groups)")
    assert vap.reads_user(rule) and not vap.reads_user(policy("false"))
    ns = {"admit": "yes"}
    assert vap.judge(rule, BINDING, request({}, ns, username="u", groups=("dev",))).refused
    assert not vap.judge(rule, BINDING, request({}, ns, username="u", groups=("ops",))).matched


def test_an_expression_that_fails_refuses_when_the_policy_fails_closed() -> None:
    broken = "object.spec.missing == 1"  # no such field: an error, as on the server
    ns = {"admit": "yes"}
    [message] = vap.judge(policy(broken), BINDING, request({}, ns)).failures
    assert "could not be evaluated" in message
    assert not vap.judge(policy(broken, failure="Ignore"), BINDING, request({}, ns)).refused


@pytest.mark.parametrize(
    "expression, why",
    [
        ("authorizer.group('').resource('jobs').check('get').allowed()", "authorizer"),
        ("[?object.a]", "optional list or map entries"),
        ("object.metadata.name.unknownFunction()", "lacks"),
        ("object.metadata.?labels.team.orValue('') == ''", "optional value"),
    ],
)
def test_what_it_cannot_judge_is_said(expression: str, why: str) -> None:
    with pytest.raises(vap.Unsupported, match=why):
        vap.judge(policy(expression), BINDING, request({}, {"admit": "yes"}))


def test_a_policy_with_parameters_is_not_judged() -> None:
    rule = policy("true")
    rule["spec"]["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    with pytest.raises(vap.Unsupported, match="parameter"):
        vap.judge(rule, BINDING, request({}, {"admit": "yes"}))
