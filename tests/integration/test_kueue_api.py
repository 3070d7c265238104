"""What this tool knows of each pinned Kueue release (auditor/kueue/api/<release>.json: its
Configuration API, frameworks, webhook verdicts and CRDs) is what that release derives again
from its own module, and a sandbox's Kueue runs the repository's Configuration."""

from __future__ import annotations

import json

import pytest
import yaml

from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, releases
from auditor.sandbox.build import derive_kueue_api
from tests.conftest import ROOT
from tests.estate import ESTATE

PINNED = [None, *releases.pinned(ROOT / "testenv")]  # None: the control plane's own


@pytest.mark.parametrize("version", PINNED, ids=[v or "control-plane" for v in PINNED])
def test_the_carried_knowledge_is_what_each_pinned_release_derives(version: str | None) -> None:
    derived = derive_kueue_api(ROOT / "testenv", version)
    assert version in (None, derived["kueue"])
    stored = ROOT / "auditor" / "kueue" / "api" / f"{derived['kueue']}.json"
    flag = f" --kueue {version}" if version else ""
    assert stored.is_file(), f"not carried: run `kueue-gitops sandbox kueue-api{flag} --write`"
    assert json.loads(stored.read_text()) == derived, (
        f"stale: run `kueue-gitops sandbox kueue-api{flag} --write`"
    )


def test_each_release_states_its_own_configuration_api_and_webhooks() -> None:
    legacy = derive_kueue_api(ROOT / "testenv", "v0.9.1")
    current = derive_kueue_api(ROOT / "testenv", "v0.19.2")
    config = {v["kueue"]: v["configuration"]["properties"] for v in (legacy, current)}
    assert config["v0.9.1"]["apiVersion"] == {"const": "config.kueue.x-k8s.io/v1beta1"}
    assert config["v0.19.2"]["apiVersion"] == {"const": "config.kueue.x-k8s.io/v1beta2"}
    assert "managedJobsNamespaceSelector" not in config["v0.9.1"]
    # v0.9.1's webhooks cap no counts and take any non-negative weight; v0.19.2's do.
    assert {k: v["max"] for k, v in legacy["webhooks"]["limits"].items()} == {
        "flavors": None, "coveredResources": None, "flavorResourcePairs": None
    }  # fmt: skip
    assert {k: v["max"] for k, v in current["webhooks"]["limits"].items()} == {
        "flavors": 256, "coveredResources": 256, "flavorResourcePairs": 512
    }  # fmt: skip
    assert legacy["webhooks"]["rules"]["fair-sharing-weight-tiny"]["refused"] is False
    assert current["webhooks"]["rules"]["fair-sharing-weight-tiny"]["refused"] is True


def test_the_sandboxs_kueue_runs_the_repositorys_configuration(kueue_sandbox: Sandbox) -> None:
    running = yaml.safe_load((kueue_sandbox.dir / "kueue" / "config.yaml").read_text())
    declared = boundaries.kueue_configuration(Repository.open(ESTATE), "gpu-staging")
    state = kueue_sandbox.state()
    assert state is not None and state.versions["sigs.k8s.io/kueue"] == "v0.19.2"
    assert declared is not None
    for field in ("manageJobsWithoutQueueName", "managedJobsNamespaceSelector", "integrations"):
        assert running[field] == declared[field]
    assert running["metrics"]["enableClusterQueueResources"] is True
    assert running["webhook"]["host"] == "127.0.0.1"  # what only a local process changes
    assert running["leaderElection"]["leaderElect"] is False
