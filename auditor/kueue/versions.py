"""Which Kueue API version to talk to a cluster in.

A cluster profile lists the versions the cluster must serve (spec.kueue.apiVersions); when the
server's own list is known too, only versions both name count. Of those, the one Kubernetes
itself prefers: stable over beta over alpha, then the higher version (v1beta2 > v1beta1 >
v1alpha1), so the order a profile lists them in does not matter.
"""

from __future__ import annotations

import re
import typing as t

from auditor.kueue import KUEUE_GROUP

_VERSION = re.compile(r"v(?P<major>[0-9]+)(?:(?P<level>alpha|beta)(?P<minor>[0-9]+))?")
_LEVEL = {"alpha": 0, "beta": 1, None: 2}


def priority(version: str) -> tuple[int, int, int]:
    """Kubernetes' version priority as a sort key (higher is preferred; unknown forms last)."""
    found = _VERSION.fullmatch(version)
    if found is None:
        return (-1, 0, 0)
    return (_LEVEL[found["level"]], int(found["major"]), int(found["minor"] or 0))


def preferred(listed: t.Sequence[str], served: t.Iterable[str] | None = None) -> str:
    """The version to use: the preferred of `listed` the server also serves (when known)."""
    if not listed:
        raise ValueError("no Kueue API version listed")
    both = [v for v in listed if served is None or v in set(served)]
    return max(both or listed, key=priority)


def to_try(api: str, served: t.Iterable[str]) -> list[str]:
    """Kueue apiVersions in the order to try for a kind a cluster may serve in only some: `api`
    (the profile's) first, then every other version the server lists, preferred first."""
    group, _, first = api.rpartition("/")
    rest = sorted((v for v in set(served) if v != first), key=priority, reverse=True)
    return [f"{group}/{v}" for v in (first, *rest)]


def api_version(listed: t.Sequence[str], served: t.Iterable[str] | None = None) -> str:
    """The apiVersion (group/version) for Kueue objects on a cluster."""
    return f"{KUEUE_GROUP}/{preferred(listed, served)}"
