"""What a verify run makes on the cluster (namespaces, queues, Jobs, a stopPolicy), and undoes."""

from __future__ import annotations

import contextlib
import time
import typing as t

from auditor import rules
from auditor.errors import ClusterAccessError, ConfigError
from auditor.k8s import conditions
from auditor.k8s.objects import Json
from auditor.k8s.quantity import Quantity
from auditor.kueue import KUEUE_GROUP, capacity, cohorts, quota, stop_policy, versions
from auditor.kueue.workloads import PRIORITY_LABEL, QUEUE_LABEL, QUOTA_RESERVED, owner_job
from auditor.repo.profiles import ClusterProfile, TenantCluster, TenantProfile
from auditor.verify.objects import (
    MANAGER,
    MAX_UNITS,
    PROBE_IMAGE,
    RUN_IMAGE,
    RUN_LABEL,
    Check,
    Probe,
    Tenant,
)

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster

_RULES = rules.of(__name__)
VERIFY_CLEANUP = _RULES["verify-cleanup"]


class Scratch:
    """The objects of one run, so cleanup can remove exactly those; and the reads it needs."""

    def __init__(self, cluster: KubeCluster, profile: ClusterProfile, run_id: str, timeout: float):
        self.cluster = cluster
        self.profile = profile
        self.kueue = profile.kueue_api  # the apiVersion of every Kueue object read or made
        self.run_id = run_id
        self.timeout = timeout
        self.namespaces: list[str] = []
        self.stop_policies: dict[str, str | None] = {}  # ClusterQueues we changed: the old value
        self.jobs = 0

    # -- cleanup -------------------------------------------------------------------------------

    def cleanup(self) -> Check:
        """Restore every stopPolicy changed and delete every namespace made; report leftovers."""
        problems: list[str] = []
        restored = 0
        for cq in list(self.stop_policies):
            try:
                self.restore_stop_policy(cq)
                restored += 1
            except ClusterAccessError as exc:
                problems.append(f"stopPolicy of {cq} not restored: {exc}")
        # By label too: a namespace created just before an interrupt may not be recorded yet.
        for ns in sorted({*self.namespaces, *self._left_namespaces()}):
            with contextlib.suppress(ClusterAccessError):  # already gone is fine
                self.cluster.delete("v1", "Namespace", ns, propagation="Background")
        deadline = time.monotonic() + self.timeout
        left = self._left_namespaces()
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = self._left_namespaces()
        if left:
            problems.append(f"namespaces still terminating after {self.timeout:.0f}s: {left}")
        return Check(
            VERIFY_CLEANUP,
            not problems,
            "; ".join(problems)
            or f"deleted {len(self.namespaces)} scratch namespace(s) with their {self.jobs} Job(s)"
            + (f", restored the stopPolicy of {restored} ClusterQueue(s)" if restored else ""),
        )

    def _left_namespaces(self) -> list[str]:
        return [
            n["metadata"]["name"]
            for n in self.cluster.list("v1", "Namespace")
            if (n["metadata"].get("labels") or {}).get(RUN_LABEL) == self.run_id
        ]

    def clear(self, *tenants: Tenant) -> None:
        """Delete the probe Jobs of `tenants` and wait until their Workloads are gone."""
        for tenant in tenants:
            for job in self.cluster.list_in("batch/v1", "Job", tenant.namespace):
                self.cluster.delete(
                    "batch/v1",
                    "Job",
                    job["metadata"]["name"],
                    tenant.namespace,
                    propagation="Background",
                )
        self.wait_for(lambda: not any(self.workloads(t.namespace) for t in tenants))

    # -- building blocks -----------------------------------------------------------------------

    def tenants(self, profiles: list[TenantProfile]) -> list[Tenant]:
        out = []
        for tp in profiles:
            placement = tp.clusters.get(self.profile.name)
            if not placement or not placement.cluster_queues:
                continue
            cq = self.cq(placement.cluster_queues[0])
            policy = stop_policy.policy_of(cq)
            if stop_policy.holds(policy):
                # Every check would fail for this one reason, and verify must not resume it.
                raise ClusterAccessError(
                    f"cluster {self.profile.name}: ClusterQueue {cq['metadata']['name']} has "
                    f"stopPolicy {policy}; verify probes only a queue that admits",
                    cluster=self.profile.name,
                    kind="ClusterQueue",
                )
            tenant = Tenant(
                tp.name, cq, f"kueue-verify-{self.run_id}-{tp.name}", self._labels(tp, placement)
            )
            self.make_namespace(tenant)
            out.append(tenant)
        return out

    def _labels(self, tp: TenantProfile, placement: TenantCluster) -> dict[str, str]:
        """The labels of the tenant's own namespace, so the ClusterQueue selects the scratch one."""
        key, value = self.profile.admission_label
        labels = {key: value}
        if self.profile.tenant_label:
            labels[self.profile.tenant_label] = tp.name
        for ns in placement.namespaces[:1]:
            with contextlib.suppress(ClusterAccessError):
                live = self.cluster.get("v1", "Namespace", ns)
                labels = dict(live["metadata"].get("labels") or labels)
        labels.pop("kubernetes.io/metadata.name", None)
        return labels

    def make_namespace(self, tenant: Tenant) -> None:
        labels = {**tenant.labels, RUN_LABEL: self.run_id}
        self.cluster.create(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": tenant.namespace, "labels": labels},
            }
        )
        self.namespaces.append(tenant.namespace)
        self.cluster.create(
            {
                "apiVersion": self.kueue,
                "kind": "LocalQueue",
                "metadata": {"name": "probe", "namespace": tenant.namespace},
                "spec": {"clusterQueue": tenant.cq_name},
            }
        )

    def submit(
        self,
        tenant: Tenant,
        probe: Probe,
        count: int,
        priority: str | None,
        stem: str,
        *,
        amount: Quantity | None = None,
        run_for: int | None = None,
        pinned: bool = True,
        queued: bool = True,
    ) -> list[str]:
        """Create `count` probe Jobs asking for `amount` (default: one unit); return their names.

        A Job runs until deleted, or `run_for` seconds and succeeds. `pinned`: its Pods select
        the probe's flavor's nodes themselves; otherwise only Kueue's flavor assignment does
        (they tolerate its taints either way, as Kueue before v0.10 needs to admit them).
        Not `queued`: it names no LocalQueue and is created unsuspended, as a Job written to
        bypass Kueue would be, so only Kueue's own webhook can hold it.
        """
        names = []
        request = str(amount or probe.unit)
        for i in range(count):
            name = f"{stem}-{i}"
            labels = {QUEUE_LABEL: "probe", RUN_LABEL: self.run_id}
            if not queued:
                del labels[QUEUE_LABEL]
            if priority:
                labels[PRIORITY_LABEL] = priority
            self.cluster.create(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": {"name": name, "namespace": tenant.namespace, "labels": labels},
                    "spec": {
                        "parallelism": 1,
                        "completions": 1,
                        "backoffLimit": 0,
                        "suspend": queued,  # Kueue unsuspends it on admission
                        "template": _template(self.run_id, probe, request, run_for, pinned),
                    },
                }
            )
            self.jobs += 1
            names.append(name)
        return names

    def workloads(self, namespace: str, jobs: list[str] | None = None) -> list[Json]:
        """The Workloads in `namespace` (of the Jobs named `jobs` only, when given)."""
        found = self.cluster.list_in(self.kueue, "Workload", namespace)
        if jobs is None:
            return found
        return [w for w in found if owner_job(w) in jobs]

    def wait_settled(
        self, namespace: str, jobs: list[str], *, want_admitted: bool = False
    ) -> list[Json]:
        """Wait until every Job has a Workload that Kueue has decided on (QuotaReserved set)."""
        seen: list[Json] = []

        def settled() -> bool:
            nonlocal seen
            seen = self.workloads(namespace, jobs)
            decided = conditions.is_true if want_admitted else conditions.decided
            return len(seen) == len(jobs) and all(decided(w, QUOTA_RESERVED) for w in seen)

        self.wait_for(settled, quiet=True)
        if jobs and not seen:
            # Not a finding: with no Workload at all, Kueue never looked at the Jobs.
            raise ClusterAccessError(
                f"cluster {self.profile.name}: no Workload appeared for the probe Jobs in "
                f"{namespace} within {self.timeout:.0f}s; is Kueue running and managing Jobs?",
                cluster=self.profile.name,
            )
        return seen

    def cq_reserving(self, tenant: Tenant, count: int) -> Json:
        """The ClusterQueue once its status counts `count` reserving Workloads of this run.

        Kueue updates a ClusterQueue's status after the Workloads', so read it when it caught up.
        """
        base = int((tenant.cq.get("status") or {}).get("reservingWorkloads") or 0)
        cq: Json = {}

        def caught_up() -> bool:
            nonlocal cq
            cq = self.cq(tenant.cq_name)
            return int((cq.get("status") or {}).get("reservingWorkloads") or 0) == base + count

        self.wait_for(caught_up, quiet=True)
        return cq

    def wait_for(self, ready: t.Callable[[], bool], *, quiet: bool = False) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if ready():
                return
            time.sleep(0.25)
        if not quiet:
            raise ClusterAccessError(
                f"cluster {self.profile.name}: Kueue did not act within {self.timeout:.0f}s",
                cluster=self.profile.name,
            )

    def set_stop_policy(self, cq: str, policy: str) -> None:
        if cq not in self.stop_policies:
            self.stop_policies[cq] = stop_policy.policy_of(self.cq(cq))
        self.cluster.patch(
            self.kueue, "ClusterQueue", cq, stop_policy.patch(policy), manager=MANAGER
        )

    def restore_stop_policy(self, cq: str) -> None:
        if cq in self.stop_policies:
            old = self.stop_policies.pop(cq)
            restored = stop_policy.patch(old or stop_policy.NONE)
            self.cluster.patch(self.kueue, "ClusterQueue", cq, restored, manager=MANAGER)

    def api_for(self, kind: str) -> str | None:
        """The Kueue apiVersion serving `kind`: the profile's, else any the cluster serves."""
        for api in versions.to_try(self.kueue, self.cluster.served_versions(KUEUE_GROUP)):
            try:
                self.cluster.resource(api, kind)
            except ClusterAccessError:
                continue
            return api
        return None

    def cq(self, name: str) -> Json:
        return self.cluster.get(self.kueue, "ClusterQueue", name)

    def size_probe(self, cq: Json) -> Probe:
        """The flavor and resource to probe: one with a borrowingLimit if any, else any quota."""
        candidates = [
            (cell, nominal)
            for cell in quota.cells(cq)
            if (nominal := cell.quantity(quota.NOMINAL)) is not None and nominal.value > 0
        ]
        if not candidates:
            raise ConfigError(
                f"cluster {self.profile.name}: ClusterQueue {cq['metadata']['name']} has no "
                "nominal quota to probe"
            )
        cell, nominal = next(
            ((c, n) for c, n in candidates if quota.BORROWING in c.fields), candidates[0]
        )
        whole = nominal.value == nominal.value.to_integral_value()
        parts = int(nominal.value) if whole and nominal.value <= MAX_UNITS else 4
        spec = self.cluster.get(self.kueue, "ResourceFlavor", cell.flavor).get("spec") or {}
        return Probe(
            cell.flavor,
            cell.resource,
            Quantity(nominal.value / parts, nominal.format),
            dict(spec.get("nodeLabels") or {}),
            [
                {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
                for taint in spec.get("nodeTaints") or []
            ],
        )

    def priorities(self) -> tuple[str | None, str | None]:
        classes = sorted(
            self.cluster.list(self.kueue, "WorkloadPriorityClass"), key=lambda c: int(c["value"])
        )
        if len(classes) < 2 or classes[0]["value"] == classes[-1]["value"]:
            return (classes[0]["metadata"]["name"] if classes else None), None
        return classes[0]["metadata"]["name"], classes[-1]["metadata"]["name"]

    def lendable(self, cq: Json, probe: Probe) -> tuple[str, Quantity] | None:
        """The root of `cq`'s cohort tree and what the rest of the tree can lend it now (None
        outside a cohort): what every other member lends less what it uses beyond what it
        keeps, and the Cohorts' own quota, up through parent cohorts."""
        found = self.cluster.list(self.kueue, "ClusterQueue")
        with contextlib.suppress(ClusterAccessError):  # a Kueue without the Cohort kind
            found += self.cluster.list(self.kueue, "Cohort")
        lending = cohorts.Lending.of(found, quota.used)
        rest = lending.to(cq, (probe.flavor, probe.resource))
        tree = lending.forest.tree_of(cq)
        return None if rest is None or tree is None else (tree, rest)


def _template(run_id: str, probe: Probe, request: str, run_for: int | None, pinned: bool) -> Json:
    container: Json = {
        "name": "probe",
        "image": PROBE_IMAGE,
        "resources": {"requests": {probe.resource: request}, "limits": {probe.resource: request}},
    }
    annotations = {}
    if run_for is not None:  # on a node a container sleeps; on a simulated one kwok waits
        container.update(image=RUN_IMAGE, command=["sleep", str(run_for)])
        annotations[capacity.RUN_FOR] = f"{run_for}s"
    # Tolerating the flavor's taints only permits its nodes; the node selector chooses them.
    spec: Json = {
        "restartPolicy": "Never",
        "containers": [container],
        "tolerations": probe.tolerations,
    }
    if pinned:
        spec["nodeSelector"] = probe.node_selector
    return {
        "metadata": {"labels": {RUN_LABEL: run_id}, "annotations": annotations},
        "spec": spec,
    }
