"""The in-cluster audit for real: `drift` run the way deploy/in-cluster/cronjob.yaml runs it.

The ServiceAccount and its binding come from deploy/in-cluster/; its token from the TokenRequest
API (what kubelet mounts in the pod), written with the sandbox's CA where kubelet would put them;
the API server is named by KUBERNETES_SERVICE_HOST and _PORT, and no kubeconfig exists. The audit
completes under exactly that identity, and fails (forbidden, naming it) once its binding is gone.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import typing as t
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from auditor.errors import ClusterAccessError
from auditor.live.kube import KubeCluster
from auditor.repo import manifests
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import ROOT, run_line, start_sandbox
from tests.integration.drift_live import servable_repo, sync

DEPLOY = ROOT / "deploy/in-cluster"
NAMESPACE = "kueue-monitoring"
ACCOUNT = "kueue-gitops-auditor"
RBAC = "rbac.authorization.k8s.io/v1"


def deployed(name: str) -> list[t.Any]:
    resources, problems = manifests.load_text((DEPLOY / name).read_text(), f"deploy/{name}")
    assert problems == []
    return resources


@pytest.fixture(scope="module")
def pod(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path, dict[str, str]]]:
    """A synced sandbox with the audit's ServiceAccount, and the pod's view: the repository,
    and the environment with the token and CA mounted where KUEUE_GITOPS_SERVICEACCOUNT_DIR says."""
    box = start_sandbox(toolchain, sandboxes_dir, "in-cluster")
    try:
        admin = box.connect()
        work = tmp_path_factory.mktemp("in-cluster")
        repo = servable_repo(work / "repo", admin)
        sync(box, repo)
        with contextlib.suppress(ClusterAccessError):  # the repository may have made it
            admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        for file in ("serviceaccount.yaml", "rbac.yaml"):
            for resource in deployed(file):
                admin.apply(resource.body, manager="argocd-controller")
        answer = admin.request(
            "POST",
            f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{ACCOUNT}/token",
            body={
                "apiVersion": "authentication.k8s.io/v1",
                "kind": "TokenRequest",
                "spec": {"expirationSeconds": 3600},
            },
        )
        mounted = work / "serviceaccount"  # what kubelet mounts at /var/run/secrets/...
        mounted.mkdir()
        (mounted / "token").write_text(answer["status"]["token"])
        shutil.copy(box.pki / "ca.crt", mounted / "ca.crt")
        server = urlsplit(box.server)
        env = {
            "KUBERNETES_SERVICE_HOST": str(server.hostname),
            "KUBERNETES_SERVICE_PORT": str(server.port),
            "KUEUE_GITOPS_IN_CLUSTER": "gpu-prod",
            "KUEUE_GITOPS_SERVICEACCOUNT_DIR": str(mounted),
            "KUBECONFIG": str(work / "no-kubeconfig-here"),
        }
        yield box, repo, env
    finally:
        box.down()


def drift(repo: Path, env: dict[str, str], *argv: str) -> tuple[int, dict[str, t.Any]]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "drift", "-o", "json", *argv], env=env)
    assert result.stdout.startswith("{"), result.stderr
    return result.exit_code, json.loads(result.stdout)


def test_the_deployed_account_is_bound_to_the_read_only_auditor_role() -> None:
    [binding] = deployed("rbac.yaml")
    assert binding.body["roleRef"]["name"] == "kueue-gitops:auditor"
    assert binding.body["subjects"] == [
        {"kind": "ServiceAccount", "name": ACCOUNT, "namespace": NAMESPACE}
    ]
    [job] = deployed("cronjob.yaml")
    spec = job.body["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == ACCOUNT
    [container] = spec["containers"]
    assert container["env"][0]["name"] == "KUEUE_GITOPS_IN_CLUSTER"
    assert 'kueue-gitops drift --cluster "$KUEUE_GITOPS_IN_CLUSTER"' in container["args"][0]


def test_drift_completes_as_the_service_account_from_the_pods_environment(
    pod: tuple[Sandbox, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, repo, env = pod
    code, report = drift(repo, env, "--cluster", "gpu-prod")
    assert (code, report["status"], report["findings"]) == (0, "clean", []), report["clusters"]

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    me = KubeCluster.in_cluster(
        "gpu-prod", account_dir=env["KUEUE_GITOPS_SERVICEACCOUNT_DIR"]
    ).request(
        "POST",
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        body={"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
    )
    assert me["status"]["userInfo"]["username"] == f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"


def test_another_cluster_is_not_read_from_inside_this_one(
    pod: tuple[Sandbox, Path, dict[str, str]],
) -> None:
    _, repo, env = pod
    code, report = drift(repo, env)
    clusters = {c["name"]: c for c in report["clusters"]}
    assert code == 3 and clusters["gpu-prod"]["status"] == "ok"
    [why] = clusters["gpu-staging"]["errors"]
    assert "runs inside cluster gpu-prod" in why and "no credentials for gpu-staging" in why


def test_without_its_binding_the_audit_is_forbidden_and_says_who_it_ran_as(
    pod: tuple[Sandbox, Path, dict[str, str]],
) -> None:
    box, repo, env = pod
    admin = box.connect()
    admin.delete(RBAC, "ClusterRoleBinding", "kueue-gitops:auditor-in-cluster")
    try:
        code, report = drift(repo, env, "--cluster", "gpu-prod")
        assert (code, report["status"]) == (3, "incomplete")
        [cluster] = report["clusters"]
        assert any(
            "forbidden" in e and f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}" in e
            for e in cluster["errors"]
        ), cluster["errors"]
    finally:
        [binding] = deployed("rbac.yaml")
        admin.apply(binding.body, manager="argocd-controller")
