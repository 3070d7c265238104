"""`verify` against the sandbox with a real Kueue: every scenario's outcome, and a broken config."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.k8s.conditions import is_true
from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox
from auditor.verify.model import RUN_LABEL
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.integration.waiting import eventually

KUEUE = "kueue.x-k8s.io/v1beta2"
Json = dict[str, t.Any]


def _verify(box: Sandbox, repo: Path = ESTATE, *extra: str) -> tuple[int, Json]:
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo),
            "verify",
            "--cluster",
            "gpu-staging",
            *own_context(box.kubeconfig),
            "-o",
            "json",
            *extra,
        ]
    )
    return result.exit_code, json.loads(result.stdout)


def _checks(report: Json) -> dict[str, Json]:
    return {c["check"]: c for c in report["checks"]}


def _conditions(workload: Json) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in workload["conditions"]}


def _leftovers(box: Sandbox) -> list[str]:
    return [
        n["metadata"]["name"]
        for n in box.connect().list("v1", "Namespace")
        if RUN_LABEL in (n["metadata"].get("labels") or {})
    ]


def _admitted_probes(box: Sandbox) -> list[str]:
    """The Workloads Kueue admitted in verify's scratch namespaces."""
    cluster = box.connect()
    return [
        f"{ns}/{w['metadata']['name']}"
        for ns in _leftovers(box)
        for w in cluster.list_in(KUEUE, "Workload", ns)
        if is_true(w, "Admitted")
    ]


@pytest.fixture(scope="module")
def verified(kueue_sandbox: Sandbox) -> tuple[int, Json]:
    """One run of verify on the repo's own gpu-staging configuration."""
    return _verify(kueue_sandbox)


def test_the_repo_configuration_passes_every_check(verified: tuple[int, Json]) -> None:
    code, report = verified
    failed = [f"{c['check']}: {c['summary']}" for c in report["checks"] if c["status"] == "failed"]
    assert code == 0, failed or report
    assert report["status"] == "clean"
    assert report["findings"] == []
    assert {name: c["status"] for name, c in _checks(report).items()} == {
        "nominal-quota": "passed",
        "borrowing-limit": "passed",
        "preemption": "passed",
        "stop-policy-hold": "passed",
        "unlabelled-namespace": "passed",
        "unqueued-job-held": "passed",
        # down to the Pods, on kwok's nodes (auditor/verify/pods.py)
        "pod-placement": "passed",
        "victim-recovery": "passed",
        # the tenant boundaries, probed as team-a (tests/integration/test_boundaries.py)
        "job-without-queue": "passed",
        "undeclared-queue": "passed",
        "unapproved-priority": "passed",
        "approved-priority": "passed",
        "namespace-relabel": "passed",
        "platform-objects": "passed",
        "boundary-cleanup": "passed",
        "cleanup": "passed",
    }


def test_jobs_within_nominal_quota_are_admitted_without_borrowing(
    verified: tuple[int, Json],
) -> None:
    check = _checks(verified[1])["nominal-quota"]
    # team-a-cq: 4 GPUs of a100 nominal, so 4 one-GPU probes, all admitted.
    assert len(check["workloads"]) == 4
    assert all(_conditions(w)["Admitted"] == ("True", "Admitted") for w in check["workloads"])
    assert "borrowing 0" in check["summary"]


def test_borrowing_stops_at_the_borrowing_limit(verified: tuple[int, Json]) -> None:
    check = _checks(verified[1])["borrowing-limit"]
    states = [_conditions(w)["QuotaReserved"] for w in check["workloads"]]
    # 4 nominal + borrowingLimit 2 admitted; the 7th stays pending with QuotaReserved=False.
    assert states.count(("True", "QuotaReserved")) == 6
    assert states.count(("False", "Pending")) == 1
    assert "borrowing 2 nvidia.com/gpu" in check["summary"]
    # team-b-cq lends only 1: the other comes from the pool of the parent cohort, example-org
    assert "the rest of cohort tree example-org can lend 2" in check["summary"]


