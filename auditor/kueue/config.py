"""Kueue's own Configuration (config.kueue.x-k8s.io): where a cluster carries it, what it says.

Kueue reads one file at start, which upstream's install mounts from the ConfigMap
`kueue-system/kueue-manager-config` (key `controller_manager_config.yaml`). The repository keeps
that ConfigMap per cluster, so Argo CD syncs it like any object and drift can compare it.

What this release of Kueue accepts there is not written by hand: `api/<version>.json` holds a
JSON Schema of the Configuration, derived by reflection from the Go types of the pinned module
(testenv/kueueapi), and the job frameworks that release integrates, each with its kind.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from auditor.k8s.objects import Json
from auditor.kueue import release

NAMESPACE = "kueue-system"
CONFIG_MAP = "kueue-manager-config"
KEY = "controller_manager_config.yaml"
API_VERSION = "config.kueue.x-k8s.io/v1beta2"
KIND = "Configuration"
# Kueue's default when `integrations.frameworks` is empty (apis/config/v1beta2/defaults.go).
DEFAULT_FRAMEWORKS = ("batch/job",)


@dataclass(frozen=True)
class Framework:
    """A job framework Kueue integrates: its name in the Configuration and the kind it manages."""

    name: str
    group: str
    version: str
    kind: str
    resource: str


@dataclass(frozen=True)
class KueueApi:
    """What one Kueue release accepts in its Configuration, and the frameworks it knows."""

    version: str
    schema: Json
    frameworks: dict[str, Framework]


def known_versions() -> list[str]:
    """The Kueue releases whose Configuration API this tool carries, oldest first."""
    return release.known()


@functools.cache
def api(version: str) -> KueueApi | None:
    """The Configuration API of Kueue `version`, or None when this tool does not carry it."""
    found = release.get(version)
    return _api(found) if found else None


def _api(known: release.Release) -> KueueApi:
    doc = known.doc
    return KueueApi(
        doc["kueue"],
        doc["configuration"],
        {name: Framework(name, **f) for name, f in doc["frameworks"].items()},
    )


def api_or_nearest(version: str | None) -> KueueApi:
    """The API of `version` if carried, else of the nearest release carried (framework kinds
    hardly move between releases; validate reports the unknown version on its own)."""
    return _api(release.nearest_release(version))


def is_config_map(api_version: str, kind: str, namespace: str | None, name: str) -> bool:
    return (api_version, kind, namespace, name) == ("v1", "ConfigMap", NAMESPACE, CONFIG_MAP)


def frameworks(config: Json, kueue: KueueApi) -> tuple[list[Framework], list[str]]:
    """The frameworks a Configuration turns on, and the names this release does not know.

    External frameworks (`Kind.version.group`) are Kueue's too: their Jobs are managed alike.
    """
    integrations = config.get("integrations") or {}
    names = list(integrations.get("frameworks") or DEFAULT_FRAMEWORKS)
    found = [kueue.frameworks[n] for n in names if n in kueue.frameworks]
    unknown = [n for n in names if n not in kueue.frameworks]
    for ref in integrations.get("externalFrameworks") or []:
        kind, _, rest = str(ref).partition(".")
        version, _, group = rest.partition(".")
        if kind and version and group:
            found.append(Framework(str(ref), group, version, kind, guess_resource(kind)))
        else:
            unknown.append(str(ref))
    return found, unknown


def guess_resource(kind: str) -> str:
    """The plural resource of a kind, as Kubernetes guesses it (meta.UnsafeGuessKindToResource)."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    if lower.endswith("y"):
        return lower[:-1] + "ies"
    return lower + "s"
