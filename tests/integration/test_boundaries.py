"""The tenant boundaries on a real kube-apiserver, with Kueue started from the repository's
Configuration and the repository's admission policies synced: probes act as team-a
(auditor/verify/crossing.py) and report what the API server and Kueue said."""

from __future__ import annotations

import typing as t

import pytest

from auditor.errors import ClusterAccessError
from auditor.kueue import admission
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox
from auditor.verify import crossing
from auditor.verify.model import RUN_LABEL, Check
from auditor.verify.scratch import Scratch
from tests.estate import ESTATE
from tests.integration.conftest import PAUSE, wait_until_policies_hold
from tests.integration.waiting import eventually

CLUSTER = "gpu-staging"
Json = dict[str, t.Any]


def probe(box: Sandbox, run_id: str) -> dict[str, Check]:
    repo = Repository.open(ESTATE)
    profile = repo.cluster(CLUSTER)
    declared = boundaries.boundaries(
        profile, repo.tenants, repo.load([CLUSTER]).for_cluster(CLUSTER)
    )
    scratch = Scratch(box.connect(), profile, run_id, 60.0)
    tenants = [repo.tenants[n] for n in sorted(repo.tenants)]
    return {c.name: c for c in crossing.run_all(scratch, declared, tenants, watch_seconds=5)}


@pytest.fixture(scope="module")
def bindings_before(kueue_sandbox: Sandbox) -> dict[str, str]:
    return _binding_uids(kueue_sandbox.connect())


@pytest.fixture(scope="module")
def crossed(kueue_sandbox: Sandbox, bindings_before: dict[str, str]) -> dict[str, Check]:
    return probe(kueue_sandbox, "bnd001")


def _binding_uids(cluster: KubeCluster) -> dict[str, str]:
    return {
        name: cluster.get(admission.API, admission.BINDING, name)["metadata"]["uid"]
        for name in admission.POLICIES
    }


def test_every_boundary_holds_on_the_repositorys_configuration(
    crossed: dict[str, Check],
) -> None:
    assert {name: c.passed for name, c in crossed.items()} == {
        "job-without-queue": True,
        "undeclared-queue": True,
        "unapproved-priority": True,
        "approved-priority": True,
        "namespace-relabel": True,
        "platform-objects": True,
        "boundary-cleanup": True,
    }, "\n".join(f"{c.name}: {c.summary}" for c in crossed.values())


def test_a_job_without_a_queue_name_is_refused_with_what_to_use(crossed: dict[str, Check]) -> None:
    summary = crossed["job-without-queue"].summary
    assert "ValidatingAdmissionPolicy 'kueue-gitops-queue-name'" in summary
    assert (
        "Jobs in namespace team-a must name their LocalQueue with the label "
        "kueue.x-k8s.io/queue-name, or they run outside every quota: use one of: batch"
    ) in summary


def test_a_queue_the_repository_does_not_declare_is_refused_even_when_it_exists(
    crossed: dict[str, Check],
) -> None:
    summary = crossed["undeclared-queue"].summary
    assert "LocalQueue kueue-gitops-no-such-queue (none such) was refused" in summary
    assert "(made live, into ClusterQueue team-b-cq of another tenant) was refused" in summary
    assert summary.count("use one of: batch") == 2


def test_unapproved_levels_are_refused_naming_the_approved_ones(
    crossed: dict[str, Check],
) -> None:
    summary = crossed["unapproved-priority"].summary
    assert "priority class batch-critical is not approved for tenant team-a: set the label " in (
        summary
    )
    assert "to one of: batch-low, batch-standard or leave it out for the default" in summary
    assert "set priorityClassName to one of: tenant-batch" in summary


def test_approved_levels_are_accepted_and_admitted(crossed: dict[str, Check]) -> None:
    check = crossed["approved-priority"]
    assert "with batch-low and pod PriorityClass tenant-batch" in check.summary
    assert "admitted (Kueue: QuotaReserved: Quota reserved in ClusterQueue team-a-cq)" in (
        check.summary
    )
    [workload] = check.workloads
    assert workload["priority"] == 100  # batch-low


