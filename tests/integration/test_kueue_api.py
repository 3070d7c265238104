"""Kueue's Configuration API, derived from the pinned module's Go types, is what this tool
carries (auditor/kueue/api/), and a sandbox's Kueue runs the repository's Configuration."""

from __future__ import annotations

import json

import yaml

from auditor.kueue import config
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox
from auditor.sandbox.build import derive_kueue_api
from tests.conftest import ROOT


def test_the_carried_api_is_what_the_pinned_kueue_module_derives() -> None:
    derived = derive_kueue_api(ROOT / "testenv")
    carried = config.api(derived["kueue"])
    assert carried is not None, f"no auditor/kueue/api/{derived['kueue']}.json"
    stored = json.loads(
        (ROOT / "auditor" / "kueue" / "api" / f"{derived['kueue']}.json").read_text()
    )
    assert stored == derived, "stale: run `kueue-gitops sandbox kueue-api --write`"


def test_every_cluster_profile_names_a_release_whose_api_is_carried() -> None:
    for profile in Repository.open(ROOT).clusters.values():
        version = profile.kueue_version
        assert version and config.api(version) is not None, (
            f"{profile.file}: Kueue {version}: no auditor/kueue/api/{version}.json; run "
            "`kueue-gitops sandbox kueue-api --write` with that release pinned under testenv/"
        )


def test_the_sandboxs_kueue_runs_the_repositorys_configuration(kueue_sandbox: Sandbox) -> None:
    running = yaml.safe_load((kueue_sandbox.dir / "kueue" / "config.yaml").read_text())
    declared = boundaries.kueue_configuration(Repository.open(ROOT), "gpu-staging")
    assert declared is not None
    for field in ("manageJobsWithoutQueueName", "managedJobsNamespaceSelector", "integrations"):
        assert running[field] == declared[field]
    assert running["metrics"]["enableClusterQueueResources"] is True
    assert running["webhook"]["host"] == "127.0.0.1"  # what only a local process changes
    assert running["leaderElection"]["leaderElect"] is False
