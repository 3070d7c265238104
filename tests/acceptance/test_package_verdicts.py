"""The installed wheel (nothing of this checkout on the path, an empty repository of the
user's) judges what the API server and Kueue would, from the knowledge it ships: the formats of
the schemas, and what each cluster's Kueue release's webhooks refuse and hold immutable."""

from __future__ import annotations

import json
from pathlib import Path

from tests.acceptance.user_repos import user_repo
from tests.installed import run

CHECKED_ON_FLAVOR = """
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: checked}
spec:
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{name: cpu-only, resources: [{name: cpu, nominalQuota: "1"}]}]
  admissionChecksStrategy:
    admissionChecks: [{name: capacity, onFlavors: [h100]}]
"""


def test_the_installed_tool_says_what_the_server_and_each_release_do(
    base_install: Path, tmp_path: Path
) -> None:
    repo = user_repo(tmp_path / "platform")
    priorities = repo / "clusters/gpu-prod/priorityclasses.yaml"
    priorities.write_text(priorities.read_text().replace("value: 100\n", "value: 3000000000\n", 1))
    for cluster in ("gpu-prod", "gpu-staging"):  # Kueue v0.17.0 and v0.19.2
        queues = repo / f"clusters/{cluster}/clusterqueues.yaml"
        queues.write_text(queues.read_text() + CHECKED_ON_FLAVOR)
    result = run([str(base_install), "validate", "-o", "json"], repo)
    assert result.returncode == 1, result.stderr
    found = {(f["cluster"], f["rule"]): f for f in json.loads(result.stdout)["findings"]}
    stored = found[("gpu-prod", "format-undecodable")]
    assert (stored["file"], stored["path"]) == ("clusters/gpu-prod/priorityclasses.yaml", "value")
    assert "listing any WorkloadPriorityClass fails" in stored["message"]
    refused = found[("gpu-staging", "admission-check-flavor-unknown")]
    assert "Kueue v0.19.2's webhook refuses this ClusterQueue" in refused["message"]
    accepted = found[("gpu-prod", "admission-check-flavor-ignored")]
    assert "Kueue v0.17.0 accepts the queue" in accepted["message"]
