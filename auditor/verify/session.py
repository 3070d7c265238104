"""One verify run: the scenarios, and the bookkeeping that lets cleanup remove what it made."""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
import typing as t

from auditor import quantity
from auditor.errors import ClusterAccessError, ConfigError
from auditor.quantity import Quantity
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.verify import workloads as wl
from auditor.verify.objects import (
    KUEUE,
    MANAGER,
    MAX_UNITS,
    PRIORITY_LABEL,
    PROBE_IMAGE,
    QUEUE_LABEL,
    RUN_LABEL,
    Check,
    Json,
    Probe,
    Tenant,
)

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster


class Session:
    """The state of one run: what it created, so cleanup can remove exactly that."""

    def __init__(self, cluster: KubeCluster, profile: ClusterProfile, run_id: str, timeout: float):
        self.cluster = cluster
        self.profile = profile
        self.run_id = run_id
        self.timeout = timeout
        self.namespaces: list[str] = []
        self.stop_policies: dict[str, str | None] = {}  # ClusterQueues we changed: the old value
        self.jobs = 0

    # -- the checks ----------------------------------------------------------------------------

    def run_all(
        self, profiles: list[TenantProfile], watch_seconds: int, hold_seconds: float
    ) -> list[Check]:
        tenants = self._tenants(profiles)
        if not tenants:
            raise ConfigError(
                f"cluster {self.profile.name}: no tenant profile names a ClusterQueue on it; "
                "verify needs one to probe"
            )
        first = tenants[0]
        probe = self.size_probe(first.cq)
        low, high = self._priorities()
        checks = [*self.check_quota(first, probe, low)]
        checks.append(self.check_preemption(first, tenants[1:], probe, low, high))
        self.clear(first, *tenants[1:])
        checks.append(self.check_stop_policy(first, probe, low, hold_seconds))
        self.clear(first)
        checks.append(self.check_unlabelled(first, probe, low, watch_seconds))
        return checks

    def check_quota(self, tenant: Tenant, probe: Probe, low: str | None) -> list[Check]:
        quota = wl.quota(tenant.cq, probe)
        used = wl.usage(tenant.cq, probe)
        nominal_jobs = probe.units(quota["nominalQuota"] - used)
        within = self.submit(tenant, probe, nominal_jobs, low, "nominal")
        seen = self.wait_settled(tenant.namespace, within)
        admitted = [w for w in seen if wl.is_true(w, "QuotaReserved")]
        borrowed = wl.borrowed(self.cq_reserving(tenant, len(admitted)), probe)
        nominal = Check(
            "nominal-quota",
            "quota",
            len(admitted) == nominal_jobs and borrowed.value == 0,
            f"{len(admitted)} of {nominal_jobs} Jobs of {probe.unit} {probe.resource} within "
            f"the nominal quota {quota['nominalQuota']} of flavor {probe.flavor} admitted, "
            f"borrowing {borrowed}",
            tenant.cq_name,
            wl.observed(seen),
        )
        lendable = self._lendable(tenant.cq, probe)
        if lendable is None:
            return [
                nominal,
                Check(
                    "borrowing-limit",
                    "quota",
                    None,
                    f"ClusterQueue {tenant.cq_name} is in no cohort: there is nothing to borrow",
                    tenant.cq_name,
                ),
            ]
        ceiling = quota.get("borrowingLimit")
        borrow_jobs = probe.units(lendable if ceiling is None else min(ceiling, lendable))
        extra = self.submit(tenant, probe, borrow_jobs + 1, low, "borrow")
        seen = self.wait_settled(tenant.namespace, within + extra)
        admitted = [w for w in seen if wl.is_true(w, "QuotaReserved")]
        pending = [w for w in seen if wl.is_false(w, "QuotaReserved")]
        borrowed = wl.borrowed(self.cq_reserving(tenant, len(admitted)), probe)
        expected = probe.unit.value * borrow_jobs
        ok = (
            len(admitted) == nominal_jobs + borrow_jobs
            and len(pending) == 1
            and borrowed.value == expected
        )
        return [
            nominal,
            Check(
                "borrowing-limit",
                "quota",
                ok,
                f"{len(admitted)} of {nominal_jobs + borrow_jobs + 1} Jobs admitted, borrowing "
                f"{borrowed} {probe.resource} (expected {quantity.Quantity(expected)}: "
                f"borrowingLimit {ceiling or 'unset'}, the cohort can lend {lendable}); "
                f"{len(pending)} beyond it pending with QuotaReserved=False (expected 1)",
                tenant.cq_name,
                wl.observed(seen),
            ),
        ]

    def check_preemption(
        self, tenant: Tenant, peers: list[Tenant], probe: Probe, low: str | None, high: str | None
    ) -> Check:
        """A high-priority Job reclaims quota in the cohort (or preempts within the queue)."""
        peer = next(
            (p for p in peers if wl.cohort(p.cq) and wl.cohort(p.cq) == wl.cohort(tenant.cq)), None
        )
        initiator_side = peer or tenant
        policy = initiator_side.cq["spec"].get("preemption") or {}
        allowed = (
            policy.get("reclaimWithinCohort", "Never") != "Never"
            if peer
            else policy.get("withinClusterQueue", "Never") != "Never"
        )
        if not (low and high) or not allowed:
            why = (
                "fewer than two WorkloadPriorityClasses with different values"
                if not (low and high)
                else f"ClusterQueue {initiator_side.cq_name} never preempts"
            )
            return Check("preemption", "preemption", None, f"not checked: {why}", tenant.cq_name)
        size = wl.quota(initiator_side.cq, probe)["nominalQuota"] if peer else probe.unit
        jobs = self.submit(initiator_side, probe, 1, high, "preemptor", amount=size)
        deadline = time.monotonic() + self.timeout
        initiator: Json = {}
        while time.monotonic() < deadline:
            [initiator] = self.workloads(initiator_side.namespace, jobs) or [{}]
            if initiator and wl.is_true(initiator, "QuotaReserved"):
                break
            time.sleep(0.25)
        everything = self.workloads(tenant.namespace) + (
            self.workloads(peer.namespace) if peer else []
        )
        victims = [w for w in everything if wl.evicted_by_preemption(w)]
        top = int((initiator.get("spec") or {}).get("priority") or 0)
        lower = [w for w in victims if int(w["spec"].get("priority") or 0) < top]
        # Kueue records both: Evicted (reason Preempted) and Preempted (why: the preemption kind).
        recorded = [
            w
            for w in victims
            if wl.reason(w, "Evicted") == "Preempted" and wl.is_true(w, "Preempted")
        ]
        reasons = sorted({wl.reason(w, "Preempted") or "?" for w in victims})
        admitted = bool(initiator) and wl.is_true(initiator, "QuotaReserved")
        where = f"in ClusterQueue {peer.cq_name}" if peer else "in the same ClusterQueue"
        return Check(
            "preemption",
            "preemption",
            admitted and bool(victims) and victims == lower == recorded,
            f"a priority-{top} Job {where} was {'admitted' if admitted else 'NOT admitted'}; "
            f"{len(victims)} victim(s), {len(lower)} of lower priority, {len(recorded)} with "
            f"Evicted=Preempted and Preempted={', '.join(reasons) or 'none'}",
            initiator_side.cq_name,
            wl.observed([initiator, *victims] if initiator else victims),
        )

    def check_stop_policy(
        self, tenant: Tenant, probe: Probe, low: str | None, hold_seconds: float
    ) -> Check:
        running = self.submit(tenant, probe, 1, low, "running")
        self.wait_settled(tenant.namespace, running, want_admitted=True)
        self.set_stop_policy(tenant.cq_name, "Hold")
        self._wait_for(lambda: wl.reason(self._cq(tenant.cq_name), "Active") == "Stopped")
        held = self.submit(tenant, probe, 1, low, "held")
        end = time.monotonic() + hold_seconds
        admitted_while_held = False
        while time.monotonic() < end:
            admitted_while_held |= any(
                wl.is_true(w, "QuotaReserved") for w in self.workloads(tenant.namespace, held)
            )
            time.sleep(0.25)
        kept = self.workloads(tenant.namespace, running)
        kept_running = bool(kept) and all(
            wl.is_true(w, "Admitted") and not wl.is_true(w, "Evicted") for w in kept
        )
        self.restore_stop_policy(tenant.cq_name)
        resumed = self.wait_settled(tenant.namespace, held, want_admitted=True)
        readmitted = bool(resumed) and all(wl.is_true(w, "QuotaReserved") for w in resumed)
        return Check(
            "stop-policy-hold",
            "stop-policy",
            kept_running and not admitted_while_held and readmitted,
            "under stopPolicy Hold the admitted Workload "
            + ("kept running" if kept_running else "LOST its admission")
            + f", a new one was {'ADMITTED' if admitted_while_held else 'held'} for "
            f"{hold_seconds:.0f}s, and after resuming it was "
            + ("admitted" if readmitted else "NOT admitted"),
            tenant.cq_name,
            wl.observed([*kept, *resumed]),
        )

    def check_unlabelled(
        self, tenant: Tenant, probe: Probe, low: str | None, seconds: int
    ) -> Check:
        key, _value = self.profile.admission_label
        labels = {k: v for k, v in tenant.labels.items() if k != key}
        outsider = Tenant(tenant.name, tenant.cq, f"{tenant.namespace}-unlabelled", labels)
        self.make_namespace(outsider)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            workloads = pool.submit(
                self.cluster.watch, KUEUE, "Workload", namespace=outsider.namespace, seconds=seconds
            )
            pods = pool.submit(
                self.cluster.watch, "v1", "Pod", namespace=outsider.namespace, seconds=seconds
            )
            # A watch opens with the objects that exist, so none is missed if it opens late.
            self.submit(outsider, probe, 1, low, "outsider")
            events = [e["object"] for e in workloads.result() if e.get("type") != "ERROR"]
            pod_events = [e["object"] for e in pods.result() if e.get("type") != "ERROR"]
        seen = {w["metadata"]["name"]: w for w in events}  # the last state of each
        # Admitted at any moment of the watch fails the check, even if it was undone later.
        admitted = [
            w for w in events if wl.is_true(w, "QuotaReserved") or wl.is_true(w, "Admitted")
        ]
        created = sorted({p["metadata"]["name"] for p in pod_events})
        reasons = sorted(
            {
                f"{wl.reason(w, 'QuotaReserved')}: {wl.message(w, 'QuotaReserved')}"
                for w in seen.values()
            }
        )
        return Check(
            "unlabelled-namespace",
            "label",
            not admitted and not created,
            f"a Job in namespace {outsider.namespace} (without {key}) was "
            f"{'ADMITTED' if admitted else 'not admitted'} and created "
            f"{len(created)} Pod(s) in {seconds}s"
            + (f"; Kueue said {'; '.join(reasons)}" if reasons and not admitted else ""),
            tenant.cq_name,
            wl.observed(admitted[-1:] or list(seen.values())),
        )

    # -- cleanup -------------------------------------------------------------------------------

    def cleanup(self) -> Check:
        """Restore every stopPolicy changed and delete every namespace made; report leftovers."""
        problems: list[str] = []
        for cq in list(self.stop_policies):
            try:
                self.restore_stop_policy(cq)
            except ClusterAccessError as exc:
                problems.append(f"stopPolicy of {cq} not restored: {exc}")
        for ns in self.namespaces:
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
            "cleanup",
            "other",
            not problems,
            "; ".join(problems)
            or f"deleted {len(self.namespaces)} scratch namespace(s) with their {self.jobs} Job(s)"
            + (f", restored stopPolicy of {len(self.stop_policies)}" if self.stop_policies else ""),
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
        self._wait_for(lambda: not any(self.workloads(t.namespace) for t in tenants))

    # -- building blocks -----------------------------------------------------------------------

    def _tenants(self, profiles: list[TenantProfile]) -> list[Tenant]:
        out = []
        for tp in profiles:
            placement = tp.clusters.get(self.profile.name)
            if not placement or not placement.cluster_queues:
                continue
            cq = self._cq(placement.cluster_queues[0])
            tenant = Tenant(
                tp.name, cq, f"kueue-verify-{self.run_id}-{tp.name}", self._labels(tp, placement)
            )
            self.make_namespace(tenant)
            out.append(tenant)
        return out

    def _labels(self, tp: TenantProfile, placement: t.Any) -> dict[str, str]:
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
                "apiVersion": KUEUE,
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
    ) -> list[str]:
        """Create `count` probe Jobs asking for `amount` (default: one unit); return their names."""
        names = []
        request = str(amount or probe.unit)
        for i in range(count):
            name = f"{stem}-{i}"
            labels = {QUEUE_LABEL: "probe", RUN_LABEL: self.run_id}
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
                        "suspend": True,  # Kueue unsuspends it on admission
                        "template": {
                            "metadata": {"labels": {RUN_LABEL: self.run_id}},
                            "spec": {
                                "restartPolicy": "Never",
                                "nodeSelector": probe.node_selector,
                                "tolerations": probe.tolerations,
                                "containers": [
                                    {
                                        "name": "probe",
                                        "image": PROBE_IMAGE,
                                        "resources": {
                                            "requests": {probe.resource: request},
                                            "limits": {probe.resource: request},
                                        },
                                    }
                                ],
                            },
                        },
                    },
                }
            )
            self.jobs += 1
            names.append(name)
        return names

    def workloads(self, namespace: str, jobs: list[str] | None = None) -> list[Json]:
        """The Workloads in `namespace` (of the Jobs named `jobs` only, when given)."""
        found = self.cluster.list_in(KUEUE, "Workload", namespace)
        if jobs is None:
            return found
        return [w for w in found if wl.owner(w) in jobs]

    def wait_settled(
        self, namespace: str, jobs: list[str], *, want_admitted: bool = False
    ) -> list[Json]:
        """Wait until every Job has a Workload that Kueue has decided on (QuotaReserved set)."""
        seen: list[Json] = []

        def settled() -> bool:
            nonlocal seen
            seen = self.workloads(namespace, jobs)
            decided = wl.is_true if want_admitted else wl.decided
            return len(seen) == len(jobs) and all(decided(w, "QuotaReserved") for w in seen)

        self._wait_for(settled, quiet=True)
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
            cq = self._cq(tenant.cq_name)
            return int((cq.get("status") or {}).get("reservingWorkloads") or 0) == base + count

        self._wait_for(caught_up, quiet=True)
        return cq

    def _wait_for(self, ready: t.Callable[[], bool], *, quiet: bool = False) -> None:
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
            self.stop_policies[cq] = self._cq(cq)["spec"].get("stopPolicy")
        self.cluster.patch(
            KUEUE, "ClusterQueue", cq, {"spec": {"stopPolicy": policy}}, manager=MANAGER
        )

    def restore_stop_policy(self, cq: str) -> None:
        if cq in self.stop_policies:
            old = self.stop_policies.pop(cq)
            self.cluster.patch(
                KUEUE, "ClusterQueue", cq, {"spec": {"stopPolicy": old or "None"}}, manager=MANAGER
            )

    def _cq(self, name: str) -> Json:
        return self.cluster.get(KUEUE, "ClusterQueue", name)

    def size_probe(self, cq: Json) -> Probe:
        """The flavor and resource to probe: one with a borrowingLimit if any, else any quota."""
        candidates = [
            (flavor["name"], res)
            for group in cq["spec"].get("resourceGroups") or []
            for flavor in group["flavors"]
            for res in flavor["resources"]
            if quantity.parse(res["nominalQuota"]).value > 0
        ]
        if not candidates:
            raise ConfigError(
                f"cluster {self.profile.name}: ClusterQueue {cq['metadata']['name']} has no "
                "nominal quota to probe"
            )
        flavor, res = next(((f, r) for f, r in candidates if "borrowingLimit" in r), candidates[0])
        nominal = quantity.parse(res["nominalQuota"])
        whole = nominal.value == nominal.value.to_integral_value()
        parts = int(nominal.value) if whole and nominal.value <= MAX_UNITS else 4
        spec = self.cluster.get(KUEUE, "ResourceFlavor", flavor).get("spec") or {}
        return Probe(
            flavor,
            res["name"],
            Quantity(nominal.value / parts, nominal.format),
            dict(spec.get("nodeLabels") or {}),
            [
                {"key": taint["key"], "operator": "Exists", "effect": taint["effect"]}
                for taint in spec.get("nodeTaints") or []
            ],
        )

    def _priorities(self) -> tuple[str | None, str | None]:
        classes = sorted(
            self.cluster.list(KUEUE, "WorkloadPriorityClass"), key=lambda c: int(c["value"])
        )
        if len(classes) < 2 or classes[0]["value"] == classes[-1]["value"]:
            return (classes[0]["metadata"]["name"] if classes else None), None
        return classes[0]["metadata"]["name"], classes[-1]["metadata"]["name"]

    def _lendable(self, cq: Json, probe: Probe) -> Quantity | None:
        """What the rest of `cq`'s cohort can lend it now (None outside a cohort).

        The other members' lendingLimit (or whole nominal quota) less their usage, plus the
        Cohort object's own quota. Parent cohorts are not followed.
        """
        cohort = wl.cohort(cq)
        if not cohort:
            return None
        lendable = quantity.ZERO
        for other in self.cluster.list(KUEUE, "ClusterQueue"):
            if other["metadata"]["name"] == cq["metadata"]["name"] or wl.cohort(other) != cohort:
                continue
            quota = wl.quota(other, probe, missing_ok=True)
            if quota:
                lend = quota.get("lendingLimit") or quota["nominalQuota"]
                free = max(quota["nominalQuota"] - wl.usage(other, probe), quantity.ZERO)
                lendable = lendable + min(lend, free)
        with contextlib.suppress(ClusterAccessError):
            pool = wl.quota(self.cluster.get(KUEUE, "Cohort", cohort), probe, missing_ok=True)
            if pool:
                lendable = lendable + pool["nominalQuota"]
        return lendable
