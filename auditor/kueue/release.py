"""What this tool knows of each Kueue release, all of it derived from the release itself.

`auditor/kueue/api/<release>.json` is written by `kueue-gitops sandbox kueue-api --write`, never
by hand: testenv/kueueapi, built in the release's pinned module (testenv/kueue-<release>/, or
testenv/ for the control plane's), states its Configuration API and job frameworks from its Go
types, and runs its validating webhooks on every webhook rule's passing and failing example
(auditor/kueue/webhooks.py), on ClusterQueues grown until they are refused and on updates
changing one spec field each (which fields it holds immutable); the release's
CRDs and install manifests state what each kind serves and stores, which kinds convert through
Kueue's webhook, and which kinds its webhooks judge; its feature gates (names, defaults, stages)
come from its own gate registry, and the object names it gives a meaning of their own (a
LocalQueue or WorkloadPriorityClass named `default`) from its constants.

A release this tool does not carry is not guessed at: `nearest` names the closest one carried
and `add_command` the command that adds it.
"""

from __future__ import annotations

import functools
import json
import re
import typing as t
from dataclasses import dataclass, field
from importlib import resources

from auditor.k8s.objects import KUEUE_GROUP, Json

_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")


def semver(version: str) -> tuple[int, int, int] | None:
    match = _VERSION.match(version)
    if match is None:
        return None
    major, minor, patch = (int(p) for p in match.groups())
    return major, minor, patch


@dataclass(frozen=True)
class Crd:
    """One Kueue CRD as the release ships it."""

    kind: str
    plural: str
    served: tuple[str, ...]
    storage: str | None
    deprecated: tuple[str, ...] = ()
    conversion: str = "None"  # "Webhook": read in another version through Kueue's webhook


@dataclass(frozen=True)
class WebhookRule:
    """One of our webhook rules, as the release's own webhook judged its two examples."""

    refused: bool  # the failing example refused and the passing one accepted
    field: str | None = None  # where the webhook reports it
    detail: str | None = None  # in the webhook's words


@dataclass(frozen=True)
class Limit:
    """A count the release's ClusterQueue webhook caps (None: it caps none)."""

    max: int | None
    detail: str | None = None


@dataclass(frozen=True)
class Gate:
    """One of the release's feature gates, as the binary starts without featureGates."""

    default: bool
    stage: str  # ALPHA, BETA, "" (GA) or DEPRECATED
    locked: bool = False  # setting it to anything but its default stops Kueue


@dataclass(frozen=True)
class Release:
    version: str
    doc: Json = field(repr=False)

    @functools.cached_property
    def crds(self) -> dict[str, Crd]:
        """By kind."""
        found = {}
        for plural, c in (self.doc.get("crds") or {}).items():
            found[c["kind"]] = Crd(
                c["kind"],
                plural,
                tuple(c["served"]),
                c.get("storage"),
                tuple(c.get("deprecated") or ()),
                c.get("conversion") or "None",
            )
        return found

    @property
    def converted(self) -> list[str]:
        """The plurals of the kinds read in another version through Kueue's webhook."""
        return sorted(c.plural for c in self.crds.values() if c.conversion == "Webhook")

    @property
    def webhook_kinds(self) -> dict[str, Json]:
        """Kind -> {"validating": [operations], "mutating": [operations]}."""
        return dict((self.doc.get("webhooks") or {}).get("kinds") or {})

    def webhook_rule(self, rule: str) -> WebhookRule | None:
        found = ((self.doc.get("webhooks") or {}).get("rules") or {}).get(rule)
        return WebhookRule(**found) if found else None

    def refuses(self, rule: str) -> bool:
        found = self.webhook_rule(rule)
        return bool(found and found.refused)

    def limit(self, name: str) -> Limit:
        found = ((self.doc.get("webhooks") or {}).get("limits") or {}).get(name) or {}
        return Limit(found.get("max"), found.get("detail"))

    def immutable(self, kind: str) -> tuple[str, ...]:
        """The fields of `kind` the release's webhook refuses to change on an update, as it
        names them (`spec.concurrentAdmissionPolicy`), found by its own ValidateUpdate."""
        found = ((self.doc.get("webhooks") or {}).get("immutable") or {}).get(kind) or []
        return tuple(str(f["field"]) for f in found)

    @functools.cached_property
    def gates(self) -> dict[str, Gate]:
        """Every feature gate the release's binary accepts, by name."""
        return {name: Gate(**g) for name, g in (self.doc.get("featureGates") or {}).items()}

    def default_name(self, kind: str) -> str | None:
        """The name that makes an object of `kind` the release's default for jobs that name
        none (a LocalQueue, a WorkloadPriorityClass), or None when the release has no such."""
        return (self.doc.get("defaultNames") or {}).get(kind)

    @property
    def minor(self) -> tuple[int, int]:
        found = semver(self.version)
        return (found[0], found[1]) if found else (0, 0)


