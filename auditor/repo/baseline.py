"""A baseline: the findings an estate already had when it adopted kueue-gitops, accepted so that
only new ones fail a run.

`validate --baseline FILE --write-baseline` (and drift's) records every finding of the run that
no suppression already accepts, by its fingerprint (Finding.fingerprint: the rule, cluster,
object and field, never the line), counted: two findings alike are an entry of count 2, so a
third fails. Each entry keeps the severity and the measured value (Finding.measured: how far past
its limit) of what it accepts, so the same finding grown worse is new. Later runs given
`--baseline FILE` mark each finding the file holds the way a suppression marks one
(Finding.suppressed, with no expiry and the entry's file:line as its source): shown in every
format, never counted. Entries that match nothing any more stay in the file, counted in the
report, until it is written again.

A finding that means something was not checked (its rule says `unchecked`: a folder not
rendered, an object not compared, a schema missing) is never recorded nor accepted: accepted, it
would stop that check for good, and the findings it hides would fail as new where the check runs.
So a baseline is written only from a run with none of them, and with every cluster read.

The file is the reviewers' record, written sorted and stable (the same findings give the same
bytes), one entry per fingerprint with the message of its first finding; a file that cannot be
read is a configuration error naming its line. A run that covers part of the repository
(`--cluster`) leaves the other clusters' entries alone, and a cluster the run could not read
completely keeps its entries as they are.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass
from pathlib import Path

import yaml

from auditor.errors import ConfigError
from auditor.model import BaselineSummary, Finding, Fingerprint, Report, Suppression
from auditor.repo import outfile

VERSION = 1
# libyaml's, where PyYAML has it: a large estate's baseline is thousands of entries.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
REASON = "in the baseline"  # every entry's: the file holds no reasons, only what was found
MESSAGE_CHARS = 160  # a reminder of the finding, not its full text
HEADER = """\
# kueue-gitops baseline: the findings this repository had when it adopted kueue-gitops.
# A run given this file (--baseline) reports them as baselined and fails only on new ones.
# Written by --write-baseline: write it again, rather than editing it, to drop what was fixed.
"""
# The keys of an entry, in the order they are written; all but rule and count are the
# fingerprint's parts, left out where they do not apply.
_PARTS = ("rule", "cluster", "kind", "group", "namespace", "name", "path", "file")
_KEYS = (*_PARTS, "count", "severity", "measured", "message")
_SEVERITIES = ("warning", "error")  # from least to most severe


@dataclass(frozen=True)
class Entry:
    """Findings of one fingerprint the baseline accepts, how many, and what the first said."""

    fingerprint: Fingerprint
    count: int
    message: str
    line: int = 0  # where it starts in its file (0: not read from one)
    severity: str | None = None  # of the findings it accepts (None: written before it was kept)
    measured: float | None = None  # the largest of theirs, where the check measures one

    def to_yaml(self) -> dict[str, t.Any]:
        parts = self.fingerprint._asdict()
        out: dict[str, t.Any] = {key: parts[key] for key in _PARTS if parts[key] is not None}
        if self.count > 1:
            out["count"] = self.count
        if self.severity is not None:
            out["severity"] = self.severity
        if self.measured is not None:
            out["measured"] = int(self.measured) if self.measured.is_integer() else self.measured
        out["message"] = self.message
        return out

    def accepts(self, finding: Finding) -> bool:
        """Whether `finding`, of this entry's fingerprint, is no worse than what it recorded."""
        if finding.rule.unchecked:
            return False
        if self.severity is not None and _SEVERITIES.index(str(finding.severity)) > (
            _SEVERITIES.index(self.severity)
        ):
            return False
        now = finding.measured
        return self.measured is None or now is None or now <= self.measured


@dataclass(frozen=True)
class Baseline:
    file: str  # as the user named it: in messages and in each finding's source
    command: str  # the command whose findings it holds
    entries: tuple[Entry, ...]


# -- reading -----------------------------------------------------------------------------------


