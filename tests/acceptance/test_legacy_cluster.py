"""The legacy cluster (Kueue v0.9.1) validates against its own schemas: v1beta2 is not there."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

from tests.conftest import run_line
from tests.estate import ESTATE

Json = dict[str, t.Any]
QUEUES = "clusters/gpu-legacy/clusterqueues.yaml"


def validate(repo: Path) -> tuple[int, list[Json]]:
    result = run_line(
        ["kueue-gitops", "--repo", str(repo), "validate", "--cluster", "gpu-legacy",
         "--schemas", str(ESTATE / "schemas"), "-o", "json"]
    )  # fmt: skip
    return result.exit_code, json.loads(result.stdout)["findings"]


def test_the_legacy_cluster_validates_clean() -> None:
    code, findings = validate(ESTATE)
    assert code == 0, findings
    # Kueue v0.9.1 cannot restrict the namespaces it manages: accepted until the upgrade.
    assert [f["rule"] for f in findings] == ["kueue-config-unmanaged-jobs"]
    assert findings[0]["suppressed"]["expires"] == "2027-06-30"


def test_a_v1beta2_field_in_the_legacy_folder_is_a_finding(repo_copy: Path) -> None:
    path = repo_copy / QUEUES
    text = path.read_text()
    path.write_text(text.replace("  cohort: legacy-shared ", "  cohortName: legacy-shared ", 1))
    code, findings = validate(repo_copy)
    assert code == 1
    [found] = [f for f in findings if f["rule"] == "unknown-field"]
    assert (found["name"], found["path"], found["file"], found["line"]) == (
        "team-a-cq", "spec.cohortName", QUEUES, 8,
    )  # fmt: skip
    # read as v1beta1, the queue is in no cohort now: the CRD's own CEL and the policy both
    # refuse its borrowing limit
    assert {f["rule"] for f in findings if f["name"] == "team-a-cq"} == {
        "unknown-field", "cel", "limit-without-cohort",
    }  # fmt: skip


def test_a_v1beta2_manifest_in_the_legacy_folder_is_not_served(repo_copy: Path) -> None:
    path = repo_copy / "clusters" / "gpu-legacy" / "resourceflavors.yaml"
    path.write_text(path.read_text().replace("kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2", 1))
    code, findings = validate(repo_copy)
    assert code == 1
    [found] = [f for f in findings if f["rule"] == "version-not-served"]
    assert (found["kind"], found["name"]) == ("ResourceFlavor", "cpu-only")
    assert (
        "does not serve kueue.x-k8s.io/v1beta2 ResourceFlavor (served: v1beta1)"
        in (found["message"])
    )
