"""What a simulation ran with, stamped on every plan report it answers (docs/replay.md, "What
was simulated").

The simulator says what its linked release worked out: every feature gate's value (the release's
defaults with the Configuration's featureGates over them), fair sharing as passed to the
scheduler, waitForPodsReady after the release's own Configuration defaults (v0.19 turns it on with
a 30-minute timeout and a requeue backoff; v0.17 leaves it off), the requeue batch period and
whether the scheduler's backoff between cycles ran on the clock. This module adds what of the
revision's Configuration the simulation does not model, each named, so a report never reads as
more than it simulated.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

from auditor.replay.comparison import Comparison
from auditor.replay.trace import Trace

# The Configuration's fields the simulation leaves out, with what each would change on a cluster.
# A field absent from the revision's Configuration is not listed: only what it sets.
NOT_MODELLED: dict[str, str] = {
    "admissionFairSharing": "admission order by past usage (Admission Fair Sharing) is not applied",
    "resources": "resource transformations and excluded prefixes are not applied to requests",
    "multiKueue": "MultiKueue dispatch to worker clusters is not simulated",
    "objectRetentionPolicies": "finished Workloads' retention does not change admission here",
    "waitForPodsReady.blockAdmission": (
        "blockAdmission waits for pods that are ready at once here, so it never holds admission"
    ),
}
# Always true of the simulation, whatever the Configuration says.
ALWAYS: tuple[str, ...] = (
    "pods are ready at admission and run exactly their traced time: no PodsReady timeout, "
    "eviction or requeue backoff fires",
    "no admission checks (ProvisioningRequest, MultiKueue) and no maximumExecutionTimeSeconds",
    "topology-aware scheduling and partial admission are not exercised (one PodSet per Workload, "
    "no topology request)",
)


@dataclass(frozen=True)
class Stamp:
    """One side's simulation: the release, its gates and scheduler settings, and what is not
    modelled."""

    release: str
    feature_gates: dict[str, bool]
    configured_gates: dict[str, bool]
    fair_sharing: dict[str, t.Any] | None
    wait_for_pods_ready: dict[str, t.Any] | None
    requeue_batch_seconds: float
    scheduler_backoff: bool
    not_modelled: list[str]
    # the inputs the answer assumed rather than read: run times, what the nodes hold (`assumed`)
    assumed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, t.Any]:
        return {
            "kueueRelease": self.release,
            "featureGates": dict(sorted(self.feature_gates.items())),
            "configuredGates": dict(sorted(self.configured_gates.items())),
            "scheduler": {
                "fairSharing": self.fair_sharing,
                "waitForPodsReady": self.wait_for_pods_ready,
                "requeueBatchSeconds": self.requeue_batch_seconds,
                "backoffBetweenCycles": self.scheduler_backoff,
            },
            "notModelled": self.not_modelled,
            "assumed": self.assumed,
        }

    def lines(self) -> list[str]:
        """The stamp for people: one line of settings, then what is not modelled."""
        gates = ", ".join(f"{k}={'on' if v else 'off'}" for k, v in self.configured_gates.items())
        pods = self.wait_for_pods_ready
        ready = (
            f"waitForPodsReady on (timeout {pods.get('timeout', '?')}, requeue backoff "
            f"{_backoff(pods)})"
            if pods
            else "waitForPodsReady off"
        )
        fair = "fair sharing on" if self.fair_sharing is not None else "fair sharing off"
        return [
            f"simulated Kueue {self.release}: feature gates the release's defaults"
            + (f" with {gates}" if gates else "")
            + f"; {fair}; {ready}; requeue batch {self.requeue_batch_seconds:g} s; scheduler "
            f"backoff {'on' if self.scheduler_backoff else 'off'} the clock",
            *(f"assumed: {a}" for a in self.assumed),
            *(f"not modelled: {n}" for n in self.not_modelled),
        ]


def _backoff(pods: t.Mapping[str, t.Any]) -> str:
    strategy = pods.get("requeuingStrategy") or {}
    base, most = strategy.get("backoffBaseSeconds", "?"), strategy.get("backoffMaxSeconds", "?")
    return f"{base} s doubling to {most} s"


# Where no capacity is weighed (a replay, a Job's forecast): the simulation admits on quota alone.
ON_QUOTA = (
    "what the nodes hold: not weighed; Kueue admits on quota alone, as if the nodes held every "
    "quota (validate's capacity-exceeded checks quotas against the profile's capacity)"
)


def assumed(
    traces: t.Sequence[Trace] = (),
    *,
    run_for: float | None = None,
    job: bool = False,
    capacity: str = ON_QUOTA,
) -> list[str]:
    """The inputs a simulated answer assumed, in words: where its run times come from (each
    trace's, and `run_for` for the Workloads already on a live cluster), and what the nodes hold
    (`capacity`: where it was read, else ON_QUOTA)."""
    out = []
    for trace in traces:
        source = trace.recorded.get("source") or "a"
        running = sum(w.still_running for w in trace.workloads)
        median = trace.recorded.get("medianRunSeconds")
        how = {
            "synthetic": "drawn log-normal around "
            + (f"a median of {median:g} s" if median else "a median")
            + f" (trace generate, seed {trace.recorded.get('seed')})",
            "live": "Admitted to Finished as recorded",
            "harness": "the harness's Workload classes'",
        }.get(source, "as the trace gives them")
        out.append(
            f"run times: the {source} trace's, {how}"
            + (f"; {running} still running when recorded: their run time so far" if running else "")
        )
    if run_for is not None:
        out.append(
            "run times: each Workload already on the cluster"
            + (", and the Job," if job else "")
            + f" runs {run_for:g} s from its admission (--run-for; not read from the cluster)"
        )
    return [*dict.fromkeys(out), capacity]


def stamp(
    simulated: t.Mapping[str, t.Any] | None,
    release: str,
    configuration: t.Mapping[str, t.Any],
    *,
    inputs: t.Sequence[str] = (),
) -> Stamp:
    """The simulator's `simulated` output and the revision's Configuration as one stamp."""
    said = simulated or {}
    scheduler_gates = said.get("featureGates") or {}
    configured = {str(k): bool(v) for k, v in (configuration.get("featureGates") or {}).items()}
    missing: list[str] = []
    for key, why in NOT_MODELLED.items():
        head, _, sub = key.partition(".")
        value = configuration.get(head)
        if sub:
            value = value.get(sub) if isinstance(value, dict) else None
        if value not in (None, False, {}, []):
            missing.append(f"{key}: {why}")
    return Stamp(
        release=release,
        feature_gates={str(k): bool(v) for k, v in scheduler_gates.items()},
        configured_gates=dict(sorted(configured.items())),
        fair_sharing=said.get("fairSharing"),
        wait_for_pods_ready=said.get("waitForPodsReady"),
        requeue_batch_seconds=float(said.get("requeueBatchSeconds") or 0.0),
        scheduler_backoff=bool(said.get("schedulerBackoff")),
        not_modelled=[*missing, *ALWAYS],
        assumed=list(inputs),
    )


@dataclass
class SimulatedComparison(Comparison):
    """A comparison by simulation, with each side's stamp in the report's `replay.simulated`."""

    stamps: dict[str, Stamp] = field(default_factory=dict)
    # `plan replay --live`: the live start both sides began from (LiveStart.summary)
    live: dict[str, t.Any] | None = None

    def replay_json(self) -> dict[str, t.Any]:
        return (
            super().replay_json()
            | {"simulated": {side: s.to_json() for side, s in self.stamps.items()}}
            | ({"liveStart": self.live} if self.live else {})
        )

    def live_line(self) -> list[str]:
        """The live start for people: when the cluster was read, and what it held."""
        if not self.live:
            return []
        s = self.live
        out = [
            f"started from {self.cluster}'s queues read at {s['readAt']}: {s['admitted']} "
            f"Workload(s) holding quota, each running {s['runForSeconds']:g} s from its admission "
            f"(--run-for), {s['pending']} pending in queue order, then {s['arriving']} arriving "
            "from the trace; waits count from the start (those holding quota have none)"
        ]
        for side, did in (s.get("atStart") or {}).items():
            out.append(
                f"{side} at the start: admits {', '.join(did['admitted']) or 'nothing'}; "
                f"preempts {', '.join(did['preempted']) or 'nothing'}"
            )
        return out

    def stamp_lines(self) -> list[str]:
        """The stamps for people: each side's settings (once when the same), then what is not
        modelled (a side named where only it has the line)."""
        sides = [(label, s, s.lines()) for label, s in self.stamps.items()]
        out: list[str] = self.live_line()
        firsts = {lines[0] for _, _, lines in sides}
        for label, _, lines in sides:
            line = lines[0] if len(firsts) == 1 else f"{label}: {lines[0]}"
            if line not in out:
                out.append(line)
        for _, s, _ in sides:
            for a in s.assumed:
                line = f"assumed: {a}"
                if line not in out:
                    out.append(line)
        every = [set(s.not_modelled) for _, s, _ in sides]
        for label, s, _ in sides:
            for n in s.not_modelled:
                line = (
                    f"not modelled: {n}"
                    if all(n in e for e in every)
                    else (f"{label}: not modelled: {n}")
                )
                if line not in out:
                    out.append(line)
        return out
