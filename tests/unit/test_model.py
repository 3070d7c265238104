from __future__ import annotations

import io
import json

import pytest

from auditor import rules
from auditor.model import ClusterResult, Finding, Report, Severity
from auditor.report import REPORTER_BY_NAME

# Two quota rules the catalogue rates differently: a finding's severity is its rule's.
RULE_OF = {
    Severity.ERROR: rules.get("capacity-exceeded"),
    Severity.WARNING: rules.get("borrowing-over-lendable"),
}


def _finding(severity: Severity) -> Finding:
    return Finding(
        rule=RULE_OF[severity],
        message="m",
        cluster="gpu-prod",
        kind="ClusterQueue",
        name="team-a-cq",
        file="clusters/gpu-prod/clusterqueues.yaml",
        line=3,
    )


@pytest.mark.parametrize(
    ("findings", "clusters", "strict", "status", "code"),
    [
        ([], [], False, "clean", 0),
        ([Severity.WARNING], [], False, "clean", 0),
        ([Severity.WARNING], [], True, "findings", 1),
        ([Severity.ERROR], [], False, "findings", 1),
        ([], ["incomplete"], False, "incomplete", 3),
        ([Severity.ERROR], ["ok", "incomplete"], False, "incomplete", 3),
    ],
    ids=["clean", "warning", "strict-warning", "error", "incomplete", "incomplete-wins"],
)
def test_exit_code_and_status(
    findings: list[Severity], clusters: list[str], strict: bool, status: str, code: int
) -> None:
    report = Report(
        "validate",
        [_finding(s) for s in findings],
        [ClusterResult(f"c{i}", s) for i, s in enumerate(clusters)],  # type: ignore[arg-type]
        strict=strict,
    )
    assert (report.status, report.exit_code) == (status, code)


def test_json_report_follows_the_contract() -> None:
    report = Report("drift", [_finding(Severity.ERROR)], [ClusterResult("gpu-prod")])
    out = io.StringIO()
    REPORTER_BY_NAME["json"](report, out)
    doc = json.loads(out.getvalue())
    assert doc["schemaVersion"] == 1 and doc["command"] == "drift"
    assert doc["status"] == "findings"
    assert doc["clusters"] == [{"name": "gpu-prod", "status": "ok", "errors": []}]
    [f] = doc["findings"]
    assert {
        "rule",
        "severity",
        "category",
        "cluster",
        "apiVersion",
        "kind",
        "namespace",
        "name",
        "file",
        "line",
        "path",
        "message",
    } <= set(f)


@pytest.mark.parametrize("fmt", sorted(REPORTER_BY_NAME))
def test_every_format_names_the_file_of_a_finding(fmt: str) -> None:
    out = io.StringIO()
    REPORTER_BY_NAME[fmt](Report("validate", [_finding(Severity.ERROR)]), out)
    assert "clusters/gpu-prod/clusterqueues.yaml" in out.getvalue()


class _Checks:
    """A section as verify's is: keys of its own beside the report's."""

    def __init__(self, **keys: object) -> None:
        self.keys = keys

    def to_json(self) -> dict[str, object]:
        return dict(self.keys)


def test_a_sections_keys_join_the_json_report_and_decide_nothing() -> None:
    report = Report("verify", [_finding(Severity.ERROR)], section=_Checks(checks=[], seconds=2.0))
    doc = report.to_json()
    assert (doc["status"], doc["checks"], doc["seconds"]) == ("findings", [], 2.0)
    assert report.exit_code == 1  # the findings', whatever the section holds


def test_a_section_may_not_replace_the_reports_own_keys() -> None:
    report = Report("status", section=_Checks(status="clean", findings=[]))
    with pytest.raises(ValueError, match=r"\['findings', 'status'\]"):
        report.to_json()