def test_a_higher_priority_job_preempts_only_lower_priority_victims(
    verified: tuple[int, Json],
) -> None:
    check = _checks(verified[1])["preemption"]
    initiator, *victims = check["workloads"]
    assert initiator["priority"] == 10000  # batch-critical, in team-b's queue
    assert _conditions(initiator)["Admitted"] == ("True", "Admitted")
    assert victims, "nothing was preempted"
    for victim in victims:
        assert victim["priority"] < initiator["priority"]
        conditions = _conditions(victim)
        assert conditions["Evicted"] == ("True", "Preempted")
        assert conditions["Preempted"] == ("True", "InCohortReclamation")


def test_stop_policy_hold_keeps_admitted_work_and_resume_admits_again(
    verified: tuple[int, Json], kueue_sandbox: Sandbox
) -> None:
    check = _checks(verified[1])["stop-policy-hold"]
    kept, resumed = check["workloads"]
    assert _conditions(kept)["Admitted"] == ("True", "Admitted")
    assert "Evicted" not in _conditions(kept)
    assert _conditions(resumed)["QuotaReserved"][0] == "True"
    assert "held for 5s" in check["summary"]
    cq = kueue_sandbox.connect().get(KUEUE, "ClusterQueue", "team-a-cq")
    assert cq["spec"].get("stopPolicy", "None") == "None"  # restored


def test_a_job_from_an_unlabelled_namespace_is_never_admitted(
    verified: tuple[int, Json],
) -> None:
    check = _checks(verified[1])["unlabelled-namespace"]
    # Kueue's Configuration from the repo manages only namespaces with the admission label
    # (managedJobsNamespaceSelector, always respected since Kueue 0.15): it makes no Workload
    # for a Job elsewhere, and its webhook keeps a Job naming a queue suspended.
    assert check["workloads"] == []
    assert "was not admitted and created 0 Pod(s)" in check["summary"]


def test_behind_the_policy_kueue_itself_holds_a_job_without_a_queue(
    verified: tuple[int, Json],
) -> None:
    check = _checks(verified[1])["unqueued-job-held"]
    # Created unsuspended in a scratch namespace with team-a's labels, which the admission
    # policies leave out: only Kueue's webhook (manageJobsWithoutQueueName) can suspend it.
    assert "was held suspended by Kueue and created 0 Pod(s)" in check["summary"]
    assert "Inadmissible: LocalQueue  doesn't exist" in check["summary"]  # Kueue's own words
    [workload] = check["workloads"]
    assert workload["job"] == "unqueued-0"


def test_an_admitted_jobs_pods_run_on_the_assigned_flavors_nodes_and_complete(
    verified: tuple[int, Json],
) -> None:
    check = _checks(verified[1])["pod-placement"]
    [workload] = check["workloads"]
    assert _conditions(workload)["Admitted"] == ("True", "Admitted")
    # No node selector of its own: Kueue gave it a100's labels and tolerations, and
    # kube-scheduler bound it to the a100 node kwok simulates (one per flavor, from the profile).
    assert "assigned flavor a100; its Pod(s) placed-0-" in check["summary"]
    assert check["summary"].endswith("on a100-0; the Job completed")


def test_preempted_victims_stop_come_back_after_the_preemptor_and_finish_once(
    verified: tuple[int, Json],
) -> None:
    check = _checks(verified[1])["victim-recovery"]
    assert check["status"] == "passed", check["summary"]
    preempted = [w for w in check["workloads"] if w["priority"] == 100]
    assert preempted, "no victim was seen preempted"
    for victim in preempted:
        assert _conditions(victim)["Preempted"] == ("True", "InCohortReclamation")
    assert "had their Pods terminated" in check["summary"]
    assert "re-admitted after the preemptor finished" in check["summary"]
    assert "6 of 6 completed exactly once" in check["summary"]


def test_everything_created_is_deleted(verified: tuple[int, Json], kueue_sandbox: Sandbox) -> None:
    assert _checks(verified[1])["cleanup"]["status"] == "passed"
    assert _leftovers(kueue_sandbox) == []


