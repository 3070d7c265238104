"""`status` against the sandbox with a real Kueue: Workloads pending, admitted and evicted by
preemption, counted per queue, and the events Kueue wrote about them."""

from __future__ import annotations

import json
import typing as t

import pytest

from auditor.k8s.conditions import is_true
from auditor.k8s.quantity import parse
from auditor.kueue.quota import used
from auditor.sandbox import Sandbox
from tests.conftest import own_context, run_line
from tests.estate import ESTATE
from tests.html_pages import opened
from tests.integration.kueue_jobs import (
    KUEUE,
    remove_jobs,
    submit,
    workloads_by_job,
)
from tests.integration.waiting import eventually

NS = "team-b"  # a tenant namespace: its LocalQueue batch and the priorities it may use
CQ = "team-b-cq"  # 3 a100 GPUs of its own, may borrow 2
JOBS = ("first", "second", "urgent")
GPU = ("a100", "nvidia.com/gpu")
Json = dict[str, t.Any]


def _status(box: Sandbox, *extra: str) -> str:
    # run_line holds `-o json` to the report contract: the snapshot is a report's section
    argv = ["kueue-gitops", "--repo", str(ESTATE), "status", "--cluster", "gpu-staging"]
    result = run_line([*argv, *own_context(box.kubeconfig), *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def preempted(kueue_sandbox: Sandbox) -> t.Iterator[Sandbox]:
    """Team-b's queue, filled by a low-priority Job of 3 GPUs that a standard one preempted
    (3 more would be more than it may borrow), and a second low-priority Job waiting."""
    cluster = kueue_sandbox.connect()
    try:
        submit(cluster, NS, "first", "batch-low", gpus=3)
        eventually(
            lambda: is_true(workloads_by_job(cluster, NS).get("first") or {}, "Admitted"),
            what="the first Job admitted",
        )
        submit(cluster, NS, "second", "batch-low", gpus=3)
        submit(cluster, NS, "urgent", "batch-standard", gpus=3)

        def settled() -> bool:
            found = workloads_by_job(cluster, NS)
            return (
                is_true(found.get("urgent") or {}, "Admitted")
                and is_true(found["first"], "Evicted")
                and "QuotaReserved" in str(found.get("second"))
            )

        eventually(settled, what="urgent admitted, first evicted, second waiting")
        # Kueue writes the queue's usage into its status seconds after the Workloads say so
        eventually(
            lambda: used(cluster.get(KUEUE, "ClusterQueue", CQ), GPU).value == 3,
            what=f"{CQ}'s status holding urgent's 3 GPUs",
        )
        yield kueue_sandbox
    finally:
        remove_jobs(cluster, NS, JOBS)
        # verify, later in the session, sizes its probes from the queue's usage
        eventually(
            lambda: used(cluster.get(KUEUE, "ClusterQueue", CQ), GPU).value == 0,
            what=f"{CQ} holding no GPU",
        )


def test_workloads_are_counted_per_queue_by_state(preempted: Sandbox) -> None:
    doc = json.loads(_status(preempted, "-o", "json"))
    assert (doc["command"], doc["status"], doc["cluster"]) == ("status", "clean", "gpu-staging")
    expected = {"pending": 1, "admitted": 1, "evicted": 1}
    [cq] = [q for q in doc["clusterQueues"] if q["name"] == CQ]
    assert {s: n for s, n in cq["workloads"].items() if n} == expected
    [lq] = [q for q in doc["localQueues"] if q["namespace"] == NS]
    assert (lq["name"], lq["clusterQueue"]) == ("batch", CQ)
    assert {s: n for s, n in lq["workloads"].items() if n} == expected
    mine = {w["name"].split("-")[1]: w for w in doc["workloads"] if w["namespace"] == NS}
    assert {job: w["state"] for job, w in mine.items()} == {
        "urgent": "admitted",
        "first": "evicted",
        "second": "pending",
    }
    assert mine["first"]["reason"].startswith("Preempted")
    assert mine["urgent"]["priority"] == 1000 and mine["urgent"]["clusterQueue"] == CQ
    # the other queues are listed too, idle
    [idle] = [q for q in doc["clusterQueues"] if q["name"] == "team-a-cq"]
    assert set(idle["workloads"].values()) == {0}


def test_the_last_events_that_mention_kueue_are_listed_per_namespace(preempted: Sandbox) -> None:
    doc = json.loads(_status(preempted, "-o", "json", "--events", "50"))
    events = doc["events"][NS]
    reasons = {(e["object"].split("/")[0], e["reason"]) for e in events}
    # Kueue's scheduler on the Workloads, its Job controller on the Jobs
    assert {("Workload", "QuotaReserved"), ("Workload", "Preempted")} <= reasons, reasons
    assert ("Job", "Started") in reasons, reasons
    assert [e["time"] for e in events] == sorted(e["time"] for e in events)
    assert len(json.loads(_status(preempted, "-o", "json", "--events", "2"))["events"][NS]) == 2


def test_the_text_shows_counts_workloads_and_events(preempted: Sandbox) -> None:
    lines = _status(preempted).splitlines()
    [cq_line] = [line for line in lines if line.startswith(f"  {CQ} ")]
    assert "pending=1 admitted=1 evicted=1" in cq_line
    [lq_line] = [line for line in lines if line.startswith(f"  {NS}/batch ")]
    assert f"-> {CQ}" in lq_line and "pending=1 admitted=1 evicted=1" in lq_line
    evicted = [line for line in lines if f"{NS}/job-first-" in line]
    assert evicted and " evicted " in evicted[0] and "Preempted" in evicted[0]
    at = lines.index("Recent Kueue events (last 5 per namespace):")
    assert f"  {NS}:" in lines[at:]


def test_the_page_draws_each_queues_gpus_on_their_own_whole_axis_from_the_snapshot(
    preempted: Sandbox,
) -> None:
    def settled() -> tuple[dict[str, t.Any], str] | None:
        """The JSON and the page of one state: Kueue may still be moving usage between two
        runs, so the page counts only when the JSON before and after it agree on the queues."""
        before = json.loads(_status(preempted, "-o", "json"))
        page = _status(preempted, "-o", "html")
        after = json.loads(_status(preempted, "-o", "json"))
        return (before, page) if before["clusterQueues"] == after["clusterQueues"] else None

    doc, page = eventually(settled, what="the queues' usage the same before and after the page")
    figures = opened("status-live", page)
    # each resource on its own axis, GPUs first; the GPUs counted on whole ticks
    assert next(iter(figures)) == "quota-nvidia-com-gpu", list(figures)
    gpus = figures["quota-nvidia-com-gpu"]
    assert gpus["yticks"] and all(tick.isdigit() for tick in gpus["yticks"]), gpus["yticks"]
    cells = sorted(
        (
            (q.get("cohort") or "(no cohort)", q["name"], c)
            for q in doc["clusterQueues"]
            for c in q["quota"]
            if c["resource"] == "nvidia.com/gpu"
        ),
        key=lambda x: (x[0], x[1]),
    )
    assert gpus["data"]["series"]["used"] == [float(parse(c["used"]).value) for _, _, c in cells]
    assert gpus["data"]["series"]["nominal"] == [
        float(parse(c["nominalQuota"]).value) for _, _, c in cells
    ]
    [mine] = [r for r in gpus["rows"] if r[1:3] == [CQ, "a100"]]
    assert mine[4] == "3"  # urgent holds 3 GPUs; first was preempted, second waits
    used = gpus["series"].index("used")  # the legend's order (the data's keys are sorted)
    assert gpus["tallest"][f"serie-{used}"] > 20  # a GPU bar one can see
