"""The fleet in one view, beside drift's findings: each cluster's Kueue release (its profile's),
the versions its live Kueue CRDs serve and the versions their objects are stored in
(`status.storedVersions`: what decides which rollbacks are safe), and how many minor releases
it runs behind the newest release the repository pins; more than one is a finding.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from auditor import rules
from auditor.k8s.objects import KUEUE_GROUP, Json
from auditor.kueue import release
from auditor.model import Finding, Resource
from auditor.repo.profiles import ClusterProfile

RULES = rules.of(__name__)
BEHIND = RULES["kueue-release-behind"]
MAX_BEHIND = 1  # minor releases a cluster may run behind the newest pinned


@dataclass
class Member:
    cluster: str
    kueue: str | None  # the release its profile names
    behind: int | None  # minor releases behind the newest pinned (None: no release named)
    served: dict[str, list[str]] | None = None  # kind -> versions; None: CRDs not read
    stored: dict[str, list[str]] | None = None  # kind -> status.storedVersions

    def to_json(self) -> Json:
        return {
            "cluster": self.cluster,
            "kueue": self.kueue,
            "minorsBehind": self.behind,
            "servedVersions": self.served,
            "storedVersions": self.stored,
        }


@dataclass
class Fleet:
    """drift's section: `fleet` in the JSON report, a table in text."""

    newest: str | None
    members: list[Member] = field(default_factory=list)

    def to_json(self) -> Json:
        return {
            "fleet": {"newestPinned": self.newest, "clusters": [m.to_json() for m in self.members]}
        }

    def text(self) -> str:
        lines = [f"fleet (newest Kueue pinned: {self.newest or '-'})"]
        for m in self.members:
            behind = "" if not m.behind else f", {m.behind} minor(s) behind"
            lines.append(f"  {m.cluster}: Kueue {m.kueue or '(not named)'}{behind}")
            if m.served is None:
                lines.append("    CRDs not read")
                continue
            for kind in sorted(m.served):
                stored = ", ".join((m.stored or {}).get(kind) or []) or "-"
                lines.append(f"    {kind}: serves {', '.join(m.served[kind])}; stored {stored}")
        return "\n".join(lines) + "\n"


def newest(profiles: t.Iterable[ClusterProfile]) -> str | None:
    """The newest Kueue release any cluster profile of the repository pins."""
    pinned = [
        p.kueue_version for p in profiles if p.kueue_version and release.semver(p.kueue_version)
    ]
    return max(pinned, key=lambda v: release.semver(v) or (0, 0, 0)) if pinned else None


def minors_behind(version: str | None, newest: str | None) -> int | None:
    have, top = release.semver(version or ""), release.semver(newest or "")
    if have is None or top is None:
        return None
    return max(0, (top[0] - have[0]) * 1000 + top[1] - have[1])


Versions = tuple[dict[str, list[str]], dict[str, list[str]]]  # served, stored by kind


def versions(crds: t.Iterable[Json]) -> Versions:
    """By kind, what the live Kueue CRDs serve and what their objects are stored in."""
    served: dict[str, list[str]] = {}
    stored: dict[str, list[str]] = {}
    for crd in crds:
        spec = crd.get("spec") or {}
        if spec.get("group") != KUEUE_GROUP:
            continue
        kind = str((spec.get("names") or {}).get("kind"))
        served[kind] = [str(v["name"]) for v in spec.get("versions") or [] if v.get("served")]
        stored[kind] = [str(v) for v in (crd.get("status") or {}).get("storedVersions") or []]
    return dict(sorted(served.items())), dict(sorted(stored.items()))


def member(profile: ClusterProfile, top: str | None, read: Versions | None) -> Member:
    """A cluster's line of the fleet; `read`: its CRDs' versions (None: CRDs not read)."""
    found = Member(profile.name, profile.kueue_version, minors_behind(profile.kueue_version, top))
    if read is not None:
        found.served, found.stored = read
    return found


def behind(profile: ClusterProfile, member: Member, top: str, where: Resource) -> Finding | None:
    """The finding of a cluster more than MAX_BEHIND minor releases behind `top`."""
    if member.behind is None or member.behind <= MAX_BEHIND:
        return None
    stored = sorted({v for vs in (member.stored or {}).values() for v in vs})
    return Finding.about(
        where,
        BEHIND,
        f"{profile.name} runs Kueue {profile.kueue_version}, {member.behind} minor releases "
        f"behind {top}, the newest this repository pins: an upgrade across that many releases "
        "goes through each one between (their CRDs' storage versions and conversions)"
        + (f"; its Kueue objects are stored as {', '.join(stored)}" if stored else "")
        + f"; plan it with `kueue-gitops upgrade-check --cluster {profile.name} --to ...`",
        path=("spec", "kueue", "version"),
        cluster=profile.name,
    )
