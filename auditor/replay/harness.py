"""Kueue's performance harness (auditor/sandbox/harness.py) as a trace for `plan replay`: each
Workload class named by its priority class (the estate's WorkloadPriorityClass of that name)."""

from __future__ import annotations

from auditor.replay.trace import Trace, TracedWorkload
from auditor.sandbox.harness import RESOURCE, Harness


def trace(h: Harness, cluster: str) -> Trace:
    """The harness's submissions as a trace for `cluster` (the class as the priority class)."""
    workloads = [
        TracedWorkload(
            namespace=s.queue,
            local_queue=s.queue,
            priority_class=s.klass.name,
            requests={RESOURCE: s.klass.request},
            pod_count=1,
            submitted_at=s.at_ms / 1000,
            run_seconds=s.klass.runtime_ms / 1000,
        )
        for s in h.submissions
    ]
    seconds = max((s.at_ms for s in h.submissions), default=0) / 1000
    recorded = {"source": "harness", "seconds": seconds, "harness": h.name, "kueue": h.release}
    return Trace(cluster, recorded, workloads)