def read(path: Path, command: str) -> Baseline:
    """The baseline in `path`, for `command`'s findings; ConfigError naming file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such baseline; record today's findings in it with --write-baseline"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the baseline ({exc})") from exc
    return parse(text, str(path), command)


def parse(text: str, file: str, command: str) -> Baseline:
    """The baseline `text` (from `file`) holds, for `command`'s findings."""

    def bad(node: yaml.Node | None, why: str) -> ConfigError:
        line = node.start_mark.line + 1 if node is not None else 1
        return ConfigError(f"{file}:{line}: {why}")

    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{file}:{line}: not YAML: {problem}") from None
    if not isinstance(root, yaml.MappingNode):
        raise bad(root, "a baseline is a mapping of version, command and findings")
    top = _mapping(root, ("version", "command", "findings"), bad)
    version = top.get("version")
    if version is None:
        raise bad(root, f"no version; a baseline starts with `version: {VERSION}`")
    if _scalar(version, bad) != str(VERSION):
        raise bad(
            version,
            f"baseline version {version.value} is not one this kueue-gitops reads "
            f"({VERSION}); was it written by another release?",
        )
    written_by = top.get("command")
    if written_by is None:
        raise bad(root, "no command: the command whose findings it holds")
    if _scalar(written_by, bad) != command:
        raise bad(
            written_by,
            f"a baseline of `{written_by.value}`; `{command}` needs a file of its own "
            "(each command's findings are different)",
        )
    found = top.get("findings")
    if found is None or not isinstance(found, yaml.SequenceNode):
        raise bad(found or root, "findings: a list of entries (`findings: []` when none)")
    entries: list[Entry] = []
    seen: dict[Fingerprint, int] = {}
    for item in found.value:
        entry = _entry(item, bad)
        if entry.fingerprint in seen:
            raise bad(
                item,
                f"the same finding as the entry on line {seen[entry.fingerprint]}; one entry "
                "per finding, with a count",
            )
        seen[entry.fingerprint] = entry.line
        entries.append(entry)
    return Baseline(file, command, tuple(entries))


_Bad = t.Callable[[yaml.Node | None, str], ConfigError]


def _mapping(node: yaml.MappingNode, keys: tuple[str, ...], bad: _Bad) -> dict[str, yaml.Node]:
    out: dict[str, yaml.Node] = {}
    for key, value in node.value:
        name = _scalar(key, bad)
        if name not in keys:
            raise bad(key, f"unknown key {name!r} (expected {', '.join(keys)})")
        if name in out:
            raise bad(key, f"{name} is given twice")
        out[name] = value
    return out


def _scalar(node: yaml.Node, bad: _Bad) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise bad(node, "expected a single value here")
    return str(node.value)


def _entry(node: yaml.Node, bad: _Bad) -> Entry:
    if not isinstance(node, yaml.MappingNode):
        raise bad(node, "an entry is a mapping: rule, cluster, kind, name, path, message, ...")
    fields = _mapping(node, _KEYS, bad)
    parts = {key: _text(fields[key], bad, key) if key in fields else None for key in _PARTS}
    rule = parts.pop("rule")
    if rule is None:
        raise bad(node, "an entry without a rule")
    count = 1
    if "count" in fields:
        value = _scalar(fields["count"], bad)
        if not value.isdigit() or int(value) < 1:
            raise bad(fields["count"], f"count must be a whole number from 1, not {value!r}")
        count = int(value)
    message = _text(fields["message"], bad) if "message" in fields else None
    severity = _text(fields["severity"], bad) if "severity" in fields else None
    if severity is not None and severity not in _SEVERITIES:
        raise bad(fields["severity"], f"severity is {' or '.join(_SEVERITIES)}, not {severity!r}")
    measured = _number(fields["measured"], bad) if "measured" in fields else None
    line = node.start_mark.line + 1
    return Entry(Fingerprint(rule, **parts), count, message or "", line, severity, measured)


def _number(node: yaml.Node, bad: _Bad) -> float:
    value = _scalar(node, bad)
    try:
        return float(value)
    except ValueError:
        raise bad(node, f"measured is a number, not {value!r}") from None


def _text(node: yaml.Node, bad: _Bad, key: str = "") -> str | None:
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return None
    value = _scalar(node, bad)
    if not value and key != "group":  # '' is a group: the core API's (a ConfigMap, a Namespace)
        raise bad(node, "an empty value (leave the key out instead)")
    return value


# -- matching ----------------------------------------------------------------------------------


def apply(report: Report, baseline: Baseline, *, partial: bool = False) -> BaselineSummary:
    """Mark the findings `baseline` holds (as many of each fingerprint as its count, in the
    report's order), set the report's summary and return it. A finding a suppression already
    accepts is left to it. `partial`: the run covered only its report's clusters (--cluster)."""
    left = {e.fingerprint: e.count for e in baseline.entries}
    entry = {e.fingerprint: e for e in baseline.entries}
    baselined = 0
    for finding in report.findings:
        key = finding.fingerprint
        if finding.suppressed is None and left.get(key, 0) > 0 and entry[key].accepts(finding):
            left[key] -= 1
            finding.suppressed = Suppression(REASON, None, f"{baseline.file}:{entry[key].line}")
            baselined += 1
    judged = _judged(report, partial)
    absent = sum(n for key, n in left.items() if judged(key.cluster))
    report.baseline = BaselineSummary(baseline.file, baselined, absent)
    return report.baseline


def _judged(report: Report, partial: bool) -> t.Callable[[str | None], bool]:
    """Whether this run can tell an entry of a cluster is gone: not for a cluster it did not
    read completely, nor, covering only some clusters, one it did not cover (the repository's
    own findings, of no cluster, are in every run)."""
    incomplete = {c.name for c in report.clusters if c.status == "incomplete"}
    covered = {c.name for c in report.clusters} | {None}
    return lambda cluster: cluster not in incomplete and (not partial or cluster in covered)


