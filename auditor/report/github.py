"""GitHub Actions workflow commands: each finding becomes an annotation on its file and line."""

from __future__ import annotations

import typing as t

from auditor.model import Report


def _escape(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def write(report: Report, stream: t.TextIO) -> None:
    for f in report.findings:
        level = "error" if f.severity == "error" else "warning"
        message = f.message
        if f.suppressed is not None:  # shown, but as a notice: it fails nothing
            level = "notice"
            message += f" ({f.suppressed.describe()})"
        loc = f"file={f.file},line={f.line or 1}," if f.file else ""
        title = _escape(f"{f.rule.id}" + (f" ({f.cluster})" if f.cluster else "")).replace(
            ",", "%2C"
        )
        stream.write(f"::{level} {loc}title={title}::{_escape(message)}\n")
    for c in report.clusters:
        for error in c.errors:
            stream.write(f"::error title=incomplete ({c.name})::{_escape(error)}\n")
    if report.baseline is not None and report.baseline.absent:  # fixed: the file can shrink
        stream.write(f"::notice title=baseline::{_escape(report.baseline.describe())}\n")
