"""`schemas fetch` against a real API server: layout, index, determinism."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from auditor.k8s.objects import CRD_API
from auditor.sandbox import Sandbox
from auditor.sandbox.controlplane import sandboxes_root
from auditor.schemas.fetch import crd_fingerprint, dumps, fetch, write
from tests.conftest import own_context, run_line
from tests.estate import ESTATE


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_fetching_twice_leaves_git_diff_empty(sandbox: Sandbox, repo_copy: Path) -> None:
    line = ["kueue-gitops", "--repo", str(repo_copy), "schemas", "fetch", "--cluster", "gpu-prod"]
    line += own_context(sandbox.kubeconfig)
    first = run_line(line)
    assert first.exit_code == 0, first.output
    git(repo_copy, "init", "-q")
    git(repo_copy, "add", ".")
    git(repo_copy, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fetched")
    again = run_line(line)
    assert again.exit_code == 0 and "0 file(s) changed" in again.output
    assert git(repo_copy, "status", "--porcelain") == ""


def test_layout_and_index(sandbox: Sandbox, tmp_path: Path) -> None:
    fetched = fetch(sandbox.connect())
    write(fetched, tmp_path)
    folder = tmp_path / sandbox.name
    assert (folder / "kueue.x-k8s.io/clusterqueue_v1beta2.json").is_file()
    assert (folder / "kueue.x-k8s.io/clusterqueue_v1beta1.json").is_file()
    assert (folder / "core/namespace_v1.json").is_file()
    assert (folder / "rbac.authorization.k8s.io/rolebinding_v1.json").is_file()
    assert (folder / "scheduling.k8s.io/priorityclass_v1.json").is_file()
    index = json.loads((folder / "index.json").read_text())
    cq = index["kinds"]["kueue.x-k8s.io/ClusterQueue"]
    assert cq["served"] == ["v1beta1", "v1beta2"] and cq["storage"] == "v1beta2"
    assert cq["deprecated"] == ["v1beta1"]
    live = sandbox.connect().get(
        CRD_API, "CustomResourceDefinition", "clusterqueues.kueue.x-k8s.io"
    )
    assert cq["hash"] == crd_fingerprint(live)


def test_the_committed_schemas_are_what_the_sandbox_serves(sandbox: Sandbox) -> None:
    """schemas/gpu-prod was fetched from a sandbox of the pinned Kueue: refetch when it moves."""
    fetched = fetch(sandbox.connect())
    fetched.cluster = "gpu-prod"
    committed = ESTATE / "schemas" / "gpu-prod"
    for (group, kind, version), schema in fetched.schemas.items():
        path = committed / (group or "core") / f"{kind.lower()}_{version}.json"
        assert path.read_text() == dumps(schema), f"{path} is stale: run `schemas fetch`"
    assert (committed / "index.json").read_text() == dumps(fetched.index)


def test_a_fingerprint_ignores_what_does_not_change_validation(sandbox: Sandbox) -> None:
    crd = sandbox.connect().get(CRD_API, "CustomResourceDefinition", "cohorts.kueue.x-k8s.io")
    before = crd_fingerprint(crd)
    crd["metadata"]["resourceVersion"] = "1"
    crd["spec"]["conversion"] = {"strategy": "Webhook"}
    crd["status"] = {}
    assert crd_fingerprint(crd) == before
    crd["spec"]["versions"][0]["served"] = not crd["spec"]["versions"][0]["served"]
    assert crd_fingerprint(crd) != before


def test_a_release_sandbox_gives_the_committed_schemas_without_a_cluster(repo_copy: Path) -> None:
    """`schemas fetch --release`: no cluster, no kubeconfig; a sandbox of that Kueue release
    serves exactly what the repository's clusters of that release were fetched from."""
    for cluster, release in (("gpu-prod", "v0.17.0"), ("gpu-legacy", "v0.9.1")):
        line = ["kueue-gitops", "--repo", str(repo_copy), "schemas", "fetch"]
        fetched = run_line([*line, "--cluster", cluster, "--release", release])
        assert fetched.exit_code == 0, fetched.output
        written = repo_copy / "schemas" / cluster
        committed = ESTATE / "schemas" / cluster
        files = sorted(p.relative_to(written) for p in written.rglob("*.json"))
        assert files == sorted(p.relative_to(committed) for p in committed.rglob("*.json"))
        for name in files:
            assert (written / name).read_text() == (committed / name).read_text(), name
    left = [p.name for p in sandboxes_root().iterdir() if p.name.startswith("schemas-")]
    assert not left  # each release sandbox is stopped and removed after its fetch
