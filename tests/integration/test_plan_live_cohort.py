"""`plan diff --live` weighs a cut of a Cohort's own quota against what a real Kueue admitted.

gpu-staging's tree: example-org (a pool of 1 a100 GPU) above ai-shared, which holds team-a-cq
(4 GPUs, lends 2, may borrow 2) and team-b-cq (3 GPUs, lends 1). Team-a's Jobs fill its quota,
then borrow through the tree; cutting example-org's pool then leaves the tree short.
"""

from __future__ import annotations

import json
import time
import typing as t
from pathlib import Path

import git
import pytest

from auditor.k8s import conditions
from auditor.k8s.conditions import is_true
from auditor.kueue.quota import used
from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.html_pages import opened
from tests.integration.kueue_jobs import KUEUE, remove_jobs, submit, workloads_by_job
from tests.integration.waiting import eventually
from tests.unit.conftest import Revisions

NS = "team-a"  # its LocalQueue batch and the priorities its profile approves
COHORTS = "clusters/gpu-staging/cohorts.yaml"
POOL = 'nominalQuota: "1"'
GPU = ("a100", "nvidia.com/gpu")


JOBS = [f"within-{i}" for i in range(4)] + ["borrow-0", "borrow-1"]


@pytest.fixture(scope="module")
def team_a(kueue_sandbox: Sandbox) -> t.Iterator[KubeCluster]:
    """Team-a's namespace on the Kueue sandbox, with 4 Jobs that fill team-a-cq's own quota;
    the Jobs this module makes are removed at the end (the sandbox is shared)."""
    cluster = kueue_sandbox.connect()
    try:
        for name in JOBS[:4]:
            submit(cluster, NS, name, "batch-low")
        _admitted(cluster, 4)
        yield cluster
    finally:
        remove_jobs(cluster, NS, JOBS)
        eventually(  # verify, later, sizes its probes from it
            lambda: _held(cluster) == 0,
            what="team-a-cq holding no GPU",
            seen=lambda: _held(cluster),
        )


def _held(cluster: KubeCluster) -> int:
    return int(used(cluster.get(KUEUE, "ClusterQueue", "team-a-cq"), GPU).value)


def _admitted(cluster: KubeCluster, count: int) -> None:
    def settled() -> bool:
        found = workloads_by_job(cluster, NS).values()
        return sum(is_true(w, "QuotaReserved") for w in found) == count

    eventually(settled, what=f"{count} of team-a's Workloads holding quota")
    # and team-a-cq's status caught up with its Workloads
    eventually(
        lambda: _held(cluster) == count,
        what=f"team-a-cq's status counting {count} GPUs",
        seen=lambda: _held(cluster),
    )


def _plan_cut(repo_copy: Path, box: Sandbox) -> tuple[int, dict[str, t.Any]]:
    revs = Revisions(repo_copy)
    try:
        base = revs.commit("base")
        revs.edit(COHORTS, POOL, 'nominalQuota: "0"')
        head = revs.commit("the org-wide pool goes")
    finally:
        revs.repo.close()
    argv = [
        "kueue-gitops",
        "--repo",
        str(repo_copy),
        "plan",
        "diff",
        "--base",
        base,
        "--head",
        head,
    ]
    argv += ["--live", *own_context(box.kubeconfig), "--cluster", "gpu-staging"]
    result = run_line([*argv, "-o", "json"])
    return result.exit_code, json.loads(result.output)


def test_a_cohort_cut_the_tree_can_absorb_is_quiet(
    team_a: KubeCluster, kueue_sandbox: Sandbox, repo_copy: Path
) -> None:
    # team-a runs on its own quota: the pool lends nothing today
    code, doc = _plan_cut(repo_copy, kueue_sandbox)
    assert (code, doc["findings"]) == (0, [])
    [change] = doc["changes"]
    assert (change["kind"], change["name"], change["action"]) == (
        "Cohort",
        "example-org",
        "decreased",
    )


