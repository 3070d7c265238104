"""`validate --server-side`: every object dry-run applied against a real API server."""

from __future__ import annotations

import json
from pathlib import Path

from auditor.sandbox import Sandbox
from tests.acceptance.validating import committed_repo
from tests.conftest import own_context, run_line

VALIDATE = ["kueue-gitops", "--repo"]
SERVER_SIDE = ["--server-side", "--cluster", "gpu-prod", "-o", "json"]
BROKEN_CQ = """---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: lonely
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [cpu]
      flavors:
        - name: cpu-only
          resources:
            - name: cpu
              nominalQuota: "1"
              borrowingLimit: "1"
"""


def test_server_rejections_are_findings_with_file_and_line(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    repo = committed_repo(tmp_path)
    cqs = repo / "clusters/gpu-prod/clusterqueues.yaml"
    line = len(cqs.read_text().splitlines()) + 2
    cqs.write_text(cqs.read_text() + BROKEN_CQ)
    result = run_line(
        [*VALIDATE, str(repo), "validate", *SERVER_SIDE, *own_context(sandbox.kubeconfig)]
    )
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["clusters"][0]["status"] == "ok"
    [rejected] = [f for f in report["findings"] if f["rule"] == "server-side-rejected"]
    assert rejected["name"] == "lonely"
    assert (rejected["file"], rejected["line"]) == ("clusters/gpu-prod/clusterqueues.yaml", line)
    assert "borrowingLimit must be nil when cohort is empty" in rejected["message"]
    # offline CEL says the same, and nothing else in the repo is rejected
    assert [f["name"] for f in report["findings"] if f["rule"] == "cel"] == ["lonely"]
    # tenant objects wait for namespaces the repo creates: said, not reported as rejected
    assert "namespace does not exist yet" in result.stderr


def test_an_unreachable_cluster_is_incomplete_not_clean(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: dead\n"
        "clusters: [{name: dead, cluster: {server: 'https://127.0.0.1:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        "contexts: [{name: dead, context: {cluster: dead, user: u}}]\n"
    )
    result = run_line([*VALIDATE, str(repo), "validate", *SERVER_SIDE, *own_context(kubeconfig)])
    report = json.loads(result.stdout)
    assert result.exit_code == 3 and report["status"] == "incomplete"
    assert "unreachable" in report["clusters"][0]["errors"][0]


def test_an_unknown_field_is_a_rejection_not_an_incomplete_run(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """Server-side apply answers an undeclared field with HTTP 500; it is still a verdict."""
    repo = committed_repo(tmp_path)
    cohorts = repo / "clusters/gpu-prod/cohorts.yaml"
    cohorts.write_text(cohorts.read_text().replace("spec: {}", "spec: {parent: typo}"))
    result = run_line(
        [*VALIDATE, str(repo), "validate", *SERVER_SIDE, *own_context(sandbox.kubeconfig)]
    )
    report = json.loads(result.stdout)
    assert result.exit_code == 1 and report["status"] == "findings"
    [rejected] = [f for f in report["findings"] if f["rule"] == "server-side-rejected"]
    assert (
        rejected["kind"] == "Cohort" and ".spec.parent: field not declared" in rejected["message"]
    )
    assert [f["path"] for f in report["findings"] if f["rule"] == "unknown-field"] == [
        "spec.parent"
    ]


def test_a_local_queue_of_a_cluster_queue_the_server_refuses_is_told_why(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    # team-a-cq's quota is no quantity: the API server refuses it, as validate said offline, and
    # team-a's LocalQueue is pointed at that finding rather than told its queue does not exist.
    repo = committed_repo(tmp_path)
    cqs = repo / "clusters/gpu-prod/clusterqueues.yaml"
    cqs.write_text(cqs.read_text().replace('nominalQuota: "256"', "nominalQuota: plenty", 1))
    line = cqs.read_text().splitlines().index("              nominalQuota: plenty") + 1
    result = run_line(
        [*VALIDATE, str(repo), "validate", *SERVER_SIDE, *own_context(sandbox.kubeconfig)]
    )
    found = json.loads(result.stdout)["findings"]
    [rejected] = [f for f in found if f["rule"] == "server-side-rejected"]
    assert (rejected["name"], rejected["file"]) == (
        "team-a-cq",
        "clusters/gpu-prod/clusterqueues.yaml",
    )
    assert "nominalQuota" in rejected["message"]
    [schema] = [f for f in found if f["rule"] == "schema"]
    assert (schema["name"], schema["line"]) == ("team-a-cq", line)
    [invalid] = [f for f in found if f["rule"] == "lq-cluster-queue-invalid"]
    assert (invalid["namespace"], invalid["name"]) == ("team-a", "batch")
    assert f"clusters/gpu-prod/clusterqueues.yaml:{line}: " in invalid["message"]
    assert "lq-cluster-queue-missing" not in {f["rule"] for f in found}
    assert result.exit_code == 1
