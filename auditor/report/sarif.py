"""SARIF 2.1.0 for code scanning: one result per finding located in the repository."""

from __future__ import annotations

import json
import typing as t
from importlib.metadata import version

from auditor.model import Report


def write(report: Report, stream: t.TextIO) -> None:
    rules = sorted({f.rule for f in report.findings})
    results = []
    for f in report.findings:
        result: dict[str, t.Any] = {
            "ruleId": f.rule,
            "level": "error" if f.severity == "error" else "warning",
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
        results.append(result)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kueue-gitops",
                        "version": version("kueue-gitops"),
                        "rules": [{"id": r} for r in rules],
                    }
                },
                "results": results,
            }
        ],
    }
    json.dump(doc, stream, indent=2)
    stream.write("\n")
