"""SARIF 2.1.0 for code scanning: one result per finding, each rule described from its declaration.

An incomplete run says so (`executionSuccessful: false`, the clusters' errors as notifications):
code scanning must not take a run that could not read a cluster for a clean one.
"""

from __future__ import annotations

import json
import typing as t

from auditor import rules
from auditor.model import Finding, Report
from auditor.rules import render

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
Json = dict[str, t.Any]


def write(report: Report, stream: t.TextIO) -> None:
    used = sorted({f.rule for f in report.findings}, key=lambda r: r.id)
    index = {rule: i for i, rule in enumerate(used)}
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kueue-gitops",
                        "version": _version(),
                        "informationUri": rules.REPO_URL,
                        "rules": [descriptor(rule) for rule in used],
                    }
                },
                "invocations": [invocation(report)],
                "results": [_result(f, index[f.rule]) for f in report.findings],
            }
        ],
    }
    json.dump(doc, stream, indent=2)
    stream.write("\n")


def descriptor(rule: rules.Rule) -> Json:
    """A rule as SARIF's reportingDescriptor: what code scanning shows beside each alert."""
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.help},
        "help": {"text": render.help_text(rule), "markdown": render.help_markdown(rule)},
        "helpUri": rule.url,
        "defaultConfiguration": {"level": str(rule.severity)},
        # SARIF's tags are a set (uniqueItems): a rule whose stage is its category has one tag.
        "properties": {
            "category": rule.category,
            "tags": list(dict.fromkeys([rule.category, rule.stage])),
        },
    }


def invocation(report: Report) -> Json:
    out: Json = {"executionSuccessful": not report.incomplete, "exitCode": report.exit_code}
    notes = [
        {"level": "error", "message": {"text": f"cluster {c.name}: {error}"}}
        for c in report.clusters
        if c.status == "incomplete"
        for error in c.errors or ["could not be read completely"]
    ]
    if notes:
        out["toolExecutionNotifications"] = notes
    return out


def _result(f: Finding, rule_index: int) -> Json:
    result: Json = {
        "ruleId": f.rule.id,
        "ruleIndex": rule_index,
        "level": str(f.severity),
        "message": {"text": f.message + (f" (cluster {f.cluster})" if f.cluster else "")},
    }
    if f.file:
        result["locations"] = [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": f.file},
                    "region": {"startLine": f.line or 1},
                }
            }
        ]
    if f.suppressed is not None:  # code scanning shows it as dismissed, with the reason
        result["suppressions"] = [
            {
                "kind": "inSource",  # an annotation or a profile entry: both in the repository
                "status": "accepted",
                "justification": f"{f.suppressed.reason} (until {f.suppressed.expires}; "
                f"{f.suppressed.source})",
            }
        ]
    return result


def _version() -> str:
    from importlib.metadata import version  # ~0.05 s of imports, for SARIF output alone

    return version("kueue-gitops")
