"""`verify`: does a live cluster's Kueue admit work the way the repository means it to?

Small probe Jobs, sized from the live ClusterQueues' quotas, go through scratch namespaces made
for the run (one per tenant, plus one without the admission label). Each check reports what Kueue
did with the Workload conditions it saw:

- quota: Jobs within nominal quota are admitted without borrowing; Jobs that need borrowing are
  admitted up to the borrowingLimit (or what the rest of the cohort tree, parent cohorts
  included, can lend) and no further, the next one stays pending with QuotaReserved=False;
- preemption: a higher-priority Job in the cohort preempts, every victim has a lower priority
  than the initiator, and the victims carry the Evicted/Preempted reasons;
- unlabelled namespace: a Job from a namespace without the admission label is never admitted and
  never creates a Pod, watched for a bounded time;
- stop policy: `stopPolicy: Hold` stops new admissions while admitted Workloads keep running, and
  resuming admits again.

Everything the run creates is deleted at the end, and a changed stopPolicy is restored, also when a
check fails or the run is interrupted (SIGINT or SIGTERM). No scheduler or kubelet is needed: Kueue
admits on quota, and the probe Pods may stay Pending.
"""

from __future__ import annotations

import secrets
import signal
import threading
import time
import typing as t
from dataclasses import dataclass

from auditor.errors import ClusterAccessError, ConfigError
from auditor.k8s.objects import Json
from auditor.kueue import admission
from auditor.model import ClusterResult, Finding, Report
from auditor.repo.profiles import ClusterProfile, TenantProfile
from auditor.verify import crossing, scenarios
from auditor.verify.model import Check
from auditor.verify.scratch import Scratch

if t.TYPE_CHECKING:
    from auditor.live.kube import KubeCluster


class Interrupted(Exception):
    """SIGTERM arrived; raised so cleanup runs as for Ctrl-C."""


@dataclass
class Verification:
    report: Report
    checks: list[Check]
    seconds: float

    def __post_init__(self) -> None:
        self.report.section = self

    def to_json(self) -> Json:
        """verify's keys of the JSON report: every check, and how long the run took."""
        return {"checks": [c.to_json() for c in self.checks], "seconds": self.seconds}


def ensure_allowed(profile: ClusterProfile) -> None:
    """Probe Jobs run only where the cluster's profile says `verify: {allowed: true}`."""
    if not profile.verify_allowed:
        raise ConfigError(
            f"{profile.file}: cluster {profile.name} does not allow verify "
            "(spec.verify.allowed is not true); probe Jobs never run there"
        )


def run(
    cluster: KubeCluster,
    profile: ClusterProfile,
    tenants: list[TenantProfile],
    *,
    timeout: float = 60.0,
    watch_seconds: int = 10,
    hold_seconds: float = 5.0,
    boundaries: admission.Boundaries | None = None,
) -> Verification:
    """Run every check against `cluster`; refuse (ConfigError) unless its profile allows it.

    With the repository's `boundaries`, probes also try to cross them as a tenant (crossing).
    """
    ensure_allowed(profile)
    started = time.monotonic()
    run_id = secrets.token_hex(3)
    scratch = Scratch(cluster, profile, run_id, timeout)
    checks: list[Check] = []
    report = Report("verify", clusters=[ClusterResult(profile.name)])
    # Signals go to the main thread only; the command line raises SIGTERM as a
    # KeyboardInterrupt already (auditor/cli/signals.py): only a caller without that needs this.
    main = threading.current_thread() is threading.main_thread()
    main = main and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    previous = signal.signal(signal.SIGTERM, _raise_interrupted) if main else None
    try:
        try:
            checks += scenarios.run_all(scratch, tenants, watch_seconds, hold_seconds)
            if boundaries is not None:
                checks += crossing.run_all(scratch, boundaries, tenants, watch_seconds)
        finally:
            checks.append(scratch.cleanup())
    except (ClusterAccessError, Interrupted, KeyboardInterrupt) as exc:
        report.clusters[0].status = "incomplete"
        report.clusters[0].errors.append(str(exc) or type(exc).__name__)
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
    report.findings = [_finding(profile, c) for c in checks if c.passed is False]
    return Verification(report, checks, round(time.monotonic() - started, 1))


def _raise_interrupted(signum: int, frame: object) -> None:
    raise Interrupted(f"interrupted by signal {signum}")


def _finding(profile: ClusterProfile, check: Check) -> Finding:
    return Finding(
        check.rule,
        check.summary,
        cluster=profile.name,
        api_version=profile.kueue_api if check.cluster_queue else None,
        kind="ClusterQueue" if check.cluster_queue else None,
        name=check.cluster_queue,
        extra={"workloads": check.workloads},
    )
