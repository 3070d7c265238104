"""`plan -o FORMAT`: the plan is a report like any other, written through the shared `-o` in
every format, its exit status the report's whatever the format."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from auditor.report import REPORTER_BY_NAME
from tests.conftest import run_line
from tests.unit.conftest import Revisions

LQS = "tenants/team-b/gpu-prod/localqueues.yaml"


@pytest.fixture
def removal(revs: Revisions) -> tuple[Revisions, str, int]:
    """A change that removes team-b's LocalQueue on gpu-prod (plan-removes-queue, an error)."""
    line = revs.line_of(LQS, "kind: LocalQueue") - 1
    (revs.root / LQS).unlink()
    return revs, revs.commit("drop team-b's queue"), line


def plan(revs: Revisions, head: str, output: str, base: str = "base") -> tuple[int, str]:
    argv = [
        "kueue-gitops",
        "--repo",
        str(revs.root),
        "plan",
        "diff",
        "--base",
        base,
        "--head",
        head,
    ]
    result = run_line([*argv, "-o", output])
    return result.exit_code, result.stdout


def test_every_format_exits_with_the_reports_status(removal: tuple[Revisions, str, int]) -> None:
    revs, head, _ = removal
    codes = {output: plan(revs, head, output)[0] for output in REPORTER_BY_NAME}
    assert codes == dict.fromkeys(REPORTER_BY_NAME, 1)
    assert plan(revs, head, "sarif", base=head)[0] == 0  # no change, nothing found


def test_sarif_junit_and_annotations_point_at_the_removed_queues_line(
    removal: tuple[Revisions, str, int],
) -> None:
    revs, head, line = removal
    [run] = json.loads(plan(revs, head, "sarif")[1])["runs"]
    [result] = run["results"]
    where = result["locations"][0]["physicalLocation"]
    assert (result["ruleId"], result["level"]) == ("plan-removes-queue", "error")
    assert (where["artifactLocation"]["uri"], where["region"]["startLine"]) == (LQS, line)
    suite = ET.fromstring(plan(revs, head, "junit")[1])
    failed = [
        (c.get("classname"), c.get("name"), c.get("file"), c.get("line"))
        for c in suite.iter("testcase")
        if c.find("failure") is not None
    ]
    assert failed == [("plan-removes-queue", "gpu-prod/LocalQueue/team-b/batch", LQS, str(line))]
    annotations = plan(revs, head, "github")[1]
    assert annotations.startswith(f"::error file={LQS},line={line},title=plan-removes-queue")


def test_text_and_markdown_show_the_plan_json_adds_its_changes(
    removal: tuple[Revisions, str, int],
) -> None:
    revs, head, _ = removal
    text = plan(revs, head, "text")[1]
    assert text.startswith("plan base (") and "plan-removes-queue" in text
    assert plan(revs, head, "markdown")[1].startswith("<!-- kueue-gitops-plan -->")
    doc = json.loads(plan(revs, head, "json")[1])  # run_line holds it to report.schema.json
    assert (doc["command"], doc["status"]) == ("plan", "findings")
    assert doc["base"].startswith("base (") and doc["head"].startswith(head)
    assert [(c["kind"], c["action"]) for c in doc["changes"]] == [("LocalQueue", "removed")]
