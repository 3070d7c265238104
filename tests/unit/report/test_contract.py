"""The JSON report contract: what `-o json` writes keeps report.schema.json, and reads back."""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import typing as t
from pathlib import Path

import pytest

from auditor import rules
from auditor.errors import ConfigError
from auditor.model import BaselineSummary, ClusterResult, Finding, Report, Suppression
from auditor.report import REPORTER_BY_NAME, contract
from tests.conftest import assert_report

DRIFT = Finding(
    rule=rules.get("drift-quota"),
    message="nominalQuota was raised to 24 on the cluster; the repository says 16",
    cluster="gpu-prod",
    api_version="kueue.x-k8s.io/v1beta2",
    kind="ClusterQueue",
    name="team-a-cq",
    file="clusters/gpu-prod/clusterqueues.yaml",
    line=35,
    path="spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu].nominalQuota",
    change="modified",
    desired="16",
    live="24",
    extra={"changedBy": {"manager": "kubectl-edit", "operation": "Update"}},
)
WARNING = Finding(
    rule=rules.get("default-localqueue"),
    message="m",
)  # a warning rule


def written(report: Report) -> dict[str, t.Any]:
    out = io.StringIO()
    REPORTER_BY_NAME["json"](report, out)
    return t.cast(dict[str, t.Any], json.loads(out.getvalue()))


REPORTS = {
    "clean": Report("validate", [], [ClusterResult("gpu-prod")]),
    "schema-sources": Report(
        "validate",
        [],
        [
            ClusterResult("gpu-prod", schemas={"source": "repository", "folder": "schemas/p"}),
            ClusterResult(
                "gpu-a",
                schemas={"source": "package", "kueue": "v0.19.2", "kubernetes": "v1.35.4"},
            ),
        ],
    ),
    "warning-only": Report("validate", [WARNING]),
    "strict-warning": Report("validate", [WARNING], strict=True),
    "drift": Report("drift", [DRIFT, WARNING], [ClusterResult("gpu-prod")]),
    "incomplete": Report(
        "drift", [], [ClusterResult("gpu-prod", "incomplete", ["LIST Workloads: forbidden"])]
    ),
    "baselined": Report(
        "drift",
        [dataclasses.replace(DRIFT, suppressed=Suppression("in the baseline", None, "b.yaml:7"))],
        [ClusterResult("gpu-prod")],
        baseline=BaselineSummary("b.yaml", baselined=1, absent=2),
    ),
}


@pytest.mark.parametrize("report", REPORTS.values(), ids=REPORTS.keys())
def test_the_json_reporter_keeps_the_contract_and_reads_back_the_same(report: Report) -> None:
    doc = written(report)
    assert_report(doc)
    again = contract.from_json(doc)
    assert (again.status, again.exit_code) == (report.status, report.exit_code)
    assert written(again) == doc


def test_a_finding_reads_back_with_its_extra_keys() -> None:
    [finding] = contract.from_json(written(Report("drift", [DRIFT]))).findings
    assert finding == DRIFT


def _broken(change: t.Callable[[dict[str, t.Any]], None]) -> dict[str, t.Any]:
    doc = copy.deepcopy(written(REPORTS["drift"]))
    change(doc)
    return doc


BROKEN: dict[str, t.Callable[[dict[str, t.Any]], None]] = {
    "no-schema-version": lambda d: d.pop("schemaVersion"),
    "version-2": lambda d: d.update(schemaVersion=2),
    "unknown-status": lambda d: d.update(status="dirty"),
    "finding-without-file": lambda d: d["findings"][0].pop("file"),
    "bad-severity": lambda d: d["findings"][0].update(severity="fatal"),
    "bad-change": lambda d: d["findings"][0].update(change="edited"),
    "line-zero": lambda d: d["findings"][0].update(line=0),
    "clean-with-an-error": lambda d: d.update(status="clean"),
    "incomplete-without-a-cluster": lambda d: d.update(status="incomplete"),
    "incomplete-cluster-but-findings": lambda d: d["clusters"][0].update(status="incomplete"),
    "findings-without-one": lambda d: d.update(findings=[]),
    "changes-outside-a-plan": lambda d: d.update(changes=[]),
    "unknown-top-level-key": lambda d: d.update(verdict="ok"),
    "schemas-of-no-source": lambda d: d["clusters"][0].update(schemas={"source": "web"}),
    "packaged-schemas-without-release": lambda d: d["clusters"][0].update(
        schemas={"source": "package", "kubernetes": "v1.35.4"}
    ),
    "baseline-state-without-a-baseline": lambda d: d["findings"][0].update(baselineState="new"),
    "a-baseline-without-states": lambda d: d.update(
        baseline={"file": "b.yaml", "baselined": 0, "absent": 0, "written": False}
    ),
}


@pytest.mark.parametrize("change", BROKEN.values(), ids=BROKEN.keys())
def test_the_schema_catches_a_broken_report(change: t.Callable[[dict[str, t.Any]], None]) -> None:
    assert contract.problems(_broken(change))


def test_a_plan_report_needs_its_revisions_and_changes() -> None:
    doc = written(Report("plan", [], [ClusterResult("gpu-prod")]))
    assert contract.problems(doc)
    change = {
        "cluster": "gpu-prod", "category": "quota", "action": "increased",
        "kind": "ClusterQueue", "namespace": None, "name": "team-a-cq",
        "path": "spec.resourceGroups[0].flavors[a100].resources[nvidia.com/gpu].nominalQuota",
        "before": "16", "after": "20", "delta": "+4", "flavor": "a100",
        "resource": "nvidia.com/gpu", "file": "clusters/gpu-prod/clusterqueues.yaml",
        "line": 35, "summary": "ClusterQueue team-a-cq: a100 nvidia.com/gpu nominalQuota 16 → 20",
    }  # fmt: skip
    doc.update(base="main (0123456789ab)", head="HEAD (ba9876543210)", changes=[change])
    assert contract.problems(doc) == []
    doc["changes"][0]["action"] = "grows"
    assert contract.problems(doc)


def test_read_checks_the_file_and_the_command(tmp_path: Path) -> None:
    path = tmp_path / "drift.json"
    path.write_text(json.dumps(written(REPORTS["drift"])))
    assert contract.read(path, "drift").findings[0] == DRIFT
    with pytest.raises(ConfigError, match="a `drift` report; expected `plan -o json`"):
        contract.read(path, "plan")
    path.write_text(json.dumps(_broken(BROKEN["bad-severity"])))
    with pytest.raises(ConfigError, match=r"not a kueue-gitops JSON report: \$\.findings\[0\]"):
        contract.read(path)
    with pytest.raises(ConfigError, match="not a kueue-gitops JSON report"):
        contract.read(tmp_path / "missing.json")


def test_the_schema_ships_with_the_package() -> None:
    assert contract.schema()["properties"]["schemaVersion"] == {"const": 1}