def test_relabelling_is_refused_by_rbac_and_then_by_the_policy(crossed: dict[str, Check]) -> None:
    summary = crossed["namespace-relabel"].summary
    before, after = summary.split("granted patch on it by a temporary RoleBinding")
    assert 'User "kueue-gitops-probe:team-a" cannot patch resource "namespaces"' in before
    assert "a harmless label then went through" in after
    assert "ValidatingAdmissionPolicy 'kueue-gitops-namespace-labels'" in after
    assert "only the platform may set or change the label(s) platform.example.com/tenant" in after


def test_quota_and_priority_objects_are_forbidden(crossed: dict[str, Check]) -> None:
    summary = crossed["platform-objects"].summary
    assert (
        "team-a was forbidden to create ClusterQueue, create ResourceFlavor, create Cohort, "
        in (summary)
    )
    assert "patch ClusterQueue team-a-cq" in summary


def test_nothing_is_left_behind_and_no_boundary_was_lifted(
    crossed: dict[str, Check], bindings_before: dict[str, str], kueue_sandbox: Sandbox
) -> None:
    cluster = kueue_sandbox.connect()
    mine = [
        f"{o['kind']} {o['metadata']['name']}"
        for api, kind in (
            ("batch/v1", "Job"),
            ("kueue.x-k8s.io/v1beta2", "LocalQueue"),
            ("rbac.authorization.k8s.io/v1", "Role"),
            ("rbac.authorization.k8s.io/v1", "RoleBinding"),
        )
        for o in cluster.list_in(api, kind, "team-a")
        if "bnd001" in o["metadata"]["name"]
        or (o["metadata"].get("labels") or {}).get(RUN_LABEL) == "bnd001"
    ]
    assert mine == []
    # Never deleted and made again: a GitOps controller would race that, tenants meanwhile free.
    assert _binding_uids(cluster) == bindings_before
    live = cluster.get(admission.API, admission.BINDING, admission.QUEUE_POLICY)["spec"]
    declared = _declared()[(admission.BINDING, admission.QUEUE_POLICY)]["spec"]
    assert live["validationActions"] == declared["validationActions"] == ["Deny"]
    assert (
        live["matchResources"]["namespaceSelector"]
        == declared["matchResources"]["namespaceSelector"]
    )


def _declared() -> dict[tuple[str, str], Json]:
    repo = Repository.open(ESTATE)
    return {
        (r.kind, r.name): r.body
        for r in repo.load([CLUSTER]).for_cluster(CLUSTER)
        if r.kind in admission.KINDS
    }


def _wait_until_unenforced(cluster: KubeCluster) -> None:
    """A deleted binding stops holding once the API server's informer has seen it."""
    tenant = cluster.impersonating("kueue-gitops-probe:team-a", ["example-org:team-a"])
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "unenforced", "namespace": "team-a"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [PAUSE]}}},
    }
    refusal: list[str] = []

    def admitted() -> bool:
        try:
            tenant.request("POST", "/apis/batch/v1/namespaces/team-a/jobs",
                           query=[("dryRun", "All")], body=job)  # fmt: skip
        except ClusterAccessError as exc:
            refusal[:] = [str(exc)]
            return False
        return True

    eventually(
        admitted, what="the deleted bindings no longer holding", seconds=30, seen=lambda: refusal
    )


def test_without_the_policies_the_probes_fail_and_say_what_got_through(
    crossed: dict[str, Check], kueue_sandbox: Sandbox
) -> None:
    cluster = kueue_sandbox.connect()
    for name in admission.POLICIES:
        cluster.delete(admission.API, admission.BINDING, name)
    try:
        _wait_until_unenforced(cluster)
        broken = probe(kueue_sandbox, "bnd002")
    finally:
        policies = [
            r
            for r in Repository.open(ESTATE).load([CLUSTER]).for_cluster(CLUSTER)
            if r.kind in admission.KINDS
        ]
        assert [a.error for a in apply_all(cluster, policies) if a.error] == []
        wait_until_policies_hold(cluster)
    assert broken["job-without-queue"].passed is False
    assert "without a queue name in namespace team-a was ACCEPTED" in (
        broken["job-without-queue"].summary
    )
    assert broken["unapproved-priority"].passed is False
    assert "with priority class batch-critical was ACCEPTED" in (
        broken["unapproved-priority"].summary
    )
    assert broken["namespace-relabel"].passed is False
    assert "the same change was ACCEPTED" in broken["namespace-relabel"].summary
    # RBAC still holds
    assert broken["platform-objects"].passed is True
    assert broken["boundary-cleanup"].passed is True
