"""MultiKueue as the repository declares it, judged on the manager cluster.

Which ClusterQueues dispatch through MultiKueue and who writes their quota comes from
auditor/kueue/multikueue.py. On each manager cluster:
- manager quota automation (`quotaManagement: Automated`, KEP-9988): asked for where the
  release's MultiKueueManagerQuotaAutomation gate is off, it does nothing; on, Kueue automates
  only a ClusterQueue of one resource group with one flavor, and rewrites that flavor's
  resources as the workers' sum, a nominalQuota per covered resource: what the repository may
  set there (coveredResources, the flavor's name, the rest of the spec) and may not (a
  borrowingLimit or lendingLimit, dropped at every sum; the nominalQuota values are Kueue's);
- the workers (each MultiKueueCluster read as the repository cluster of its name) mirror the
  manager: every LocalQueue feeding a manager ClusterQueue exists on each worker in the same
  namespace, pointing at a ClusterQueue of the manager's queue's name;
- a manager quota the repository writes is no more than its workers' sum (per resource, over
  their flavors), or the manager admits work no worker can run.

That Argo CD leaves Kueue the quota it writes is check self-heal's. Its rules, each with an
example that passes and one that fails, are declared beside it in multikueue.rules.yaml
(`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.k8s.quantity import ZERO
from auditor.kueue import multikueue, quota
from auditor.kueue.multikueue import Quota
from auditor.model import MEASURED, Finding, Resource
from auditor.validate.checks import protocol
from auditor.validate.checks._common import KUEUE, kueue_configuration, kueue_release, named

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
AUTOMATION_OFF = RULES["multikueue-quota-automation-off"]
UNSUPPORTED = RULES["multikueue-quota-unsupported"]
OWNED = RULES["multikueue-quota-owned"]
WORKER_UNKNOWN = RULES["multikueue-worker-unknown"]
MIRROR = RULES["multikueue-worker-mirror"]
OVER_WORKERS = RULES["multikueue-manager-over-workers"]

ID = "multikueue"
RERUN = protocol.CLUSTER


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    managers = multikueue.managers([r.body for r in ctx.of_kind(*multikueue.KINDS)])
    configs = named(ctx, "MultiKueueConfig")
    if not managers and not configs:
        return
    config = kueue_configuration(ctx)
    known = kueue_release(ctx)
    queues = named(ctx, "ClusterQueue")
    yield from _automation_off(ctx, configs, managers, config, known)
    for name, manager in sorted(managers.items()):
        if multikueue.quota_writer(manager, config, known) is Quota.AUTOMATED:
            yield from _automated(queues[name], known.version)
    yield from _workers(ctx, managers, queues, config, known)


def _automation_off(
    ctx: CheckContext,
    configs: dict[str, Resource],
    managers: dict[str, multikueue.Manager],
    config: t.Any,
    known: t.Any,
) -> t.Iterator[Finding]:
    for name, resource in sorted(configs.items()):
        if (resource.body.get("spec") or {}).get("quotaManagement") != multikueue.AUTOMATED:
            continue
        mine = sorted(m.queue for m in managers.values() if m.config == name)
        if not mine or multikueue.quota_writer(managers[mine[0]], config, known) is not (
            Quota.GATE_OFF
        ):
            continue
        has_gate = multikueue.GATE in known.gates
        why = (
            f"Kueue {known.version}'s {multikueue.GATE} gate is off in this cluster's "
            "Configuration (an alpha gate, off unless featureGates turns it on)"
            if has_gate
            else f"Kueue {known.version} has no manager quota automation (it came in v0.18)"
        )
        yield Finding.about(
            resource,
            AUTOMATION_OFF,
            f"MultiKueueConfig {name} asks for quotaManagement: Automated, but {why}: Kueue "
            f"leaves the quota of {', '.join(mine)} as the repository writes it; "
            + (
                f"turn {multikueue.GATE} on in the Configuration's featureGates, or write Manual"
                if has_gate
                else "write the quota by hand (Manual)"
            ),
            path=("spec", "quotaManagement"),
        )


def _automated(queue: Resource, version: str) -> t.Iterator[Finding]:
    if not multikueue.supported(queue.body):
        groups = list(quota.resource_groups(queue.body))
        shape = f"{len(groups)} resource group(s), {sum(len(g.flavors) for g in groups)} flavor(s)"
        yield Finding.about(
            queue,
            UNSUPPORTED,
            f"ClusterQueue {queue.name}'s quota is left to Kueue (quotaManagement: Automated), "
            f"but Kueue {version} automates only a queue with one resource group holding one "
            f"flavor, and this one has {shape}: Kueue marks it UnsupportedConfiguration and "
            "writes nothing, so the quota here stays in force; keep one flavor covering every "
            "resource the workers' queues hold quota for",
            path=("spec", "resourceGroups"),
        )
        return
    for cell in quota.cells(queue.body):
        for field in multikueue.DROPPED:
            if field not in cell.fields:
                continue
            yield Finding.about(
                queue,
                OWNED,
                f"{cell.shown}.{field} is set on ClusterQueue {queue.name}, whose quota Kueue "
                f"{version} writes (quotaManagement: Automated): it rewrites this flavor's "
                "resources as the workers' sum, a nominalQuota per covered resource and nothing "
                f"else, so the {field} is dropped at every sum. The repository may set "
                "coveredResources (every resource the workers' queues hold quota for), the "
                "flavor's name and the rest of the spec; the nominalQuota values are Kueue's "
                "(written here only because the API requires one)",
                path=(*cell.path, field),
            )


def _load_workers(
    ctx: CheckContext, managers: dict[str, multikueue.Manager]
) -> tuple[dict[str, list[Resource]], list[Finding]]:
    """The objects of each worker the managers name that is a cluster of this repository, and
    a finding for each that is not (what it mirrors and holds cannot be checked)."""
    mk_clusters = named(ctx, "MultiKueueCluster")
    loaded: dict[str, list[Resource]] = {}
    unknown = []
    for worker in sorted({w for m in managers.values() for w in m.workers}):
        if worker == ctx.cluster.name:
            continue
        if worker in ctx.repo.clusters:
            loaded[worker] = ctx.repo.load([worker]).for_cluster(worker)
            continue
        config_of = next(
            named(ctx, "MultiKueueConfig").get(m.config)
            for m in managers.values()
            if worker in m.workers
        )
        where = mk_clusters.get(worker) or config_of
        if where is not None:
            unknown.append(
                Finding.about(
                    where,
                    WORKER_UNKNOWN,
                    f"MultiKueueCluster {worker} names no cluster of this repository "
                    f"(clusters/{worker}/): whether it mirrors {ctx.cluster.name}'s queues and "
                    "holds the quota the manager admits against is not checked",
                )
            )
    return loaded, unknown


def _workers(
    ctx: CheckContext,
    managers: dict[str, multikueue.Manager],
    queues: dict[str, Resource],
    config: t.Any,
    known: t.Any,
) -> t.Iterator[Finding]:
    local_resources = {
        (str(r.namespace), r.name): r for r in ctx.of_kind("LocalQueue") if r.key.group == KUEUE
    }
    manager_locals = multikueue.local_queues(r.body for r in local_resources.values())
    loaded, unknown = _load_workers(ctx, managers)
    yield from unknown
    for name, manager in sorted(managers.items()):
        feeding = sorted(k for k, cq in manager_locals.items() if cq == name)
        if not feeding:
            continue  # nothing is submitted to it: nothing is dispatched
        totals: dict[str, t.Any] = {}
        sources: list[str] = []
        for worker in manager.workers:
            if worker not in loaded:
                continue
            objects = loaded[worker]
            worker_locals = multikueue.local_queues(
                r.body for r in objects if r.kind == "LocalQueue" and r.key.group == KUEUE
            )
            namespaces = {r.name for r in objects if r.kind == "Namespace"}
            worker_queues = {
                r.name: r for r in objects if r.kind == "ClusterQueue" and r.key.group == KUEUE
            }
            for key in feeding:
                yield from _mirror(
                    local_resources[key], worker, key, name, namespaces, worker_locals
                )
            for cq in sorted(multikueue.related(name, manager_locals, worker_locals)):
                if cq in worker_queues:
                    sources.append(f"{worker} {cq}")
                    for resource, value in multikueue.nominal_by_resource(
                        worker_queues[cq].body
                    ).items():
                        totals[resource] = totals[resource] + value if resource in totals else value
        if multikueue.quota_writer(manager, config, known) is Quota.AUTOMATED or not sources:
            continue
        yield from _over(queues[name], totals, sources)


def _mirror(
    local: Resource,
    worker: str,
    key: tuple[str, str],
    manager_queue: str,
    namespaces: set[str],
    worker_locals: dict[tuple[str, str], str],
) -> t.Iterator[Finding]:
    namespace, name = key
    dispatched = (
        f"MultiKueue creates the work submitted to {namespace}/{name} on {worker} in "
        f"namespace {namespace} with queue name {name}"
    )
    if namespace not in namespaces:
        problem = f"{worker} has no namespace {namespace} in the repository: {dispatched}, "
        problem += "which cannot be created there"
    elif key not in worker_locals:
        problem = f"{worker} has no LocalQueue {namespace}/{name}: {dispatched}, where it waits "
        problem += "for a queue that does not exist"
    elif worker_locals[key] != manager_queue:
        problem = (
            f"{worker}'s LocalQueue {namespace}/{name} points at ClusterQueue "
            f"{worker_locals[key]}, not {manager_queue} as here: the worker's quota behind "
            "the manager's queue is read by name (quota automation sums it), so name the "
            "worker's queue as the manager's"
        )
    else:
        return
    yield Finding.about(
        local,
        MIRROR,
        f"LocalQueue {namespace}/{name} feeds MultiKueue ClusterQueue {manager_queue}, and "
        + problem,
        path=("spec", "clusterQueue"),
    )


def _over(queue: Resource, totals: dict[str, t.Any], sources: list[str]) -> t.Iterator[Finding]:
    for resource, value in sorted(multikueue.nominal_by_resource(queue.body).items()):
        workers = totals.get(resource)
        if workers is not None and value <= workers:
            continue
        held = f"{workers.canonical()}" if workers is not None else "none"
        yield Finding.about(
            queue,
            OVER_WORKERS,
            f"ClusterQueue {queue.name} admits {value.canonical()} of {resource} on the manager, "
            f"but its workers' queues ({', '.join(sources)}) hold {held} in all: the manager "
            "admits work no worker has quota for, which then waits on the workers; lower it to "
            "at most their sum, or let Kueue write it (quotaManagement: Automated)",
            path=("spec", "resourceGroups"),
            # how far over, which a baseline records: the same queue further over is new
            extra={MEASURED: float((value - (workers if workers is not None else ZERO)).value)},
        )
