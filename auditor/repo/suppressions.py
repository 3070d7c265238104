"""Findings accepted on purpose, with a reason and an expiry date.

On an object in the repository, an annotation per rule:

    metadata:
      annotations:
        suppress.kueue-gitops.io/borrowing-over-lendable: "2027-03-31: the cohort grows in Q1"

For an object only the cluster holds (a finding of drift), an entry in the cluster profile's
spec.suppressions names the rule and, optionally, the kind, namespace and name.

A suppressed finding is still reported, marked as such in every format, but fails no run. From
the day after its expiry it counts again, and its message says the suppression expired.
"""

from __future__ import annotations

import datetime
import re
import typing as t
from dataclasses import dataclass

from auditor import rules
from auditor.model import Finding, Resource, Suppression
from auditor.repo.profiles import ClusterProfile

_RULES = rules.of(__name__)
SUPPRESSION_INVALID = _RULES["suppression-invalid"]

PREFIX = "suppress.kueue-gitops.io/"
VALUE = re.compile(r"\s*(\d{4}-\d{2}-\d{2})\s*:\s*(\S.{9,})", re.S)  # "YYYY-MM-DD: reason"


@dataclass(frozen=True)
class Entry:
    """One suppression and the findings it covers: a rule on one cluster, and the kind,
    namespace and name of the object (None: any)."""

    rule: str
    cluster: str
    kind: str | None
    namespace: str | None
    name: str | None
    accepted: Suppression

    @property
    def last_day(self) -> datetime.date:
        return self.accepted.expires or datetime.date.max  # a suppression always has one

    def covers(self, finding: Finding) -> bool:
        return (
            finding.rule.id == self.rule
            and finding.cluster in (None, self.cluster)
            and self.kind in (None, finding.kind)
            and self.namespace in (None, finding.namespace)
            and self.name in (None, finding.name)
        )


def annotated(resource: Resource) -> tuple[list[Entry], list[Finding]]:
    """The suppressions annotated on `resource`, and a finding for each that cannot be used."""
    meta = resource.body.get("metadata")
    notes = meta.get("annotations") if isinstance(meta, dict) else None
    entries: list[Entry] = []
    problems: list[Finding] = []
    for key, value in (notes or {}).items() if isinstance(notes, dict) else ():
        if not str(key).startswith(PREFIX):
            continue
        rule = str(key)[len(PREFIX) :]
        where = ("metadata", "annotations", str(key))
        found = VALUE.fullmatch(str(value))
        why = _unusable(rule, found)
        if why or found is None:
            problems.append(
                Finding.about(
                    resource,
                    SUPPRESSION_INVALID,
                    f"annotation {key}: {why}",
                    path=where,
                    cluster=resource.cluster,
                )
            )
            continue
        accepted = Suppression(
            " ".join(found[2].split()),
            datetime.date.fromisoformat(found[1]),
            f"{resource.file}:{resource.line_of(where)}",
        )
        entries.append(
            Entry(
                rule,
                resource.cluster or "",
                resource.kind,
                resource.namespace,
                resource.name,
                accepted,
            )
        )
    return entries, problems


def _unusable(rule: str, found: re.Match[str] | None) -> str | None:
    try:
        rules.get(rule)
    except rules.UnknownRule as exc:
        return str(exc)
    if found is None:
        return 'the value must be "YYYY-MM-DD: reason" (the last day it holds, then why)'
    try:
        datetime.date.fromisoformat(found[1])
    except ValueError:
        return f"{found[1]} is not a date (YYYY-MM-DD)"
    return None


def from_profile(profile: ClusterProfile) -> list[Entry]:
    return [
        Entry(
            s.rule,
            profile.name,
            s.kind,
            s.namespace,
            s.name,
            Suppression(s.reason, s.expires, f"{profile.file}:{s.line}"),
        )
        for s in profile.suppressions
    ]


def of_cluster(profile: ClusterProfile, resources: t.Iterable[Resource]) -> list[Entry]:
    """Every usable suppression for `profile`'s cluster: its objects' and its profile's."""
    out = from_profile(profile)
    for resource in resources:
        out += annotated(resource)[0]
    return out


def apply(findings: t.Iterable[Finding], entries: list[Entry], today: datetime.date) -> None:
    """Mark each finding an unexpired entry covers; say so on those whose entry expired."""
    if not entries:
        return
    for finding in findings:
        covering = [e for e in entries if e.covers(finding)]
        live = [e for e in covering if e.last_day >= today]
        if live:
            finding.suppressed = max(live, key=lambda e: e.last_day).accepted
        elif covering:
            last = max(covering, key=lambda e: e.last_day).accepted
            finding.message += (
                f" (its suppression expired on {last.expires}: {last.source}; renew it with a "
                "new date and reason, or fix the finding)"
            )
