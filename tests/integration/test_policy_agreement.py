"""The offline evaluator `plan diff --live` judges the admission policies with (auditor.schemas.vap)
agrees with a real API server: the estate's policies, as generated, in Deny on a sandbox; the
same Jobs and namespace requests sent to both; each refused by both, with the same message, or
by neither. Requests go as server-side dry runs (admission runs, nothing is stored)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.errors import ClusterAccessError
from auditor.k8s.objects import Json
from auditor.kueue import admission
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox
from auditor.schemas import vap
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.integration.waiting import eventually
from tests.unit.conftest import Revisions

ADMIT = {"platform.example.com/kueue": "enabled", "platform.example.com/tenant": "team-a"}
PAUSE = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
SYNC = "system:serviceaccount:argocd:argocd-application-controller"
SA_GROUPS = ("system:serviceaccounts", "system:serviceaccounts:argocd", "system:authenticated")


def generated() -> list[Json]:
    """gpu-prod's policies and bindings exactly as `generate policies` makes them, in Deny."""
    repo = Repository.open(ESTATE)
    made = boundaries.boundaries(
        repo.cluster("gpu-prod"), repo.tenants, repo.load(["gpu-prod"]).for_cluster("gpu-prod")
    )
    assert made.actions == ("Deny",)
    return admission.policies(made)


def namespace(name: str, labels: dict[str, str]) -> Json:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def job(name: str, ns: str, labels: dict[str, str], pod_class: str | None = None) -> Json:
    spec: Json = {"restartPolicy": "Never", "containers": [PAUSE]}
    if pod_class:
        spec["priorityClassName"] = pod_class
    meta = {"name": name, "namespace": ns, "labels": labels}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {"template": {"spec": spec}},
    }


QUEUE = "kueue.x-k8s.io/queue-name"
LEVEL = "kueue.x-k8s.io/priority-class"
JOBS = [
    job("no-queue", "team-a", {}),
    job("declared-queue", "team-a", {QUEUE: "batch"}),
    job("other-queue", "team-a", {QUEUE: "urgent"}),
    job("approved-level", "team-a", {QUEUE: "batch", LEVEL: "batch-standard"}),
    job("unapproved-level", "team-a", {QUEUE: "batch", LEVEL: "research-standard"}),
    job("approved-pod-class", "team-a", {QUEUE: "batch"}, "tenant-batch"),
    job("unapproved-pod-class", "team-a", {QUEUE: "batch"}, "system-node-critical"),
    job("both-wrong", "team-a", {LEVEL: "batch-critical"}, "high"),
    job("not-admitted-namespace", "scratch", {}),
]
ASKERS = [  # username, groups: as the API server sees them (impersonated)
    (SYNC, SA_GROUPS),
    ("alice", ("system:masters", "system:authenticated")),
    ("bob", ("oidc:nlp-leads", "system:authenticated")),
    ("carol", ("system:authenticated",)),
]


def offline(docs: list[Json], request: vap.Request) -> list[str]:
    """The messages of the policies that refuse `request`, judged offline."""
    policies = {d["metadata"]["name"]: d for d in docs if d["kind"] == admission.POLICY}
    out: list[str] = []
    for binding in (d for d in docs if d["kind"] == admission.BINDING):
        verdict = vap.judge(policies[binding["spec"]["policyName"]], binding, request)
        out += verdict.failures[:1] if verdict.refused else []
    return out


def on_server(cluster: KubeCluster, method: str, path: str, body: Json) -> str | None:
    """The API server's refusal by a ValidatingAdmissionPolicy (None: admitted)."""
    content = "application/merge-patch+json" if method == "PATCH" else "application/json"
    try:
        cluster.request(method, path, query=[("dryRun", "All")], body=body, content_type=content)
    except ClusterAccessError as exc:
        assert "ValidatingAdmissionPolicy" in str(exc), exc  # refused by nothing else
        return str(exc)
    return None


@pytest.fixture
def policed(fresh_sandbox: Sandbox) -> KubeCluster:
    """The sandbox with the policies in Deny, namespaces team-a and scratch, and RBAC that lets
    each asker create and relabel namespaces (so only admission may refuse them)."""
    admin = fresh_sandbox.connect()
    admin.create(namespace("team-a", ADMIT))
    admin.create(namespace("scratch", {}))
    rule = {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["create", "patch"]}
    admin.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "relabel"},
            "rules": [rule],
        }
    )
    subjects = [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u} for u, _ in ASKERS
    ]
    admin.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "relabel"},
            "subjects": subjects,
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "relabel",
            },
        }
    )
    for doc in generated():
        admin.create(doc)
    # Each policy reaches the API server's admission on its own: wait for a refusal by each
    # (a queue name missing, a level not approved, a namespace labelled by someone else).
    probes = [j for j in JOBS if j["metadata"]["name"] in ("no-queue", "unapproved-level")]
    carol = admin.impersonating("carol", [])
    eventually(
        lambda: (
            all(
                on_server(admin, "POST", admin.path("batch/v1", "Job", "team-a"), probe)
                for probe in probes
            )
            and on_server(carol, "POST", carol.path("v1", "Namespace"), namespace("probe", ADMIT))
        ),
        what="each generated policy refusing what it is for",
        seconds=30,
    )
    return admin


