"""`plan diff --live` says what the admission policies a change adds or tightens would refuse of
what runs now: running Jobs by their queue and priority labels, and who may relabel namespaces.

The cluster is a fake of our own reader interface (`list`); the policies are the estate's, as
generated, evaluated offline (tests/integration/test_policy_agreement.py holds the evaluator to
a real API server)."""

from __future__ import annotations

import typing as t

from auditor.k8s.objects import Json
from auditor.model import Finding
from auditor.plan import live as plan_live
from auditor.plan.offline import build
from auditor.repo.gitsource import revision
from tests.unit.conftest import Revisions

POLICIES = "clusters/gpu-prod/admission-policies.yaml"
PROFILE = "clusters/gpu-prod/profile.yaml"
ADMIT = {"platform.example.com/kueue": "enabled"}


def namespace(name: str, tenant: str | None = None) -> Json:
    labels = dict(ADMIT, **({"platform.example.com/tenant": tenant} if tenant else {}))
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def job(ns: str, name: str, queue: str | None, level: str | None = None, **status: t.Any) -> Json:
    labels = {}
    if queue:
        labels["kueue.x-k8s.io/queue-name"] = queue
    if level:
        labels["kueue.x-k8s.io/priority-class"] = level
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": labels},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}},
        "status": status,
    }


def admitted_workload(of: Json) -> Json:
    meta = of["metadata"]
    return {
        "metadata": {
            "name": f"job-{meta['name']}",
            "namespace": meta["namespace"],
            "ownerReferences": [{"kind": "Job", "name": meta["name"], "uid": meta["uid"]}],
        },
        "spec": {"queueName": "batch"},
        "status": {
            "conditions": [
                {"type": "QuotaReserved", "status": "True"},
                {"type": "Admitted", "status": "True"},
            ],
            "admission": {"clusterQueue": "team-a-cq"},
        },
    }


def may_patch_namespaces(kind: str, name: str, ns: str | None = None) -> list[Json]:
    subject: Json = {"kind": kind, "name": name, **({"namespace": ns} if ns else {})}
    if kind == "Group":
        subject["apiGroup"] = "rbac.authorization.k8s.io"
    role = f"relabel-{name.replace(':', '-')}"
    return [
        {
            "kind": "ClusterRole",
            "metadata": {"name": role},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["patch"]}],
        },
        {
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"kind": "ClusterRole", "name": role},
            "subjects": [subject],
        },
    ]


class FakeCluster:
    """Our reader interface over fixed objects, by kind."""

    def __init__(self, objects: dict[str, list[Json]]) -> None:
        self.objects = objects
        self.listed: list[str] = []

    def list(self, api_version: str, kind: str) -> list[Json]:
        self.listed.append(kind)
        return [dict(o, apiVersion=api_version, kind=kind) for o in self.objects.get(kind, [])]


RUNNING = [
    job("team-a", "approved", "batch", "batch-standard"),
    job("team-a", "research-1", "batch", "research-standard"),
    job("team-a", "research-2", "batch", "research-standard"),
    job("team-b", "no-queue", None),
    job(
        "team-a",
        "done",
        "batch",
        "research-standard",
        conditions=[{"type": "Complete", "status": "True"}],
    ),
]


def live(rbac: list[Json] | None = None) -> FakeCluster:
    return FakeCluster(
        {
            "Namespace": [namespace("team-a", "team-a"), namespace("team-b", "team-b")],
            "Job": RUNNING,
            "Workload": [admitted_workload(j) for j in RUNNING[:3]],
            **_by_kind(
                rbac
                or [
                    *may_patch_namespaces(
                        "ServiceAccount", "argocd-application-controller", "argocd"
                    ),
                    *may_patch_namespaces("Group", "oidc:nlp-leads"),
                ]
            ),
        }
    )


def _by_kind(objs: list[Json]) -> dict[str, list[Json]]:
    out: dict[str, list[Json]] = {}
    for o in objs:
        out.setdefault(o["kind"], []).append(o)
    return out


def planned(revs: Revisions, base: str, cluster: FakeCluster) -> list[Finding]:
    with revision(revs.root, base) as before, revision(revs.root, "HEAD") as after:
        result = build(before, after, ["gpu-prod"])
    plan_live.check(result, lambda _profile: cluster)  # type: ignore[arg-type,return-value]
    assert [c.errors for c in result.report.clusters] == [[]]
    return [f for f in result.report.findings if f.rule.id.startswith("plan-policy")]


def in_warn(revs: Revisions) -> str:
    """A base whose bindings only warn, as an adopter's first rollout has them."""
    revs.edit(POLICIES, "  - Deny\n", "  - Warn\n  - Audit\n", count=3)
    return revs.commit("policies in Warn")


