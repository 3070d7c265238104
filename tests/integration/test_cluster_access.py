"""Cluster access as kubectl users expect, over two real clusters.

gpu-prod and gpu-staging are two sandboxes, each synced from its own cluster folder. Their
kubeconfigs name contexts like the profiles do (gpu-prod, gpu-staging). Whether the contexts sit in
two files merged through $KUBECONFIG or in one --kubeconfig file whose current context is
gpu-prod, each cluster must be read at its own server: reading gpu-staging through gpu-prod's
context would show gpu-prod's quotas as drift.
"""

from __future__ import annotations

import json
import os
import typing as t
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import run_line
from tests.integration.conftest import repo_kueue_release
from tests.integration.drift_live import KUEUE, servable_repo

CLUSTERS = ("gpu-prod", "gpu-staging")
BOTH = ("--cluster", "gpu-prod", "--cluster", "gpu-staging")  # the repo may have more clusters
Json = dict[str, t.Any]


def renamed(box: Sandbox, context: str, path: Path) -> Path:
    """`box`'s admin kubeconfig with its context, cluster and user named `context`."""
    doc = yaml.safe_load(box.kubeconfig.read_text())
    doc["clusters"][0]["name"] = doc["users"][0]["name"] = context
    doc["contexts"] = [{"name": context, "context": {"cluster": context, "user": context}}]
    doc["current-context"] = context
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture(scope="module")
def two(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[Path, dict[str, Sandbox], dict[str, Path]]]:
    """The repo, both sandboxes synced from it, and each one's kubeconfig. Each serves the CRDs
    of the Kueue release its profile names, as the cluster would."""
    work = tmp_path_factory.mktemp("access")
    boxes: dict[str, Sandbox] = {}
    try:
        for name in CLUSTERS:
            boxes[name] = Sandbox(f"access-{name}-{os.getpid()}", root=sandboxes_dir)
            try:
                boxes[name].up(toolchain, kueue_release=repo_kueue_release(toolchain, name))
            except Exception as exc:
                pytest.fail(f"the sandbox of {name} could not start: {exc}", pytrace=False)
        repo = servable_repo(work / "repo", boxes["gpu-prod"].connect())
        loaded = Repository.open(repo).load(list(CLUSTERS))
        for name, box in boxes.items():
            applied = apply_all(box.connect(), loaded.for_cluster(name))
            assert [(str(a.resource.key), a.error) for a in applied if a.error] == []
        configs = {
            name: renamed(box, name, work / f"{name}.kubeconfig") for name, box in boxes.items()
        }
        yield repo, boxes, configs
    finally:
        for box in boxes.values():
            box.down()


def drift(repo: Path, *argv: str, env: dict[str, str] | None = None) -> tuple[int, Json]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "drift", "-o", "json", *argv], env=env)
    assert result.stdout.startswith("{"), result.stderr
    return result.exit_code, json.loads(result.stdout)


def test_merged_kubeconfig_files_reach_each_cluster_through_its_profile_context(
    two: tuple[Path, dict[str, Sandbox], dict[str, Path]],
) -> None:
    repo, boxes, configs = two
    merged = os.pathsep.join(str(configs[name]) for name in CLUSTERS)
    code, report = drift(repo, *BOTH, env={"KUBECONFIG": merged})
    assert [(c["name"], c["status"]) for c in report["clusters"]] == [
        ("gpu-prod", "ok"),
        ("gpu-staging", "ok"),
    ]
    assert (code, report["findings"]) == (0, [])

    # A change on gpu-staging's server shows up for gpu-staging, and only there.
    staging = boxes["gpu-staging"].connect()
    staging.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "Hold"}})
    try:
        code, report = drift(repo, *BOTH, env={"KUBECONFIG": merged})
        assert code == 1
        assert [(f["cluster"], f["name"], f["path"]) for f in report["findings"]] == [
            ("gpu-staging", "team-a-cq", "spec.stopPolicy")
        ]
    finally:
        staging.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "None"}})