def test_jobs_are_refused_offline_exactly_as_the_api_server_refuses_them(
    policed: KubeCluster,
) -> None:
    docs = generated()
    namespaces = {n: policed.get("v1", "Namespace", n) for n in ("team-a", "scratch")}
    verdicts = []
    for body in JOBS:
        ns = body["metadata"]["namespace"]
        request = vap.Request(vap.CREATE, "batch", "jobs", body, namespace_object=namespaces[ns])
        mine = offline(docs, request)
        theirs = on_server(policed, "POST", policed.path("batch/v1", "Job", ns), body)
        verdicts.append((body["metadata"]["name"], bool(mine), bool(theirs)))
        if theirs is not None:  # the server names one refusing policy: its message is ours
            assert any(m in theirs for m in mine), (body["metadata"]["name"], mine, theirs)
    assert [v for v in verdicts if v[1] != v[2]] == []
    refused = [name for name, mine, _ in verdicts if mine]
    assert refused == [
        "no-queue",
        "other-queue",
        "unapproved-level",
        "unapproved-pod-class",
        "both-wrong",
    ]


def test_namespace_labels_are_refused_to_the_same_identities(policed: KubeCluster) -> None:
    docs = generated()
    current = policed.get("v1", "Namespace", "team-a")
    relabelled = {
        **current,
        "metadata": {
            **current["metadata"],
            "labels": {**current["metadata"]["labels"], "platform.example.com/tenant": "team-b"},
        },
    }
    fresh = namespace("team-new", ADMIT)
    verdicts = []
    for user, groups in ASKERS:
        asker = policed.impersonating(user, [g for g in groups if g != "system:authenticated"])
        for operation, body, old in (("CREATE", fresh, None), ("UPDATE", relabelled, current)):
            request = vap.Request(
                operation, "", "namespaces", body, old, None, username=user, groups=groups
            )
            mine = offline(docs, request)
            if operation == "CREATE":
                theirs = on_server(asker, "POST", asker.path("v1", "Namespace"), body)
            else:
                patch = {"metadata": {"labels": body["metadata"]["labels"]}}
                theirs = on_server(
                    asker, "PATCH", asker.path("v1", "Namespace", name="team-a"), patch
                )
            if theirs is not None:
                assert any(m in theirs for m in mine), (user, operation, mine, theirs)
            verdicts.append((user, operation, bool(mine), bool(theirs)))
    assert [v for v in verdicts if v[2] != v[3]] == []
    assert {(u, op) for u, op, mine, _ in verdicts if mine} == {
        ("bob", "CREATE"),
        ("bob", "UPDATE"),
        ("carol", "CREATE"),
        ("carol", "UPDATE"),
    }


def test_plan_live_names_the_running_jobs_deny_would_refuse_and_the_server_agrees(
    fresh_sandbox: Sandbox, repo_copy: Path
) -> None:
    """An adopter's flip from Warn to Deny: `plan diff --live` names the running Job the policies
    would refuse; once they deny on the cluster, the API server refuses that Job, as named."""
    admin = fresh_sandbox.connect()
    repo = Repository.open(ESTATE)
    objects = repo.load(["gpu-prod"]).for_cluster("gpu-prod")
    namespaces = [r for r in objects if r.kind == "Namespace"]
    assert [r.error for r in apply_all(admin, namespaces) if r.error] == []
    running = [
        job("steady", "team-a", {QUEUE: "batch", LEVEL: "batch-standard"}),
        job("research", "team-a", {QUEUE: "batch", LEVEL: "research-standard"}),
    ]
    for body in running:
        admin.create(body)
    revs = Revisions(repo_copy)
    policies = "clusters/gpu-prod/admission-policies.yaml"
    revs.edit(policies, "  - Deny\n", "  - Warn\n  - Audit\n", count=3)
    base = revs.commit("policies in Warn")
    revs.edit(policies, "  - Warn\n  - Audit\n", "  - Deny\n", count=3)
    head = revs.commit("policies in Deny")
    revs.repo.close()
    result = run_line(
        ["kueue-gitops", "--repo", str(revs.root), "plan", "diff", "--base", base, "--head", head,
         "--live", *own_context(fresh_sandbox.kubeconfig), "--cluster", "gpu-prod", "-o", "json"]
    )  # fmt: skip
    doc = json.loads(result.output)
    assert result.exit_code == 1, doc
    refuses = [f for f in doc["findings"] if f["rule"] == "plan-policy-refuses"]
    assert [(f["name"], f["refused"]) for f in refuses] == [
        ("kueue-gitops-priority-levels", ["team-a/research"])
    ]
    named = refuses[0]["message"]
    assert "refuses 1 running Job of tenant team-a" in named
    for doc_ in generated():  # the head's policies, now on the cluster
        admin.create(doc_)
    eventually(
        lambda: on_server(admin, "POST", admin.path("batch/v1", "Job", "team-a"), JOBS[0]),
        what="the generated policies refusing a Job without a queue name",
        seconds=30,
    )
    for body in running:
        again = {**body, "metadata": {**body["metadata"], "name": body["metadata"]["name"] + "-2"}}
        refused = on_server(admin, "POST", admin.path("batch/v1", "Job", "team-a"), again)
        if body["metadata"]["name"] == "research":
            assert refused is not None and "research-standard is not approved" in refused
            assert "research-standard is not approved for tenant team-a" in named
        else:
            assert refused is None
