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
    run: Json = {
        "tool": {
            "driver": {
                "name": "kueue-gitops",
                "version": _version(),
                "informationUri": rules.REPO_URL,
                "rules": [descriptor(rule) for rule in used],
            }
        },
        "invocations": [invocation(report)],
        "results": [_result(f, index[f.rule], report) for f in report.findings],
    }
    if report.baseline is not None:  # the counts, beside the results' baselineState
        run["properties"] = {"baseline": report.baseline.to_json()}
    doc = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
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


def _result(f: Finding, rule_index: int, report: Report) -> Json:
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
    accepted = f.suppressed
    if accepted is not None:  # code scanning shows it as dismissed, with the reason
        until = "" if accepted.expires is None else f"until {accepted.expires}; "
        result["suppressions"] = [
            {
                # an annotation or a profile entry is in the source; a baseline, a file apart
                "kind": "external" if accepted.baselined else "inSource",
                "status": "accepted",
                "justification": f"{accepted.reason} ({until}{accepted.source})",
            }
        ]
    if report.baseline is not None:
        # Entries that match nothing are counted in the run's properties, not written as
        # "absent" results: code scanning would open an alert for each.
        result["baselineState"] = "unchanged" if accepted and accepted.baselined else "new"
    return result


def _version() -> str:
    from importlib.metadata import version  # ~0.05 s of imports, for SARIF output alone

    return version("kueue-gitops")
