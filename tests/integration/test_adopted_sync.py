"""An imported repository, once `init --adopt` wrote what it lacked, is synced by a real Argo CD
(the pinned release) through the ApplicationSets and AppProjects adopt wrote: every Application
Synced and Healthy, the imported tenants' and a tenant added after, on a sandbox running Kueue."""

from __future__ import annotations

import os
import typing as t
from pathlib import Path

from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, argocd, argocd_control
from tests import adopted
from tests.conftest import run_line
from tests.installed import git

SYNC_TIMEOUT = 240.0


def kg(repo: Path, *argv: str) -> None:
    result = run_line(["kueue-gitops", "--repo", str(repo), *argv])
    assert result.exit_code == 0, (argv, result.output)


def test_argo_cd_syncs_what_init_adopt_wrote_for_an_imported_repository(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path: Path
) -> None:
    repo = adopted.imported(tmp_path / "estate")
    git(repo, "init", "-q", "-b", "main")
    kg(repo, "init", "--adopt", "--repo-url", adopted.REPO_URL)
    adopted.warn_first(repo)
    kg(repo, "generate", "policies")
    kg(repo, "tenant", "add", "speech", "--cluster", adopted.CLUSTER, "--owner", "@company/speech",
       "--group", "oidc:speech", "--quota", "a100.nvidia.com/gpu=2")  # fmt: skip
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "import, adopt, policies in Warn, tenant speech")
    opened = Repository.open(repo)
    box = Sandbox(f"adopted-{os.getpid()}", root=sandboxes_dir)
    try:
        config = boundaries.kueue_configuration(opened, adopted.CLUSTER)
        box.up(toolchain, with_kueue=True, kueue_config=config)
        argocd.start(box, {adopted.CLUSTER: box}, opened, toolchain.testenv, log=print)
        wanted = {f"{adopted.CLUSTER}-platform"}
        wanted |= {f"{t}-{adopted.CLUSTER}" for t in (*adopted.TEAMS, "speech")}

        def synced(apps: dict[str, t.Any]) -> bool:
            return set(apps) == wanted and all(
                argocd_control.sync_status(a) == ("Synced", "Healthy") for a in apps.values()
            )

        apps = argocd_control.wait_for(
            box, synced, timeout=SYNC_TIMEOUT, what="every Application Synced/Healthy"
        )
        projects = {a["spec"]["project"] for a in apps.values()}
        assert projects == {"kueue-platform", "tenant-nlp", "tenant-vision", "tenant-speech"}
        live = box.connect()
        assert live.get("kueue.x-k8s.io/v1beta2", "LocalQueue", "jobs", "speech")
        assert live.get(
            "monitoring.coreos.com/v1", "PrometheusRule", "kueue-alerts", "kueue-monitoring"
        )
    finally:
        box.down()
