"""Every LocalQueue names a ClusterQueue that exists, that its tenant may use, and that admits it.

Kueue accepts a LocalQueue pointing at a ClusterQueue that does not exist, or whose
namespaceSelector excludes the queue's namespace: its jobs then wait forever. A ClusterQueue this
repository defines with a type error (kept out of the policy checks) is said to be invalid, with
the finding about it, rather than missing: the fix is there, not in the LocalQueue. The tenant
is the one whose profile lists the queue's namespace on this cluster; the namespace's labels are
the ones its Namespace object in this repository gives it.

Its rules, each with an example that passes and one that fails, are declared beside it in
localqueue_target.rules.yaml (`kueue-gitops explain RULE`, docs/rules.md).
"""

from __future__ import annotations

import typing as t

from auditor import rules
from auditor.model import Finding, Resource
from auditor.validate.checks import protocol
from auditor.validate.checks._common import (
    KUEUE,
    labels_of,
    named,
    namespace_owners,
    selector_of,
    spec_of,
)

if t.TYPE_CHECKING:
    from auditor.repo.profiles import TenantProfile
    from auditor.validate.checks import CheckContext

RULES = rules.of(__name__)
LQ_CLUSTER_QUEUE_MISSING = RULES["lq-cluster-queue-missing"]
LQ_CLUSTER_QUEUE_INVALID = RULES["lq-cluster-queue-invalid"]
LQ_CLUSTER_QUEUE_NOT_AUTHORISED = RULES["lq-cluster-queue-not-authorised"]
LQ_NAMESPACE_NOT_SELECTED = RULES["lq-namespace-not-selected"]

ID = "localqueue-target"
PATH = ["spec", "clusterQueue"]


def refers(queue: Resource) -> tuple[tuple[str, str], ...]:
    """The ClusterQueue and the Namespace a LocalQueue's findings read."""
    return ("ClusterQueue", str(spec_of(queue).get("clusterQueue"))), (
        "Namespace",
        queue.namespace or "",
    )


# A LocalQueue's findings: it, its ClusterQueue and Namespace, which ClusterQueues there are,
# the profiles (protocol.Rerun).
RERUN = protocol.per_object_of("LocalQueue", refers=refers)


def check(ctx: CheckContext) -> t.Iterator[Finding]:
    cluster_queues = named(ctx, "ClusterQueue")
    namespaces = named(ctx, "Namespace", group="")
    owners = namespace_owners(ctx)
    invalid = {
        key.name: finding
        for key, finding in ctx.invalid.items()
        if key.kind == "ClusterQueue" and key.group == KUEUE
    }
    matchers: dict[str, Matcher] = {}  # by ClusterQueue: parsed once
    for queue in ctx.of_kind("LocalQueue"):
        if queue.key.group != KUEUE:
            continue
        cq, problem = _target(ctx, queue, cluster_queues, invalid)
        if problem is not None:
            yield problem
        if cq is None:
            continue
        yield from _authorised(ctx, queue, cq, owners.get(queue.namespace or ""))
        namespace = namespaces.get(queue.namespace or "")
        yield from _selected(ctx, queue, cq, namespace, matchers)


def _target(
    ctx: CheckContext,
    queue: Resource,
    cluster_queues: dict[str, Resource],
    invalid: dict[str, Finding],
) -> tuple[Resource | None, Finding | None]:
    """The ClusterQueue `queue` sends its jobs to, or the finding that it has none to send them
    to (none either way while part of the cluster did not render)."""
    target = spec_of(queue).get("clusterQueue")
    cq = cluster_queues.get(str(target)) if target else None
    why = invalid.get(str(target)) if target else None
    if why is not None:
        return None, Finding.about(
            queue,
            LQ_CLUSTER_QUEUE_INVALID,
            f"ClusterQueue {target!r} is defined but invalid, so the API server would refuse "
            f"it and jobs sent here would never run: {why.file}:{why.line}: {why.message}",
            path=PATH,
        )
    if cq is None and not ctx.unrendered:  # else it may be in the folder that did not render
        return None, Finding.about(
            queue,
            LQ_CLUSTER_QUEUE_MISSING,
            f"ClusterQueue {target!r} does not exist on {ctx.cluster.name} (known: "
            f"{', '.join(sorted(cluster_queues)) or 'none'}); jobs sent here would never run",
            path=PATH,
        )
    return cq, None


def _authorised(
    ctx: CheckContext, queue: Resource, cq: Resource, tenant: TenantProfile | None
) -> t.Iterator[Finding]:
    """A finding when the profile of the tenant owning the queue's namespace does not list `cq`."""
    namespace = queue.namespace or ""
    allowed = tenant.clusters[ctx.cluster.name].cluster_queues if tenant else ()
    if cq.name in allowed:
        return
    who = (
        f"the profile of {tenant.name} ({tenant.file}) lists "
        f"{', '.join(allowed) or 'none'} on {ctx.cluster.name}"
        if tenant
        else f"no tenant profile lists namespace {namespace!r} on {ctx.cluster.name}"
    )
    yield Finding.about(
        queue,
        LQ_CLUSTER_QUEUE_NOT_AUTHORISED,
        f"this LocalQueue may not use ClusterQueue {cq.name}: {who}",
        path=PATH,
    )


def _selected(
    ctx: CheckContext,
    queue: Resource,
    cq: Resource,
    ns: Resource | None,
    matchers: dict[str, Matcher],
) -> t.Iterator[Finding]:
    """A finding when `cq`'s namespaceSelector does not admit the queue's namespace `ns` (or
    the repository does not define it)."""
    namespace = queue.namespace or ""
    if ns is None:
        if ctx.unrendered:  # it may be defined in the folder that did not render
            return
        yield Finding.about(
            queue,
            LQ_NAMESPACE_NOT_SELECTED,
            f"namespace {namespace!r} is not defined in this repository for "
            f"{ctx.cluster.name}, so nothing guarantees ClusterQueue {cq.name} admits it; "
            "add its Namespace with the admission label",
            path=["metadata", "namespace"],
        )
    elif not _matcher(matchers, cq)(labels_of(ns)):
        labels = ", ".join(f"{k}={v}" for k, v in sorted(labels_of(ns).items())) or "none"
        reason = (
            "has no namespaceSelector (it admits nothing)"
            if spec_of(cq).get("namespaceSelector") is None
            else "has a namespaceSelector that does not match its labels"
        )
        yield Finding.about(
            queue,
            LQ_NAMESPACE_NOT_SELECTED,
            f"ClusterQueue {cq.name} ({cq.file}:{cq.line}) {reason}; namespace {namespace} "
            f"is labelled {labels} in {ns.file}, so jobs queued here are never admitted",
            path=PATH,
        )


Matcher = t.Callable[[t.Any], bool]


def _matcher(known: dict[str, Matcher], cq: Resource) -> Matcher:
    found = known.get(cq.name)
    if found is None:
        found = known[cq.name] = selector_of(cq)
    return found