def known() -> list[str]:
    """The releases this tool carries, oldest first."""
    folder = resources.files("auditor.kueue").joinpath("api")
    names = [p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json")]
    return sorted((n for n in names if semver(n)), key=lambda n: semver(n) or (0, 0, 0))


@functools.cache
def get(version: str) -> Release | None:
    """The knowledge of `version`, or None when this tool does not carry it."""
    if version not in known():
        return None
    text = resources.files("auditor.kueue").joinpath(f"api/{version}.json").read_text()
    return Release(version, json.loads(text))


def nearest(version: str | None) -> str:
    """The carried release closest to `version`: the same minor's nearest patch, else the
    nearest minor (the older on a tie), else the newest carried."""
    carried = known()
    wanted = semver(version or "")
    if wanted is None:
        return carried[-1]

    def distance(candidate: str) -> tuple[int, int, int]:
        have = semver(candidate) or (0, 0, 0)
        minors = abs((have[0] - wanted[0]) * 1000 + have[1] - wanted[1])
        return (minors, abs(have[2] - wanted[2]), 0 if have < wanted else 1)

    return min(carried, key=distance)


def nearest_release(version: str | None) -> Release:
    """The knowledge of `version` if carried, else of the nearest release carried."""
    found = get(version) if version else None
    return found or t.cast(Release, get(nearest(version)))


def add_command(version: str) -> str:
    """What adds a release: its pinned module, then the one command that derives the rest."""
    return (
        f"pin it in testenv/kueue-{version}/ (go.mod requiring sigs.k8s.io/kueue {version}, "
        f"as testenv/kueue-*/ do), then run `kueue-gitops sandbox kueue-api --kueue {version} "
        "--write`"
    )


# -- deriving it (the files are read by auditor/sandbox/build.py) ------------------------------


def crds_of(bases: t.Iterable[Json], patches: t.Iterable[Json]) -> dict[str, Json]:
    """By plural, what the release's CRDs (config/components/crd/bases/) serve and store, and
    which of them its install patches to convert through Kueue's webhook (the patches its
    crd/kustomization.yaml applies)."""
    webhook = {
        str((p.get("metadata") or {}).get("name"))
        for p in patches
        if ((p.get("spec") or {}).get("conversion") or {}).get("strategy") == "Webhook"
    }
    found: dict[str, Json] = {}
    for crd in bases:
        spec = crd.get("spec") or {}
        group_versions = spec.get("versions") or []
        found[str(spec["names"]["plural"])] = {
            "kind": spec["names"]["kind"],
            "served": [v["name"] for v in group_versions if v.get("served")],
            "storage": next((v["name"] for v in group_versions if v.get("storage")), None),
            "deprecated": [v["name"] for v in group_versions if v.get("deprecated")],
            "conversion": "Webhook" if crd["metadata"]["name"] in webhook else "None",
        }
    return dict(sorted(found.items()))


# The release's constants that give an object name a meaning (pkg/controller/constants), by the
# kind they name.
DEFAULT_NAME_CONSTANTS = {
    "DefaultLocalQueueName": "LocalQueue",
    "DefaultWorkloadPriorityClassName": "WorkloadPriorityClass",
}
_CONSTANT = re.compile(r'^\s*(\w+)\s*(?:[\w.]+\s*)?=\s*"([^"]*)"', re.M)


def default_names(constants_go: str) -> dict[str, str]:
    """By kind, the object name the release treats as the default for jobs that name none,
    read from its constants.go (a release without the constant has no such default)."""
    found = dict(_CONSTANT.findall(constants_go))
    return {kind: found[c] for c, kind in DEFAULT_NAME_CONSTANTS.items() if c in found}


def webhook_kinds(configurations: t.Iterable[Json], crds: t.Mapping[str, Json]) -> dict[str, Json]:
    """Which Kueue kinds the release's webhook configurations (config/components/webhook/)
    send to Kueue, and on which operations."""
    kinds: dict[str, dict[str, set[str]]] = {}
    for config in configurations:
        how = "mutating" if str(config.get("kind")).startswith("Mutating") else "validating"
        for hook in config.get("webhooks") or []:
            for rule in hook.get("rules") or []:
                if KUEUE_GROUP not in (rule.get("apiGroups") or []):
                    continue
                for resource in rule.get("resources") or []:
                    crd = crds.get(str(resource).partition("/")[0])
                    if crd and "/" not in str(resource):
                        ops = kinds.setdefault(crd["kind"], {}).setdefault(how, set())
                        ops |= set(rule.get("operations") or [])
    return {
        kind: {how: sorted(ops) for how, ops in sorted(hows.items())}
        for kind, hows in sorted(kinds.items())
    }