def record(
    report: Report, previous: Baseline | None, file: str, *, partial: bool = False
) -> Baseline:
    """The baseline of `report`'s findings (none a suppression accepts), for `file`, and the
    entries of `previous` this run cannot judge, kept as they were."""
    judged = _judged(report, partial)
    alike: dict[Fingerprint, list[Finding]] = {}
    for finding in report.findings:
        if finding.suppressed is not None and not finding.suppressed.baselined:
            continue
        if not finding.rule.unchecked:
            alike.setdefault(finding.fingerprint, []).append(finding)
    entries = [_entry_of(key, found) for key, found in alike.items()]
    if previous is not None:
        entries += [
            e
            for e in previous.entries
            if not judged(e.fingerprint.cluster) and e.fingerprint not in alike
        ]
    return Baseline(file, report.command, tuple(sorted(entries, key=_order)))


def _entry_of(key: Fingerprint, found: list[Finding]) -> Entry:
    """The entry accepting `found`, findings of one fingerprint: the worst of their severities
    and measured values, the first one's message."""
    severity = max((str(f.severity) for f in found), key=_SEVERITIES.index)
    measures = [m for f in found if (m := f.measured) is not None]
    measured = max(measures) if measures else None
    return Entry(key, len(found), _short(found[0].message), 0, severity, measured)


def unchecked(report: Report) -> list[Finding]:
    """The findings of `report` that say something was not checked, none accepted on purpose."""
    return [f for f in report.findings if f.rule.unchecked and f.suppressed is None]


def _short(message: str) -> str:
    one_line = " ".join(message.split())
    if len(one_line) <= MESSAGE_CHARS:
        return one_line
    return one_line[: MESSAGE_CHARS - 1].rstrip() + "…"


def _order(entry: Entry) -> tuple[str, ...]:
    """By cluster (the repository's own first), then rule, then object and field."""
    key = entry.fingerprint
    return (key.cluster or "", *(part or "" for part in key[:1] + key[2:]))


# -- writing -----------------------------------------------------------------------------------


def render(baseline: Baseline) -> str:
    """The file's text: the header, then the entries sorted by cluster, rule and object."""
    doc = {
        "version": VERSION,
        "command": baseline.command,
        "findings": [e.to_yaml() for e in sorted(baseline.entries, key=_order)],
    }
    body = yaml.dump(
        doc,
        Dumper=_DUMPER,
        sort_keys=False,
        allow_unicode=True,
        width=1_000,
        default_flow_style=False,
    )
    return HEADER + body


def write(path: Path, baseline: Baseline) -> Baseline:
    """Write `baseline` to `path` whole (aside, then moved in) and return it as read back, its
    entries with their lines."""
    text = render(baseline)
    read_back = parse(text, str(path), baseline.command)  # what a later run will find in it
    outfile.write_whole(path, text, what="the baseline")  # a failure is exit 3, the file kept
    return read_back


def refuse_unchecked(report: Report, path: Path) -> None:
    """ConfigError naming the findings that left part of the run unchecked, if any."""
    missed = unchecked(report)
    if not missed:
        return
    shown = "; ".join(
        f"{f.rule.id} at {f.file or f.cluster or 'the repository'}"
        f"{f':{f.line}' if f.file and f.line else ''}: {_short(f.message)}"
        for f in missed[:_NAMED]
    )
    more = f" (and {len(missed) - _NAMED} more)" if len(missed) > _NAMED else ""
    raise ConfigError(
        f"{path} not written: {len(missed)} finding(s) say part of the run was not checked, and "
        f"a baseline never holds those: {shown}{more}. Fix them, or write the baseline where "
        "everything is checked (the renderers built, the schemas fetched)"
    )


_NAMED = 3  # the unchecked findings a refusal names


def rewrite(
    report: Report, path: Path, previous: Baseline | None, *, partial: bool = False
) -> BaselineSummary:
    """`--write-baseline`: record `report`'s findings in `path` (keeping what the run cannot
    judge of `previous`, the file as it was), mark them, and return the summary, whose `absent`
    counts the entries of the old file that were dropped. Never from an incomplete run
    (ValueError): its unread clusters would lose their entries, or keep fixed ones unseen; nor
    from one that left something unchecked (ConfigError naming it): what it did not check would
    be missing from the file, and fail as new where it is checked."""
    if report.incomplete:
        raise ValueError("a baseline is written only from a complete run")
    refuse_unchecked(report, path)
    absent = apply(report, previous, partial=partial).absent if previous is not None else 0
    written = write(path, record(report, previous, str(path), partial=partial))
    for finding in report.findings:  # marked again, by the entries as they are now
        if finding.suppressed is not None and finding.suppressed.baselined:
            finding.suppressed = None
    baselined = apply(report, written, partial=partial).baselined
    report.baseline = BaselineSummary(str(path), baselined, absent, written=True)
    return report.baseline