def test_a_cohort_cut_below_what_its_tree_borrows_warns_who_is_exposed(
    team_a: KubeCluster, kueue_sandbox: Sandbox, repo_copy: Path
) -> None:
    # Reservation times have whole seconds: the two Jobs below must be reserved in a later
    # second than every Workload before them, to be the newest in Kueue's preemption order.
    newest = max(
        conditions.condition(w, "QuotaReserved").get("lastTransitionTime") or ""
        for w in workloads_by_job(team_a, NS).values()
    )
    eventually(
        lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) > newest,
        what=f"a second later than the newest reservation ({newest})",
        seconds=5,
    )
    submit(team_a, NS, JOBS[4], "batch-low")
    submit(team_a, NS, JOBS[5], "batch-standard")
    _admitted(team_a, 6)  # 2 borrowed: team-b lends 1, example-org's pool the other
    cq = team_a.get(KUEUE, "ClusterQueue", "team-a-cq")
    assert used(cq, GPU, key="borrowed").value == 2

    code, doc = _plan_cut(repo_copy, kueue_sandbox)
    assert (code, doc["status"]) == (0, "clean")  # a warning: the reviewer decides
    [warning] = doc["findings"]
    assert warning["rule"] == "plan-quota-below-usage" and warning["severity"] == "warning"
    assert (warning["kind"], warning["name"]) == ("Cohort", "example-org")
    # the tree held 4 to lend (team-a 2, team-b 1, the pool 1); team-a draws all 4
    assert (warning["inUse"], warning["over"]) == ("4", "1")
    assert "leaves cohort tree example-org 1 short" in warning["message"]
    assert "(team-a-cq borrowing)" in warning["message"]
    assert "reclaimed by team-b-cq (reclaimWithinCohort: LowerPriority)" in warning["message"]
    # Kueue's victim order: the lowest priority first, the most recently admitted among equals
    [exposed] = warning["exposedWorkloads"]
    assert exposed["namespace"] == NS and exposed["name"].startswith("job-borrow-0-")
    assert warning["file"] == COHORTS and warning["line"] == (
        (repo_copy / COHORTS).read_text().splitlines().index('              nominalQuota: "0"') + 1
    )


def test_the_live_plan_and_the_clusters_drift_open_as_pages_with_the_reports_data(
    team_a: KubeCluster, kueue_sandbox: Sandbox, repo_copy: Path
) -> None:
    code, doc = _plan_cut(repo_copy, kueue_sandbox)
    revs = git.Repo(repo_copy)
    base, head = revs.commit("HEAD~1").hexsha, revs.head.commit.hexsha
    revs.close()
    argv = [
        "kueue-gitops",
        "--repo",
        str(repo_copy),
        "plan",
        "diff",
        "--base",
        base,
        "--head",
        head,
    ]
    argv += ["--live", *own_context(kueue_sandbox.kubeconfig), "--cluster", "gpu-staging"]
    page = run_line([*argv, "-o", "html"])
    assert page.exit_code == code
    quota = opened("plan-live", page.stdout)["quota"]
    [cell] = [c for c in doc["changes"] if c["resource"]]
    assert quota["data"]["series"] == {
        "base": [float(cell["before"])],
        "head": [float(cell["after"])],
    }
    assert quota["rows"] == [[quota["data"]["labels"][0], "1", "0", cell["delta"]]]
    assert [w["rule"] for w in doc["findings"]] == ["plan-quota-below-usage"] * (
        page.stdout.count("<td>plan-quota-below-usage</td>")
    )
    # drift of the same cluster: by category, as its JSON report counts them
    drift = ["kueue-gitops", "--repo", str(ESTATE), "drift", "--cluster", "gpu-staging"]
    drift += own_context(kueue_sandbox.kubeconfig)
    found = json.loads(run_line([*drift, "-o", "json"]).stdout)
    shown = opened("drift-live", run_line([*drift, "-o", "html"]).stdout)["drift"]
    assert shown["data"]["clusters"] == ["gpu-staging"]
    assert shown["data"]["series"] == {
        cat: [sum(f["category"] == cat for f in found["findings"])]
        for cat in sorted({f["category"] for f in found["findings"]})
    }
