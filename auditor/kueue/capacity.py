"""Flavors and the nodes behind them: which nodes a ResourceFlavor selects, whether they hold the
quota promised on it, and the nodes a cluster profile's declared capacity stands for.

A flavor selects a node when the node carries every one of the flavor's nodeLabels: Kueue writes
those labels into the nodeSelector of every Pod it admits on the flavor, so they are the pool.
Only Ready nodes count. A flavor's quota is the sum of every ClusterQueue's and Cohort's
nominalQuota on it: all of it can be admitted at once, so the pool must hold that much.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass

from auditor.k8s import conditions
from auditor.k8s.objects import Json
from auditor.k8s.quantity import ZERO, Quantity, QuantityError, parse
from auditor.kueue import quota

PODS_PER_NODE = "110"  # the kubelet's default, so node capacity never limits Pods by count
# On a simulated node: how long its Pods run before they succeed (a duration, e.g. 20s).
# Without it a Pod runs until deleted, as the pause image would on a real node.
RUN_FOR = "kueue-gitops.io/sandbox-run-for"
POOL_LABEL = "kueue-gitops.io/flavor"  # on simulated nodes only: the flavor they were made for


def node_labels(flavor: Json) -> dict[str, str]:
    return {str(k): str(v) for k, v in ((flavor.get("spec") or {}).get("nodeLabels") or {}).items()}


def selects(flavor: Json, node: Json) -> bool:
    """Whether Pods admitted on `flavor` may land on `node` by its labels."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in node_labels(flavor).items())


def ready(node: Json) -> bool:
    return conditions.is_true(node, "Ready") and not (node.get("spec") or {}).get("unschedulable")


def pool(flavor: Json, nodes: t.Iterable[Json]) -> list[Json]:
    """The Ready nodes `flavor` selects."""
    return [n for n in nodes if ready(n) and selects(flavor, n)]


def allocatable(nodes: t.Iterable[Json], resource: str) -> Quantity:
    total = ZERO
    for node in nodes:
        raw = ((node.get("status") or {}).get("allocatable") or {}).get(resource)
        if raw is not None:
            try:
                total = total + parse(raw)
            except QuantityError:
                continue
    return total


def promised(flavor: str, holders: t.Iterable[Json]) -> dict[str, Quantity]:
    """Per resource: the nominalQuota every ClusterQueue and Cohort holds on `flavor`."""
    out: dict[str, Quantity] = {}
    for obj in holders:
        for cell in quota.cells(obj):
            nominal = cell.quantity(quota.NOMINAL)
            if cell.flavor == flavor and nominal is not None and nominal.value > 0:
                out[cell.resource] = out.get(cell.resource, ZERO) + nominal
    return out


def declared(
    capacity: t.Mapping[str, t.Mapping[str, t.Any]], flavor: str, resource: str
) -> Quantity:
    """What a cluster profile's `capacity` says the nodes behind `flavor` hold of `resource`
    (none declared: nothing). A malformed quantity raises QuantityError."""
    raw = (capacity.get(flavor) or {}).get(resource)
    return ZERO if raw is None else parse(raw)


@dataclass(frozen=True)
class Excess:
    """A flavor's resource whose nominal quotas on a cluster add up past what its nodes hold.
    `parts`: each holder's share, as (its index among the holders, its cell, its quota)."""

    flavor: str
    resource: str
    total: Quantity
    held: Quantity
    parts: tuple[tuple[int, quota.QuotaCell, Quantity], ...]


def excesses(holders: t.Sequence[Json], held: t.Callable[[str, str], Quantity]) -> list[Excess]:
    """Every (flavor, resource) whose nominal quotas, over all the cluster's ClusterQueues and
    Cohorts (`holders`; a Cohort's own quota is a pool added to its members', so it counts
    too), add up to more than `held(flavor, resource)`: the profile's declared capacity, or
    what the flavor's Ready nodes hold."""
    used: dict[quota.Cell, list[tuple[int, quota.QuotaCell, Quantity]]] = {}
    for i, body in enumerate(holders):
        for entry in quota.cells(body):
            nominal = entry.quantity(quota.NOMINAL)
            if nominal is not None and nominal > ZERO:
                used.setdefault((entry.flavor, entry.resource), []).append((i, entry, nominal))
    out = []
    for (flavor, resource), parts in used.items():
        total = sum((q for _, _, q in parts), ZERO)
        limit = held(flavor, resource)
        if total > limit:
            out.append(Excess(flavor, resource, total, limit, tuple(parts)))
    return out


@dataclass(frozen=True)
class Gap:
    """A flavor whose pool cannot hold what is promised on it (`resource` None: no node)."""

    flavor: str
    resource: str | None = None
    promised: Quantity = ZERO
    held: Quantity = ZERO
    nodes: int = 0

    @property
    def message(self) -> str:
        if self.resource is None:
            return (
                f"ResourceFlavor {self.flavor} selects no Ready node: Jobs admitted on it "
                "can never run"
            )
        return (
            f"the {self.nodes} Ready node(s) of ResourceFlavor {self.flavor} hold "
            f"{self.held} {self.resource}, less than the {self.promised} the queues' "
            "nominalQuota promises on it: admitted Jobs would wait for nodes"
        )


def gaps(flavors: t.Iterable[Json], nodes: list[Json], holders: list[Json]) -> list[Gap]:
    """Every flavor with no Ready node, or with less on its nodes than its quota promises."""
    out: list[Gap] = []
    for flavor in flavors:
        name = str(flavor["metadata"]["name"])
        found = pool(flavor, nodes)
        if not found:
            out.append(Gap(name))
            continue
        for resource, want in sorted(promised(name, holders).items()):
            held = allocatable(found, resource)
            if held < want:
                out.append(Gap(name, resource, want, held, len(found)))
    return out


def simulated_nodes(flavors: t.Iterable[Json], capacity: t.Mapping[str, t.Any]) -> list[Json]:
    """One node per flavor with declared capacity: the flavor's nodeLabels and nodeTaints, and
    the capacity the cluster profile says its pool holds. Labelled with the flavor they stand
    for only to be told apart; Kueue and the scheduler select them by the flavor's labels."""
    out = []
    for flavor in flavors:
        name = str(flavor["metadata"]["name"])
        if name not in capacity:
            continue
        node_name = f"{name}-0"
        resources = {str(k): str(v) for k, v in capacity[name].items()}
        resources.setdefault("pods", PODS_PER_NODE)
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": node_name,
                    "labels": {
                        **node_labels(flavor),
                        "kubernetes.io/hostname": node_name,
                        "kubernetes.io/os": "linux",
                        "kubernetes.io/arch": "amd64",
                        POOL_LABEL: name,
                    },
                },
                "spec": {
                    "taints": [
                        {k: v for k, v in taint.items() if k in ("key", "value", "effect")}
                        for taint in (flavor.get("spec") or {}).get("nodeTaints") or []
                    ]
                },
                "status": {"capacity": resources, "allocatable": dict(resources)},
            }
        )
    return out
