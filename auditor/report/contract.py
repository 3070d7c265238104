"""The JSON report's contract (report.schema.json), and reading a report back as a Report.

The schema is what `-o json` promises to consumers; the tests hold every report the commands
write to it, and `kueue-gitops github drift-issue` refuses any input that breaks it.
"""

from __future__ import annotations

import datetime
import functools
import json
import typing as t
from importlib import resources
from pathlib import Path

import jsonschema

from auditor import rules
from auditor.errors import ConfigError
from auditor.model import (
    BaselineSummary,
    ClusterResult,
    Finding,
    Report,
    Severity,
    Suppression,
)

SCHEMA_FILE = "report.schema.json"

# JSON key -> Finding attribute; any other key of a finding is one of its extra keys (the rule,
# severity and category are the rule's).
_OF_THE_RULE = ("rule", "severity", "category")
# Keys a Finding writes from what it holds, read back into it rather than as extra keys.
_DERIVED = (*_OF_THE_RULE, "suppressed", "baselineState")
_FIELDS = {
    "cluster": "cluster",
    "apiVersion": "api_version",
    "kind": "kind",
    "namespace": "namespace",
    "name": "name",
    "file": "file",
    "line": "line",
    "path": "path",
    "message": "message",
    "change": "change",
    "desired": "desired",
    "live": "live",
}


@functools.cache
def schema() -> dict[str, t.Any]:
    text = resources.files("auditor.report").joinpath(SCHEMA_FILE).read_text()
    return t.cast(dict[str, t.Any], json.loads(text))


@functools.cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


def problems(doc: t.Any) -> list[str]:
    """Where `doc` breaks the contract, one line each (empty when it keeps it)."""
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{e.json_path}: {e.message}" for e in errors]


def check(doc: t.Any, source: str) -> None:
    """A ConfigError naming the first problem when `doc` is not a report of this contract."""
    found = problems(doc)
    if found:
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise ConfigError(f"{source}: not a kueue-gitops JSON report: {found[0]}{more}")


def read(path: Path, command: str | None = None) -> Report:
    """The report in `path`, checked against the contract (and to be from `command`)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not a kueue-gitops JSON report ({exc})") from exc
    check(doc, str(path))
    if command is not None and doc["command"] != command:
        raise ConfigError(f"{path}: a `{doc['command']}` report; expected `{command} -o json`")
    try:
        return from_json(doc)
    except (LookupError, ValueError) as exc:  # a rule this version's catalogue does not know
        raise ConfigError(f"{path}: {exc} (written by another kueue-gitops version?)") from exc


def from_json(doc: dict[str, t.Any]) -> Report:
    """A Report equal to the one that wrote `doc` (a valid report), as far as JSON keeps it.

    Raises UnknownRule (a LookupError) or ValueError when a finding's rule, category or
    severity disagrees with the rule catalogue."""
    findings = [_finding(f) for f in doc["findings"]]
    clusters = [
        ClusterResult(
            c["name"],
            c["status"],
            list(c["errors"]),
            c.get("schemas"),
            c.get("throttledSeconds", 0.0),
        )
        for c in doc["clusters"]
    ]
    # --strict is not written down, but it shows: only under it do warnings alone fail a run.
    strict = doc["status"] == "findings" and all(
        f.severity is Severity.WARNING for f in findings if f.suppressed is None
    )
    report = Report(doc["command"], findings, clusters, strict=strict)
    if "baseline" in doc:
        known = doc["baseline"]
        report.baseline = BaselineSummary(
            known["file"], known["baselined"], known["absent"], known["written"]
        )
    return report


def _finding(doc: dict[str, t.Any]) -> Finding:
    rule = rules.get(doc["rule"])
    for key in ("severity", "category"):
        if doc[key] != str(getattr(rule, key)):
            raise ValueError(
                f"rule {rule.id} has {key} {str(getattr(rule, key))!r} ({rule.declared_in}), "
                f"not {doc[key]!r}"
            )
    known = {attr: doc[key] for key, attr in _FIELDS.items() if key in doc}
    extra = {k: v for k, v in doc.items() if k not in _FIELDS and k not in _DERIVED}
    accepted = doc.get("suppressed")
    if accepted is not None:
        expires = accepted["expires"]  # null: a baseline entry (baselineState says it too)
        known["suppressed"] = Suppression(
            accepted["reason"],
            None if expires is None else datetime.date.fromisoformat(expires),
            accepted["source"],
        )
    return Finding(rule, **known, extra=extra)
