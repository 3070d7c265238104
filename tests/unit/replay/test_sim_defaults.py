"""The simulator reads the revision's objects as the API server would store them: a field the
release's CRD schema defaults and the repository leaves out is there with its default (Kueue's
code reads the stored object; a ClusterQueue without queueingStrategy is BestEffortFIFO on a
cluster, and Kueue bulk-moves equivalent Workloads aside only in a BestEffortFIFO queue)."""

from __future__ import annotations

from pathlib import Path

from auditor.replay.sim import DRAIN_SECONDS, sim_input
from auditor.replay.trace import Trace
from auditor.repo.layout import Repository

CQS = "clusters/gpu-staging/clusterqueues.yaml"


def test_what_the_repository_leaves_out_reaches_kueue_with_the_crds_defaults(
    repo_copy: Path,
) -> None:
    cqs = repo_copy / CQS
    text = cqs.read_text()
    assert text.count("  queueingStrategy: BestEffortFIFO\n") == 2
    # team-a's queue says nothing of its strategy, team-b's asks for StrictFIFO.
    text = text.replace("  queueingStrategy: BestEffortFIFO\n", "", 1)
    text = text.replace("queueingStrategy: BestEffortFIFO", "queueingStrategy: StrictFIFO")
    cqs.write_text(text)

    day = Trace("gpu-staging", {"source": "synthetic", "seconds": 86400.0}, [])
    doc = sim_input(Repository.open(repo_copy), "gpu-staging", day)
    # ... and it stops a day after the trace's end if work still waits (a standing backlog).
    assert doc["horizonSeconds"] == 86400.0 + DRAIN_SECONDS

    queues = {o["metadata"]["name"]: o for o in doc["objects"] if o["kind"] == "ClusterQueue"}
    assert queues["team-a-cq"]["spec"]["queueingStrategy"] == "BestEffortFIFO"
    assert queues["team-b-cq"]["spec"]["queueingStrategy"] == "StrictFIFO"
    # What the repository sets is kept as written.
    assert queues["team-a-cq"]["spec"]["preemption"]["reclaimWithinCohort"] == "LowerPriority"
    local = [o for o in doc["objects"] if o["kind"] == "LocalQueue"]
    assert local and all(o["spec"]["stopPolicy"] == "None" for o in local)
