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
import re
import typing as t
from dataclasses import dataclass

from auditor.k8s.objects import Json
from auditor.kueue import NAMESPACE, release

CONFIG_MAP = "kueue-manager-config"
KEY = "controller_manager_config.yaml"
API_VERSION = "config.kueue.x-k8s.io/v1beta2"
KIND = "Configuration"
# Kueue's default when `integrations.frameworks` is empty (apis/config/v1beta2/defaults.go).
DEFAULT_FRAMEWORKS = ("batch/job",)
# The per-ClusterQueue gauges Kueue exports only with `metrics.enableClusterQueueResources`
# (its scheduler cache and queue manager report them WithResourceMetrics; pkg/metrics):
# tests/integration/test_kueue_footguns.py holds the list to a running release.
RESOURCE_METRICS = frozenset(
    {
        "kueue_cluster_queue_nominal_quota",
        "kueue_cluster_queue_borrowing_limit",
        "kueue_cluster_queue_lending_limit",
        "kueue_cluster_queue_resource_reservation",
        "kueue_cluster_queue_resource_usage",
    }
)


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


# -- what a Configuration turns on, on a given release ---------------------------------------


def gate(config: Json | None, known: release.Release, name: str) -> bool | None:
    """Whether feature gate `name` is on for Kueue `known` started from `config` (its
    featureGates over the release's defaults; a locked gate keeps its default), or None when
    the release has no such gate."""
    found = known.gates.get(name)
    if found is None:
        return None
    chosen = ((config or {}).get("featureGates") or {}).get(name)
    return found.default if found.locked or not isinstance(chosen, bool) else chosen


def fair_sharing(config: Json | None) -> bool:
    """Whether fair sharing among a cohort's ClusterQueues is on, so the weights of
    ClusterQueues and Cohorts count: a `fairSharing` block (config v1beta2, from v0.15: its
    presence turns it on), or `fairSharing.enable: true` (config v1beta1)."""
    block = (config or {}).get("fairSharing")
    if not isinstance(block, dict):
        return False
    if str((config or {}).get("apiVersion", "")).endswith("/v1beta1"):
        return block.get("enable") is True
    return True


def admission_fair_sharing(config: Json | None, known: release.Release) -> Json | None:
    """The `admissionFairSharing` block when Admission Fair Sharing is on (the block and the
    release's AdmissionFairSharing gate), so the LocalQueues' weights count; else None."""
    block = (config or {}).get("admissionFairSharing")
    if not isinstance(block, dict) or not gate(config, known, "AdmissionFairSharing"):
        return None
    return block


_DURATION = re.compile(r"([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(value: t.Any) -> float | None:
    """A Go duration as Kueue's Configuration takes it (`1h30m`, `0s`, `0`), in seconds; None
    when it is not one (an absent field decodes as 0: the caller says which it means)."""
    text = str(value).strip()
    sign = -1.0 if text.startswith("-") else 1.0
    text = text.lstrip("+-")
    if text == "0":
        return 0.0
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sign * sum(float(n) * _UNIT[u] for n, u in parts)


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