def test_a_namespace_selector_of_everything_is_held_by_kueues_configuration(
    verified: tuple[int, Json], kueue_sandbox: Sandbox, repo_copy: Path
) -> None:
    # A broken commit: team-a-cq selects every namespace. Synced as Argo CD would, then verified:
    # Kueue, configured from the repo, still manages no Job outside the admitting namespaces
    # (validate reports the selector itself, offline).
    path = repo_copy / "clusters" / "gpu-staging" / "clusterqueues.yaml"
    docs = list(yaml.safe_load_all(path.read_text()))
    for doc in docs:
        if doc["metadata"]["name"] == "team-a-cq":
            doc["spec"]["namespaceSelector"] = {}
    path.write_text(yaml.safe_dump_all(docs))
    _sync(kueue_sandbox, repo_copy)
    try:
        code, report = _verify(kueue_sandbox, repo_copy)
    finally:
        _sync(kueue_sandbox, ESTATE)
    assert code == 0, report
    check = _checks(report)["unlabelled-namespace"]
    assert check["status"] == "passed" and check["workloads"] == []
    assert _leftovers(kueue_sandbox) == []
    line = ["kueue-gitops", "--repo", str(repo_copy), "validate", "--cluster", "gpu-staging"]
    validated = run_line([*line, "--schemas", str(ESTATE / "schemas"), "-o", "json"])
    assert validated.exit_code == 1
    assert [
        (f["rule"], f["name"])
        for f in json.loads(validated.stdout)["findings"]
        if f["rule"].startswith("namespace-selector")
    ] == [("namespace-selector-too-broad", "team-a-cq")]


def test_an_interrupted_run_still_cleans_up(
    verified: tuple[int, Json], kueue_sandbox: Sandbox
) -> None:
    argv = [sys.executable, "-m", "auditor", "--repo", str(ESTATE), "verify", "--cluster"]
    argv += ["gpu-staging", *own_context(kueue_sandbox.kubeconfig), "-o", "json"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # in the middle of the checks: a probe Job of verify's is admitted in its namespaces
        eventually(
            lambda: _admitted_probes(kueue_sandbox),
            what="a probe Job of verify's admitted",
            seen=lambda: _leftovers(kueue_sandbox),
        )
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 143, err  # SIGTERM's code, after the cleanup
    report = json.loads(out)
    assert report["status"] == "incomplete"
    assert "interrupted by signal 15 (SIGTERM)" in report["clusters"][0]["errors"][0]
    assert _checks(report)["cleanup"]["status"] == "passed"
    assert _leftovers(kueue_sandbox) == []
    cq = kueue_sandbox.connect().get(KUEUE, "ClusterQueue", "team-a-cq")
    assert cq["spec"].get("stopPolicy", "None") == "None"


def test_refuses_a_cluster_whose_profile_does_not_allow_it() -> None:
    result = run_line(["kueue-gitops", "--repo", str(ESTATE), "verify", "--cluster", "gpu-prod"])
    assert result.exit_code == 2
    assert "does not allow verify" in result.stderr
    assert "clusters/gpu-prod/profile.yaml" in result.stderr


def _sync(box: Sandbox, repo: Path) -> None:
    resources = Repository.open(repo).load(["gpu-staging"]).for_cluster("gpu-staging")
    assert [r.error for r in apply_all(box.connect(), resources) if r.error] == []


def test_a_cluster_without_kueue_is_incomplete_never_clean(fresh_sandbox: Sandbox) -> None:
    # The CRDs and the repo's queues are there, but no Kueue runs to turn Jobs into Workloads.
    _sync(fresh_sandbox, ESTATE)
    code, report = _verify(fresh_sandbox, ESTATE, "--timeout", "5")
    assert code == 3
    assert report["status"] == "incomplete"
    assert "is Kueue running" in report["clusters"][0]["errors"][0]
    # Cleanup still ran: its namespaces are being deleted (no namespace controller finishes it).
    namespaces = [
        n
        for n in fresh_sandbox.connect().list("v1", "Namespace")
        if RUN_LABEL in (n["metadata"].get("labels") or {})
    ]
    assert namespaces
    assert all(n["metadata"].get("deletionTimestamp") for n in namespaces)


def test_a_held_cluster_queue_is_reported_not_probed(kueue_sandbox: Sandbox) -> None:
    cluster = kueue_sandbox.connect()
    hold = {"spec": {"stopPolicy": "Hold"}}
    cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", hold, manager="on-call")
    try:
        code, report = _verify(kueue_sandbox)
    finally:
        resume = {"spec": {"stopPolicy": "None"}}
        cluster.patch(KUEUE, "ClusterQueue", "team-a-cq", resume, manager="on-call")
    assert code == 3
    assert "team-a-cq has stopPolicy Hold" in report["clusters"][0]["errors"][0]
    assert _leftovers(kueue_sandbox) == []
