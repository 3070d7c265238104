"""The JSON report of docs/contracts.md (schemaVersion 1)."""

from __future__ import annotations

import json
import typing as t

from auditor.model import Report


def write(report: Report, stream: t.TextIO) -> None:
    # one write: json.dump writes each token, a million calls for a large report
    stream.write(json.dumps(report.to_json(), indent=2, default=str) + "\n")
