"""The admission policies made from a cluster's boundaries (their effect on a real API server is
tested in tests/integration/test_boundaries.py)."""

from __future__ import annotations

import typing as t

from auditor.kueue import admission
from auditor.kueue.config import Framework

JOB = Framework("batch/job", "batch", "v1", "Job", "jobs")
POD = Framework("pod", "", "v1", "Pod", "pods")
JOBSET = Framework("jobset.x-k8s.io/jobset", "jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets")
TEAM_A = admission.Namespace("team-a", ("batch",), "team-a", ("batch-low",), ("tenant-batch",))


def boundaries(**changes: t.Any) -> admission.Boundaries:
    fields: dict[str, t.Any] = {
        "admission_label": ("platform.example.com/kueue", "enabled"),
        "guarded_labels": ("platform.example.com/kueue", "platform.example.com/tenant"),
        "platform": ("ServiceAccount argocd/argocd-application-controller", "Group admins"),
        "namespaces": (TEAM_A,),
        "integrations": (JOB,),
        **changes,
    }
    return admission.Boundaries(**fields)


def by_name(docs: list[dict[str, t.Any]]) -> dict[tuple[str, str], dict[str, t.Any]]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def variables(policy: dict[str, t.Any]) -> dict[str, str]:
    return {v["name"]: v["expression"] for v in policy["spec"]["variables"]}


def test_three_policies_each_with_its_binding_that_fail_closed_and_deny() -> None:
    docs = admission.policies(boundaries())
    assert [(d["kind"], d["metadata"]["name"]) for d in docs] == [
        (kind, name) for name in admission.POLICIES for kind in admission.KINDS
    ]
    for doc in docs:
        assert doc["apiVersion"] == "admissionregistration.k8s.io/v1"
        assert doc["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kueue-gitops"}
        if doc["kind"] == admission.POLICY:
            assert doc["spec"]["failurePolicy"] == "Fail"
        else:
            assert doc["spec"]["policyName"] == doc["metadata"]["name"]
            assert doc["spec"]["validationActions"] == ["Deny"]


def test_a_warn_rollout_lets_requests_through_with_a_warning_and_an_audit_record() -> None:
    docs = admission.policies(boundaries(actions=admission.actions("Warn")))
    assert all(
        d["spec"]["validationActions"] == ["Warn", "Audit"]
        for d in docs
        if d["kind"] == admission.BINDING
    )


def test_workload_rules_bind_to_admitting_namespaces_but_not_verify_scratch_ones() -> None:
    docs = by_name(admission.policies(boundaries()))
    for name in (admission.QUEUE_POLICY, admission.PRIORITY_POLICY):
        selector = docs[(admission.BINDING, name)]["spec"]["matchResources"]["namespaceSelector"]
        assert selector == {
            "matchLabels": {"platform.example.com/kueue": "enabled"},
            "matchExpressions": [{"key": admission.SCRATCH_LABEL, "operator": "DoesNotExist"}],
        }
    assert "matchResources" not in docs[(admission.BINDING, admission.NAMESPACE_POLICY)]["spec"]


def test_every_configured_framework_is_matched_on_create_and_update() -> None:
    docs = by_name(admission.policies(boundaries(integrations=(JOB, POD, JOBSET))))
    rules = docs[(admission.POLICY, admission.QUEUE_POLICY)]["spec"]["matchConstraints"]
    assert rules["resourceRules"] == [
        {"apiGroups": [group], "apiVersions": ["*"], "resources": [resource],
         "operations": ["CREATE", "UPDATE"]}
        for group, resource in (("", "pods"), ("batch", "jobs"), ("jobset.x-k8s.io", "jobsets"))
    ]  # fmt: skip


def test_the_repositorys_queues_and_levels_are_the_policies_data() -> None:
    docs = by_name(admission.policies(boundaries()))
    queue = variables(docs[(admission.POLICY, admission.QUEUE_POLICY)])
    assert queue["queues"] == '{"team-a": ["batch"]}'
    priority = variables(docs[(admission.POLICY, admission.PRIORITY_POLICY)])
    assert priority["workload_levels"] == '{"team-a": ["batch-low"]}'
    assert priority["pod_levels"] == '{"team-a": ["tenant-batch"]}'
    assert priority["tenants"] == '{"team-a": "team-a"}'


def test_pods_a_controller_made_are_exempt_only_when_pods_are_an_integration() -> None:
    without = variables(
        by_name(admission.policies(boundaries()))[(admission.POLICY, admission.QUEUE_POLICY)]
    )
    assert without["owned"] == "false"
    with_pods = by_name(admission.policies(boundaries(integrations=(JOB, POD))))
    assert (
        "ownerReferences"
        in variables(with_pods[(admission.POLICY, admission.QUEUE_POLICY)])["owned"]
    )


def test_only_built_in_kinds_have_their_pod_priority_judged() -> None:
    b = boundaries(integrations=(JOB, POD, JOBSET))
    assert b.unchecked_pods == ["JobSet"]
    classes = variables(
        by_name(admission.policies(b))[(admission.POLICY, admission.PRIORITY_POLICY)]
    )
    assert "object.spec.template.spec" in classes["pod_classes"]
    assert "JobSet" not in classes["pod_classes"]


def test_platform_identities_become_user_names_and_groups() -> None:
    users, groups = admission.subjects(
        ["User alice", "Group admins", "ServiceAccount argocd/argocd-application-controller"]
    )
    assert users == ["alice", "system:serviceaccount:argocd:argocd-application-controller"]
    assert groups == ["admins"]
    policy = by_name(admission.policies(boundaries()))[
        (admission.POLICY, admission.NAMESPACE_POLICY)
    ]
    [condition] = policy["spec"]["matchConditions"]
    assert (
        '["system:serviceaccount:argocd:argocd-application-controller"]' in condition["expression"]
    )
    assert '["admins"]' in condition["expression"]
    assert variables(policy)["guarded"] == (
        '["platform.example.com/kueue", "platform.example.com/tenant"]'
    )