def test_flipping_to_deny_names_the_running_jobs_it_would_refuse(revs: Revisions) -> None:
    base = in_warn(revs)
    revs.edit(POLICIES, "  - Warn\n  - Audit\n", "  - Deny\n", count=3)
    revs.commit("policies in Deny")
    found = planned(revs, base, live())
    refuses = [f for f in found if f.rule.id == "plan-policy-refuses"]
    by_policy = {f.name: f.message for f in refuses}
    assert set(by_policy) == {"kueue-gitops-priority-levels", "kueue-gitops-queue-name"}
    assert (
        "refuses 2 running Jobs of tenant team-a (2 admitted), submitted again as they are: "
        "priority class research-standard is not approved for tenant team-a"
    ) in by_policy["kueue-gitops-priority-levels"]
    assert "team-a/research-1, team-a/research-2" in by_policy["kueue-gitops-priority-levels"]
    assert "team-a/done" not in by_policy["kueue-gitops-priority-levels"]  # finished: not running
    assert "refuses 1 running Job of tenant team-b" in by_policy["kueue-gitops-queue-name"]
    assert all(f.severity.value == "error" and f.file == POLICIES for f in refuses)
    # the namespace-label policy exempts Argo CD and system:masters; it stops the group
    [restricts] = [f for f in found if f.rule.id == "plan-policy-restricts"]
    assert "Group oidc:nlp-leads (2)" in restricts.message
    assert "argocd-application-controller" not in restricts.message


def test_policies_added_in_warn_say_what_deny_would_refuse(revs: Revisions) -> None:
    text = (revs.root / POLICIES).read_text()
    (revs.root / POLICIES).unlink()
    base = revs.commit("an estate without policies")
    revs.write(POLICIES, text.replace("  - Deny\n", "  - Warn\n  - Audit\n"))
    revs.commit("the policies, added in Warn")
    found = planned(revs, base, live())
    assert {f.rule.id for f in found} == {"plan-policy-would-refuse", "plan-policy-restricts"}
    message = next(f.message for f in found if f.name == "kueue-gitops-priority-levels")
    assert "only warns now (Warn), but once its binding denies it refuses 2 running Jobs" in message


def test_a_platform_without_argo_cds_identity_locks_the_sync_out(revs: Revisions) -> None:
    base = in_warn(revs)
    revs.edit(POLICIES, "  - Warn\n  - Audit\n", "  - Deny\n", count=3)
    revs.edit(POLICIES, '["system:serviceaccount:argocd:argocd-application-controller"]', "[]")
    revs.commit("Deny, without Argo CD")
    found = planned(revs, base, live())
    [locked] = [
        f for f in found if f.rule.id == "plan-policy-refuses" and "Argo CD syncs" in f.message
    ]
    assert locked.name == "kueue-gitops-namespace-labels"
    assert "ServiceAccount argocd/argocd-application-controller" in locked.message
    assert "ClusterRoleBinding relabel-argocd-application-controller" in locked.message
    assert "only the platform may set or change the label(s)" in locked.message
    assert f"platformIdentities in {PROFILE}" in locked.message


def test_a_tightened_policy_names_only_what_the_base_did_not_refuse(revs: Revisions) -> None:
    """team-a loses batch-standard: its Job using it is new; research-standard was refused."""
    revs.edit(POLICIES, '"team-a": ["batch-low", "batch-standard"]', '"team-a": ["batch-low"]')
    revs.commit("team-a loses a level")
    cluster = live()
    found = planned(revs, "base", cluster)
    [refuses] = [f for f in found if f.rule.id == "plan-policy-refuses"]
    assert "refuses 1 running Job of tenant team-a (1 admitted)" in refuses.message
    assert "priority class batch-standard is not approved" in refuses.message
    assert "(team-a/approved)" in refuses.message  # not research-1/2: refused before as well
    assert [f.rule.id for f in found] == ["plan-policy-refuses"]  # the others did not change


def test_a_policy_it_cannot_judge_leaves_the_cluster_incomplete_not_clean(revs: Revisions) -> None:
    revs.write(
        "clusters/gpu-prod/hand-written-policy.yaml",
        """apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: by-hand}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [batch], apiVersions: [v1], resources: [jobs], operations: [CREATE]}
  validations:
  - expression: "params.data.allowed == 'yes'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: by-hand}
spec:
  policyName: by-hand
  validationActions: [Deny]
""",
    )
    revs.commit("a policy with parameters")
    with revision(revs.root, "base") as before, revision(revs.root, "HEAD") as after:
        result = build(before, after, ["gpu-prod"])
    plan_live.check(result, lambda _profile: live())  # type: ignore[arg-type,return-value]
    [cluster] = result.report.clusters
    assert cluster.status == "incomplete"
    assert cluster.errors == [
        "ValidatingAdmissionPolicy by-hand not judged offline: parameter resources"
    ]
    assert result.report.exit_code == 3
