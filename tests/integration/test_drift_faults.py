"""When drift cannot read everything: exit 3, the cluster and kind named, nothing claimed clean.

Also: the audit runs under the repo's own least-privilege auditor ClusterRole.
"""

from __future__ import annotations

import shutil
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.drift import audit
from auditor.errors import ClusterAccessError
from auditor.live import access
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.repo.profiles import ClusterProfile
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import own_context, run_line, start_sandbox
from tests.integration.conftest import unread_kinds
from tests.integration.drift_live import (
    CLUSTER,
    KUEUE,
    RBAC,
    drift_json,
    servable_repo,
    sync,
    synced_sandbox,
)

Json = dict[str, t.Any]


@pytest.fixture(scope="module")
def synced(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Sandbox, Path]]:
    repo_dir = tmp_path_factory.mktemp("faults-repo")
    with synced_sandbox(toolchain, sandboxes_dir, repo_dir, "drift-faults") as box_and_repo:
        yield box_and_repo


def test_the_audit_runs_under_the_repos_read_only_auditor_role(
    synced: tuple[Sandbox, Path],
) -> None:
    box, repo = synced
    auditor = box.credentials("kueue-gitops-auditor")
    code, report = drift_json(repo, auditor)
    assert (code, report["status"], report["findings"]) == (0, "clean", [])
    with pytest.raises(ClusterAccessError, match="forbidden"):
        box.connect(auditor).list("v1", "Secret")  # read-only, and never Secrets
    with pytest.raises(ClusterAccessError, match="forbidden"):
        box.connect(auditor).patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {}})


def test_a_forbidden_kind_makes_the_report_incomplete_and_is_never_called_clean(
    synced: tuple[Sandbox, Path],
) -> None:
    box, repo = synced
    admin = box.connect()
    rules = admin.get(RBAC, "ClusterRole", "kueue-gitops:auditor")["rules"]
    for r in rules:  # the same role, without LocalQueues
        r["resources"] = [x for x in r["resources"] if x != "localqueues"]
    made = [
        admin.create(
            {
                "apiVersion": RBAC,
                "kind": "ClusterRole",
                "metadata": {"name": "half-auditor"},
                "rules": rules,
            }
        ),
        admin.create(
            {
                "apiVersion": RBAC,
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "half-auditor"},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "half-auditor",
                },
                "subjects": [{"kind": "User", "name": "half-auditor"}],
            }
        ),
    ]
    admin.delete(KUEUE, "LocalQueue", "batch", "team-a")  # drift it cannot see
    admin.patch(KUEUE, "ClusterQueue", "team-b-cq", {"spec": {"cohortName": "elsewhere"}})
    try:
        code, report = drift_json(repo, box.credentials("half-auditor"))
    finally:
        for obj in made:
            admin.delete(RBAC, obj["kind"], obj["metadata"]["name"])
        sync(box, repo)
    assert code == 3
    assert report["status"] == "incomplete"
    [cluster] = report["clusters"]
    assert cluster["status"] == "incomplete"
    assert any("LIST LocalQueue" in e and "forbidden" in e for e in cluster["errors"])
    assert [f["kind"] for f in report["findings"]] == ["ClusterQueue"]  # what it could read
    text = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo),
            "drift",
            "--cluster",
            CLUSTER,
            *own_context(box.credentials("half-auditor")),
        ]
    )
    assert text.exit_code == 3
    assert "INCOMPLETE gpu-prod: LIST LocalQueue" in text.output


def _kubeconfig_with_a_dead_cluster(box: Sandbox, dest: Path) -> Path:
    """A kubeconfig whose gpu-prod context reaches the sandbox and gpu-staging reaches nothing."""
    doc = yaml.safe_load(box.kubeconfig.read_text())
    [cluster], [context] = doc["clusters"], doc["contexts"]
    dead = {"name": "dead", "cluster": {**cluster["cluster"], "server": "https://127.0.0.1:9"}}
    doc["clusters"] = [{**cluster, "name": "prod"}, dead]
    doc["contexts"] = [
        {"name": "gpu-prod", "context": {**context["context"], "cluster": "prod"}},
        {"name": "gpu-staging", "context": {**context["context"], "cluster": "dead"}},
    ]
    doc["current-context"] = "gpu-prod"
    dest.write_text(yaml.safe_dump(doc))
    return dest


