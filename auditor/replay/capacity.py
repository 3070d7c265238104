"""What the nodes hold, against which a simulated point's quotas are judged (`plan sweep`): the
capacity the cluster profile declares, or the Ready nodes read from the live cluster. The sum of
a flavor's quotas is auditor/kueue/capacity.py's, as validate's capacity-exceeded adds it up; the
simulation itself admits on quota alone, so a point beyond the nodes is one no cluster runs."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.errors import ConfigError
from auditor.k8s.objects import Json
from auditor.k8s.quantity import ZERO, Quantity, QuantityError
from auditor.kueue import capacity
from auditor.kueue.quota import QUOTA_KINDS
from auditor.repo.profiles import ClusterProfile


@dataclass(frozen=True)
class Capacity:
    """What the nodes hold, per flavor and resource, that a point's quotas must fit, and where
    that was read (said in the report)."""

    source: str
    held: t.Callable[[str, str], Quantity]

    def over(self, objects: list[dict[str, t.Any]]) -> tuple[str, ...]:
        """What `objects`' nominal quotas promise beyond it (auditor/kueue/capacity.py, as
        validate's capacity-exceeded adds them up)."""
        holders = [o for o in objects if o.get("kind") in QUOTA_KINDS]
        try:
            found = capacity.excesses(holders, self.held)
        except QuantityError as exc:
            raise ConfigError(f"{self.source}: {exc}") from exc
        return tuple(f"{e.flavor}/{e.resource} {e.total} > {e.held}" for e in found)


def profile_capacity(profile: ClusterProfile) -> Capacity:
    """The capacity the cluster profile declares (what validate's capacity-exceeded reads)."""
    return Capacity(
        f"the capacity {profile.file} declares",
        lambda flavor, resource: capacity.declared(profile.capacity, flavor, resource),
    )


def node_capacity(cluster: str, objects: list[dict[str, t.Any]], nodes: list[Json]) -> Capacity:
    """What the Ready nodes each ResourceFlavor selects hold (allocatable), read from the live
    cluster; a flavor the revision does not define holds nothing."""
    flavors = {
        str((o.get("metadata") or {}).get("name")): o
        for o in objects
        if o.get("kind") == "ResourceFlavor"
    }

    def held(flavor: str, resource: str) -> Quantity:
        body = flavors.get(flavor)
        return capacity.allocatable(capacity.pool(body, nodes), resource) if body else ZERO

    ready = sum(capacity.ready(n) for n in nodes)
    return Capacity(f"the {ready} Ready node(s) of {cluster}, read live", held)
