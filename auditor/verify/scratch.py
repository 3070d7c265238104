"""What a verify run makes on the cluster (namespaces, queues, Jobs, a stopPolicy), and undoes."""

from __future__ import annotations

import contextlib
import time
import typing as t

from auditor import rules
from auditor.errors import ClusterAccessError
from auditor.k8s import conditions
from auditor.k8s.objects import Json
from auditor.k8s.quantity import Quantity
from auditor.kueue import KUEUE_GROUP, cohorts, quota, stop_policy, versions
from auditor.kueue.workloads import PRIORITY_LABEL, QUEUE_LABEL, QUOTA_RESERVED, owner_job
from auditor.live.apierrors import KindNotServed, NotFound
from auditor.repo.profiles import ClusterProfile, TenantCluster, TenantProfile
from auditor.verify import probes
from auditor.verify.model import (
    MANAGER,
    RUN_LABEL,
    Check,
    Probe,
    ScratchTenant,
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
            with contextlib.suppress(NotFound):  # already gone is fine
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

    def clear(self, *tenants: ScratchTenant) -> None:
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
        self.require(
            lambda: not any(self.workloads(t.namespace) for t in tenants),
            "the probe Jobs' Workloads deleted",
        )

    # -- building blocks -----------------------------------------------------------------------

    def make_tenants(self, profiles: list[TenantProfile]) -> list[ScratchTenant]:
        """A scratch namespace and LocalQueue for each tenant placed here, labelled as its own."""
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
                )
            tenant = ScratchTenant(
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

    def make_namespace(self, tenant: ScratchTenant) -> None:
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
        tenant: ScratchTenant,
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
                        "template": probes.pod_template(
                            self.run_id, probe, request, run_for, pinned
                        ),
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

        self.held_within_deadline(settled)
        if jobs and not seen:
            # Not a finding: with no Workload at all, Kueue never looked at the Jobs.
            raise ClusterAccessError(
                f"cluster {self.profile.name}: no Workload appeared for the probe Jobs in "
                f"{namespace} within {self.timeout:.0f}s; is Kueue running and managing Jobs?",
                cluster=self.profile.name,
            )
        return seen

    def cq_reserving(self, tenant: ScratchTenant, count: int) -> Json:
        """The ClusterQueue once its status counts `count` reserving Workloads of this run.

        Kueue updates a ClusterQueue's status after the Workloads', so read it when it caught up.
        """
        base = int((tenant.cq.get("status") or {}).get("reservingWorkloads") or 0)
        cq: Json = {}

        def caught_up() -> bool:
            nonlocal cq
            cq = self.cq(tenant.cq_name)
            return int((cq.get("status") or {}).get("reservingWorkloads") or 0) == base + count

        self.held_within_deadline(caught_up)
        return cq

    def held_within_deadline(self, ready: t.Callable[[], bool]) -> bool:
        """Poll `ready` until it holds or the run's deadline passes; whether it held. For the
        waits whose caller judges what it saw either way (a refusal is a finding, not an error)."""
        deadline = time.monotonic() + self.timeout
        while True:
            if ready():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.25)

    def require(self, ready: t.Callable[[], bool], what: str) -> None:
        """Wait for `ready`; past the deadline the cluster did not act: an access error."""
        if not self.held_within_deadline(ready):
            raise ClusterAccessError(
                f"cluster {self.profile.name}: {what} did not happen within {self.timeout:.0f}s",
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
            except KindNotServed:
                continue
            return api
        return None

    def cq(self, name: str) -> Json:
        return self.cluster.get(self.kueue, "ClusterQueue", name)

    def size_probe(self, cq: Json) -> Probe:
        """The probe for `cq` (see probes.probe_for), its flavor read from the cluster."""
        flavors = {
            f["metadata"]["name"]: f for f in self.cluster.list(self.kueue, "ResourceFlavor")
        }
        return probes.probe_for(self.profile.name, cq, flavors)

    def priorities(self) -> tuple[str | None, str | None]:
        """The lowest and highest WorkloadPriorityClass (see probes.priority_pair)."""
        return probes.priority_pair(self.cluster.list(self.kueue, "WorkloadPriorityClass"))

    def lendable(self, cq: Json, probe: Probe) -> tuple[str, Quantity] | None:
        """The root of `cq`'s cohort tree and what the rest of the tree can lend it now (None
        outside a cohort): what every other member lends less what it uses beyond what it
        keeps, and the Cohorts' own quota, up through parent cohorts."""
        found = self.cluster.list(self.kueue, "ClusterQueue")
        with contextlib.suppress(KindNotServed):  # a Kueue without the Cohort kind
            found += self.cluster.list(self.kueue, "Cohort")
        lending = cohorts.Lending.of(found, quota.used)
        rest = lending.to(cq, (probe.flavor, probe.resource))
        tree = lending.forest.tree_of(cq)
        return None if rest is None or tree is None else (tree, rest)
