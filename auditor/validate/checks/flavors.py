"""ResourceFlavors stay distinct, and each tenant is offered only the flavors its jobs tolerate.

A flavor is a class of nodes: its nodeLabels (and taints) select them. A flavor a ClusterQueue
offers for a GPU resource without nodeLabels matches every node, so the GPU models behind the
flavors are no longer told apart; two flavors with the same labels and taints select the same
nodes, and quota given for one is quota for the other. A flavor with a failure cost (spot nodes
reclaimed by the provider) is for tenants whose profile lists it in `flavors`: a ClusterQueue
offering a tenant a flavor its profile does not list is an error (no `flavors`: any flavor).
A flavor that names a Topology (topology-aware scheduling) the repository does not define
deactivates every ClusterQueue offering it (kubernetes-sigs/kueue#3645: found only when a job is
submitted), on a release whose TopologyAwareScheduling gate is on.

Its rules, each with an example that passes and one that fails, are declared beside it in
flavors.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.kueue import config as kueue_config
from auditor.kueue.quota import resource_groups
from auditor.model import Finding, Resource
from auditor.validate.checks import protocol
from auditor.validate.checks._common import (
    KUEUE,
    kueue_configuration,
    kueue_release,
    named,
    queue_tenants,
    spec_of,
)

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
GPU_FLAVOR_UNLABELLED = RULES["gpu-flavor-unlabelled"]
FLAVOR_OVERLAP = RULES["flavor-overlap"]
FLAVOR_NOT_TOLERATED = RULES["flavor-not-tolerated"]
FLAVOR_TOPOLOGY_MISSING = RULES["flavor-topology-missing"]

ID = "flavors"
# Its findings about a ClusterQueue depend on it, the flavors, Topologies, Kueue's
# Configuration and the profiles; those about flavors on the flavors alone (protocol.Rerun).
RERUN = protocol.per_object_of("ClusterQueue")


def is_accelerator(resource: str) -> bool:
    """An extended resource naming a GPU (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915) or
    a slice of one (nvidia.com/mig-1g.10gb)."""
    domain, slash, name = resource.partition("/")
    return bool(slash) and ("gpu" in domain or "gpu" in name or name.startswith("mig-"))


def node_set(flavor: Resource) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, ...]]]:
    """What selects a flavor's nodes: its nodeLabels and its nodeTaints."""
    spec = spec_of(flavor)
    labels = spec.get("nodeLabels")
    taints = spec.get("nodeTaints")
    pairs = (labels if isinstance(labels, dict) else {}).items()
    return (
        frozenset((str(k), str(v)) for k, v in pairs),
        frozenset(
            (str(x.get("key")), str(x.get("value", "")), str(x.get("effect")))
            for x in (taints if isinstance(taints, list) else [])
            if isinstance(x, dict)
        ),
    )


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    flavors = named(ctx, "ResourceFlavor")
    seen: dict[tuple[frozenset[tuple[str, str]], frozenset[tuple[str, ...]]], Resource] = {}
    for flavor in flavors.values():
        nodes = node_set(flavor)
        first = seen.setdefault(nodes, flavor)
        if first is not flavor:
            yield Finding.about(
                flavor,
                FLAVOR_OVERLAP,
                f"ResourceFlavor {flavor.name} has the same nodeLabels and nodeTaints as "
                f"{first.name} ({first.file}:{first.line}): both select the same nodes, so their "
                "quotas are for one class of hardware; give each its own label",
                path=["spec", "nodeLabels"],
            )
    tenants_of = queue_tenants(ctx)
    missing = _missing_topologies(ctx, flavors)
    for cq in (r for r in ctx.of_kind("ClusterQueue") if r.key.group == KUEUE):
        for group in resource_groups(cq.body):
            gpus = [r for r in group.covered if is_accelerator(r)]
            for f, entry in enumerate(group.flavors):
                name = str(entry.get("name")) if isinstance(entry, dict) else ""
                path = [*group.path, "flavors", f, "name"]
                offered = flavors.get(name)
                if gpus and offered is not None and not node_set(offered)[0]:
                    yield Finding.about(
                        cq,
                        GPU_FLAVOR_UNLABELLED,
                        f"ClusterQueue {cq.name} offers {', '.join(gpus)} in flavor {name}, "
                        f"which has no nodeLabels ({offered.file}:{offered.line}) and so matches "
                        "every node; label the flavor with the nodes' GPU model",
                        path=path,
                    )
                if name in missing:
                    yield Finding.about(
                        cq,
                        FLAVOR_TOPOLOGY_MISSING,
                        f"ClusterQueue {cq.name} offers flavor {name}, whose topologyName "
                        f"{missing[name]} names no Topology in the repository: Kueue "
                        f"{kueue_release(ctx).version} keeps the queue inactive (TopologyNotFound) "
                        "and admits none of its work; add the Topology, or fix the name",
                        path=path,
                    )
                refusing = [
                    tenant.name
                    for tenant in tenants_of.get(cq.name, [])
                    if tenant.flavors is not None and name not in tenant.flavors
                ]
                if name and refusing:
                    yield Finding.about(
                        cq,
                        FLAVOR_NOT_TOLERATED,
                        f"ClusterQueue {cq.name} offers flavor {name} to {', '.join(refusing)}, "
                        "whose profile does not list it among the flavors its jobs tolerate "
                        "(`flavors`); remove it from the queue, or add it to the profile once "
                        "the jobs are known to survive it",
                        path=path,
                    )


def _missing_topologies(ctx: CheckContext, flavors: dict[str, Resource]) -> dict[str, str]:
    """Flavor -> the Topology it names that the repository lacks, where topology-aware
    scheduling is on (without it Kueue does not look the Topology up)."""
    if not kueue_config.gate(
        kueue_configuration(ctx), kueue_release(ctx), "TopologyAwareScheduling"
    ):
        return {}
    topologies = named(ctx, "Topology")
    out = {}
    for name, flavor in flavors.items():
        topology = spec_of(flavor).get("topologyName")
        if isinstance(topology, str) and topology and topology not in topologies:
            out[name] = topology
    return out