def test_an_unreachable_second_cluster_leaves_the_first_audited(
    synced: tuple[Sandbox, Path], tmp_path: Path
) -> None:
    box, repo = synced
    kubeconfig = str(_kubeconfig_with_a_dead_cluster(box, tmp_path / "kc"))

    def connect(profile: ClusterProfile) -> KubeCluster:  # each profile's own context
        return access.connect(profile, kubeconfig=kubeconfig, context=profile.context)

    report = audit.audit(Repository.open(repo), ["gpu-prod", "gpu-staging"], connect)
    assert report.exit_code == 3
    out = report.to_json()
    clusters = {c["name"]: c for c in out["clusters"]}
    assert clusters["gpu-prod"] == {"name": "gpu-prod", "status": "ok", "errors": []}
    assert clusters["gpu-staging"]["status"] == "incomplete"
    assert "unreachable" in clusters["gpu-staging"]["errors"][0]
    assert out["status"] == "incomplete"
    assert out["findings"] == []  # gpu-prod is clean; gpu-staging is not called anything


class _StopsMidAudit(KubeCluster):
    """The real client; the sandbox's API server is stopped right after the third LIST."""

    box: Sandbox
    lists = 0

    def list(
        self, api_version: str, kind: str, *, page_size: int = 500, selector: str = ""
    ) -> list[Json]:
        items = super().list(api_version, kind, page_size=page_size, selector=selector)
        self.lists += 1
        if self.lists == 3:
            self.box.down()
        return items


def test_the_api_server_stopped_mid_audit(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path: Path
) -> None:
    box = start_sandbox(toolchain, sandboxes_dir, "drift-stopped")
    try:
        repo = servable_repo(tmp_path, box.connect())
        sync(box, repo)

        def connect(profile: ClusterProfile) -> KubeCluster:
            cluster = _StopsMidAudit(box.connect().api, profile.name)
            cluster.box = box
            return cluster

        report = audit.audit(Repository.open(repo), [CLUSTER], connect)
    finally:
        box.down()
    assert report.exit_code == 3
    [cluster] = report.clusters
    assert cluster.status == "incomplete"
    # the plan's first three (drift/reading.py): the CRDs and the selector kinds the profile
    # watches; the fourth is the next kind that needs no repository (the other RBAC kinds are
    # read before the plan is waited on), then the repository's own (its admission policies)
    read = {"CustomResourceDefinition", "ClusterRole", "ClusterQueue"}
    assert "unreachable" in cluster.errors[0]
    assert cluster.errors[0].startswith("LIST ClusterRoleBinding")
    not_read = set(unread_kinds(cluster.errors))
    assert {"Namespace", "PriorityClass", "Role", "RoleBinding", "LocalQueue"} <= not_read
    assert "ValidatingAdmissionPolicy" in not_read
    assert not read & not_read
    assert [f for f in report.findings if f.kind not in read] == []
    assert report.findings == []


def test_objects_of_a_file_that_did_not_load_are_not_compared_never_unmanaged(
    synced: tuple[Sandbox, Path], tmp_path: Path
) -> None:
    """A list at the top level, a byte that is not UTF-8 in a comment: each file's own finding
    says so; the live objects they define are "not compared", naming the file. Before, they
    came out of drift as unmanaged."""
    box, synced_repo = synced
    repo = tmp_path / "repo"
    shutil.copytree(synced_repo, repo)
    queues = repo / "tenants/team-a/gpu-prod/localqueues.yaml"
    queues.write_text(yaml.safe_dump(list(yaml.safe_load_all(queues.read_text()))))
    cqs = repo / "clusters/gpu-prod/clusterqueues.yaml"
    cqs.write_bytes(b"# caf\xe9 au lait\n" + cqs.read_bytes())
    code, report = drift_json(repo, box.kubeconfig)
    assert code == 1 and report["status"] == "findings"
    assert [f for f in report["findings"] if f.get("change") == "unmanaged"] == []
    files = {(f["rule"], f["file"]) for f in report["findings"]}
    assert ("not-a-mapping", "tenants/team-a/gpu-prod/localqueues.yaml") in files
    assert ("not-utf8", "clusters/gpu-prod/clusterqueues.yaml") in files
    not_compared = {
        (f["kind"], f["name"], f["file"])
        for f in report["findings"]
        if f["rule"] == "drift-not-compared"
    }
    assert not_compared == {
        ("LocalQueue", "batch", "tenants/team-a/gpu-prod/localqueues.yaml"),
        *(
            ("ClusterQueue", name, "clusters/gpu-prod/clusterqueues.yaml")
            for name in ("team-a-cq", "team-b-cq")
        ),
    }
