"""The JSON report of ARCHITECTURE.md (schemaVersion 1)."""

from __future__ import annotations

import json
import typing as t

from auditor.model import Report


def write(report: Report, stream: t.TextIO) -> None:
    json.dump(report.to_json(), stream, indent=2, default=str)
    stream.write("\n")