def test_one_kubeconfig_file_with_two_contexts_is_not_read_through_its_current_context(
    two: tuple[Path, dict[str, Sandbox], dict[str, Path]], tmp_path: Path
) -> None:
    """The pull-request workflow's case: one file, current context gpu-prod, two clusters."""
    repo, _, configs = two
    docs = [yaml.safe_load(configs[name].read_text()) for name in CLUSTERS]
    both = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "gpu-prod",
        **{key: [d[key][0] for d in docs] for key in ("clusters", "users", "contexts")},
    }
    kubeconfig = tmp_path / "both.kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(both))
    code, report = drift(repo, *BOTH, "--kubeconfig", str(kubeconfig))
    assert (code, report["status"], report["findings"]) == (0, "clean", [])

    # status -o json is a snapshot, not a findings report: not through run_line's contract
    argv = ["--repo", str(repo), "status", "--cluster", "gpu-staging"]
    status = CliRunner().invoke(cli, [*argv, "--kubeconfig", str(kubeconfig), "-o", "json"])
    assert status.exit_code == 0, status.stderr
    queues = {q["name"] for q in json.loads(status.stdout)["clusterQueues"]}
    staging = Repository.open(repo).load(["gpu-staging"]).for_cluster("gpu-staging")
    assert queues == {r.name for r in staging if r.kind == "ClusterQueue"}


def test_context_with_several_clusters_is_a_usage_error(
    two: tuple[Path, dict[str, Sandbox], dict[str, Path]],
) -> None:
    repo, _, configs = two
    for argv in (
        ["drift", "--context", "gpu-prod"],
        ["drift", "--context", "gpu-prod", "--cluster", "gpu-prod", "--cluster", "gpu-staging"],
        ["plan", "diff", "--base", "HEAD", "--live", "--context", "gpu-prod"],
        ["validate", "--server-side", "--context", "gpu-prod"],
    ):
        result = run_line(
            ["kueue-gitops", "--repo", str(repo), *argv, "--kubeconfig", str(configs["gpu-prod"])]
        )
        assert result.exit_code == 2, (argv, result.output)
        assert "name exactly one --cluster" in result.stderr, argv

    # With one --cluster, --context reaches that cluster through the named context.
    code, report = drift(
        repo,
        *("--cluster", "gpu-staging", "--context", "gpu-staging"),
        env={"KUBECONFIG": os.pathsep.join(str(p) for p in configs.values())},
    )
    assert (code, [c["name"] for c in report["clusters"]]) == (0, ["gpu-staging"])


def test_a_profile_entry_accepts_live_drift_until_it_expires(
    two: tuple[Path, dict[str, Sandbox], dict[str, Path]],
) -> None:
    """Drift on a live object is accepted through the cluster profile, and counts again once
    the entry has expired."""
    repo, boxes, configs = two
    merged = os.pathsep.join(str(configs[name]) for name in CLUSTERS)
    staging = boxes["gpu-staging"].connect()
    profile = repo / "clusters/gpu-staging/profile.yaml"
    original = profile.read_text()
    entry = (
        "  suppressions:\n"
        "    - {rule: drift-stop-policy, kind: ClusterQueue, name: team-a-cq, "
        "reason: held by hand for the migration window, expires: EXPIRES}\n"
    )
    staging.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "Hold"}})
    try:
        profile.write_text(original + entry.replace("EXPIRES", "2999-01-31"))
        code, report = drift(repo, "--cluster", "gpu-staging", env={"KUBECONFIG": merged})
        [found] = report["findings"]
        assert (code, report["status"], found["rule"]) == (0, "clean", "drift-stop-policy")
        assert found["suppressed"]["reason"] == "held by hand for the migration window"

        profile.write_text(original + entry.replace("EXPIRES", "2020-01-31"))
        code, report = drift(repo, "--cluster", "gpu-staging", env={"KUBECONFIG": merged})
        [found] = report["findings"]
        assert code == 1 and "suppressed" not in found
        assert "its suppression expired on 2020-01-31" in found["message"]
    finally:
        profile.write_text(original)
        staging.patch(KUEUE, "ClusterQueue", "team-a-cq", {"spec": {"stopPolicy": "None"}})
