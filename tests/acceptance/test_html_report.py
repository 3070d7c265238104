"""`-o html` opened in real headless Chromium (Debian's), as a reviewer opens the CI artifact:
the page loads with no console error and asks the network for nothing, every chart is drawn with
the series it names, the data each chart was drawn from equals the JSON report's, and a
screenshot of each page is kept in test-artifacts/html-reports/ (CI uploads that folder).

The plan is the CLI's on a git repository of its own; the replay's, the sweep's, the job's, the
fleet's and status's pages are drawn from reports made of their commands' own sections (the
replay's and the job's from the simulator's output format, read by auditor/replay/sim.py and
auditor/replay/livestart.py). The sweep's and the job's pages lead with the answer, on the first
screen above every chart. tests/integration/ opens the pages the real commands write
(test_replay_sim.py, test_status_live.py, test_plan_job.py)."""

from __future__ import annotations

import json
import re
import typing as t
from pathlib import Path

from click.testing import CliRunner

from auditor import rules
from auditor.cli.main import cli
from auditor.drift.fleet import Fleet, Member
from auditor.model import ClusterResult, Finding, Report
from auditor.replay import livestart
from auditor.replay.sweep import Axis, Point, Sweep, Target, mark_frontier, meets
from auditor.replay.trace import TracedWorkload
from auditor.status import LiveStatus, Snapshot
from tests.estate import copy_estate
from tests.html_pages import Doc, answer, both, opened
from tests.unit.conftest import Revisions, cluster_profile
from tests.unit.replay.comparisons import comparison


def test_the_replay_page_draws_the_day_from_the_reports_timeline() -> None:
    c = comparison()
    doc, page = both(Report("plan", c.findings(), [ClusterResult("gpu-prod")], section=c))
    figures = opened("plan-replay", page)
    assert list(figures) == ["gpus-in-use", "waits", "preemptions", "cohort-tree"]
    day = doc["replay"]["timeline"]
    # GPUs in use: each tenant's LocalQueues added up, base and head on the JSON's time axis
    gpus = figures["gpus-in-use"]
    assert gpus["series"] == ["team-a base", "team-a head", "team-b base", "team-b head"]
    assert gpus["data"]["times"] == day["times"] and len(gpus["rows"]) == len(day["times"])
    for name, values in gpus["data"]["series"].items():
        tenant, side = name.split()
        queues = [s["gpus"] for s in day["series"] if (s["tenant"], s["side"]) == (tenant, side)]
        assert values == [sum(v) for v in zip(*queues, strict=True)]
    # waits: the JSON's distributions, bins as its waitBins
    waits = figures["waits"]
    assert waits["data"]["bins"] == day["waitBins"]
    assert waits["data"]["series"] == {
        f"{w['tenant']} {w['side']}": w["counts"] for w in day["waits"]
    }
    # preemptions: preemptor → victim per side, as the JSON has them
    assert figures["preemptions"]["data"]["preemptions"] == day["preemptions"]
    assert figures["preemptions"]["series"] == ["team-b → team-a (head)"]
    assert _whole(waits["yticks"]) and _whole(figures["preemptions"]["yticks"])
    assert _whole(figures["cohort-tree"]["yticks"])
    # the cohort tree: nominal from each side's quota cells, the most used at once from the
    # timeline's series of the queue, the most borrowed from the side's clusterQueues
    tree = figures["cohort-tree"]
    assert tree["data"]["queues"] == [["ai", "team-a"], ["ai", "team-b"]]
    got = tree["data"]["series"]
    for side in ("base", "head"):
        cells = doc["replay"]["quota"][side]
        assert got[f"nominal {side}"] == [
            sum(float(c["nominal"]) for c in cells if c["clusterQueue"] == q)
            for q in ("team-a", "team-b")
        ]
        peak = {g["name"]: g["borrowedGpus"]["peak"] for g in doc["replay"][side]["clusterQueues"]}
        assert got[f"borrowed peak {side}"] == [peak[q] for q in ("team-a", "team-b")]
        for i, q in enumerate(("team-a", "team-b")):
            mine = [s["gpus"] for s in day["series"] if (s["side"], s["clusterQueue"]) == (side, q)]
            assert got[f"used peak {side}"][i] == max(sum(at) for at in zip(*mine, strict=True))
    assert (got["nominal base"], got["nominal head"]) == ([6.0, 4.0], [4.0, 4.0])
    assert tree["rows"][0][:4] == ["ai", "team-a", "a100 4, h100 2", "a100 2, h100 2"]


def test_a_livelock_is_marked_on_the_preemption_timeline() -> None:
    c = comparison()
    c.head.livelocks = [600.0]
    doc, page = both(Report("plan", c.findings(), [ClusterResult("gpu-prod")], section=c))
    figures = opened("plan-replay-livelock", page)
    shown = figures["preemptions"]
    assert shown["series"] == ["team-b → team-a (head)", "livelock (head)"]
    assert ["head", "0:10:00", "", "", "", "livelock"] in shown["rows"]
    assert doc["replay"]["head"]["livelockAt"] == [600.0]


def test_the_plan_page_shows_each_quota_cell_base_to_head(tmp_path: Path) -> None:
    copy_estate(tmp_path, "clusters", "tenants")
    revs = Revisions(tmp_path)
    try:
        base = revs.commit("base")
        revs.edit(
            "clusters/gpu-prod/clusterqueues.yaml", 'nominalQuota: "256"', 'nominalQuota: "192"'
        )
        head = revs.commit("team-a's CPU cut")
    finally:
        revs.repo.close()
    argv = ["--repo", str(tmp_path), "plan", "diff", "--base", base, "--head", head]
    as_json = CliRunner().invoke(cli, [*argv, "-o", "json"])
    as_html = CliRunner().invoke(cli, [*argv, "-o", "html"])
    assert as_json.exit_code == as_html.exit_code, as_html.stderr
    doc = json.loads(as_json.stdout)
    figures = opened("plan-offline", as_html.stdout)
    quota = figures["quota"]
    cells = [c for c in doc["changes"] if c["resource"] and c["delta"]]
    assert quota["series"] == ["base", "head"]
    assert quota["data"]["series"] == {
        "base": [float(c["before"]) for c in cells],
        "head": [float(c["after"]) for c in cells],
    }
    assert [r[1:] for r in quota["rows"]] == [[c["before"], c["after"], c["delta"]] for c in cells]
    assert ["256", "192", "-64"] in [r[1:] for r in quota["rows"]]


def test_the_fleet_page_draws_drift_by_cluster_and_category_and_the_releases() -> None:
    findings = [
        Finding(rules.get("drift-quota"), "nominalQuota differs", cluster="gpu-prod"),
        Finding(rules.get("drift-quota"), "borrowingLimit differs", cluster="gpu-prod"),
        Finding(rules.get("drift-rbac"), "a RoleBinding grants more", cluster="gpu-staging"),
    ]
    fleet = Fleet(
        "v0.19.2",
        [
            Member("gpu-prod", "v0.17.0", 2, {"ClusterQueue": ["v1beta1", "v1beta2"]}),
            Member("gpu-staging", "v0.19.2", 0, {"ClusterQueue": ["v1beta2"]}),
        ],
    )
    clusters = [ClusterResult("gpu-prod"), ClusterResult("gpu-staging")]
    doc, page = both(Report("drift", findings, clusters, section=fleet))
    figures = opened("drift-fleet", page)
    drift = figures["drift"]
    assert drift["data"]["clusters"] == ["gpu-prod", "gpu-staging"]
    assert drift["data"]["series"] == {"quota": [2, 0], "rbac": [0, 1]}
    assert _whole(drift["yticks"]), drift["yticks"]  # findings, not 0.2 of one
    assert sorted(f["category"] for f in doc["findings"]) == ["quota", "quota", "rbac"]
    releases = figures["fleet"]
    assert _whole(releases["yticks"]), releases["yticks"]
    assert releases["data"]["series"] == {
        "minor releases behind": [m["minorsBehind"] for m in doc["fleet"]["clusters"]]
    }
    assert [r[:3] for r in releases["rows"]] == [
        ["gpu-prod", "v0.17.0", "2"],
        ["gpu-staging", "v0.19.2", "0"],
    ]


def _gpu_queue(name: str, nominal: dict[str, str], used: dict[str, str], borrowed: str) -> Doc:
    """A ClusterQueue of cpu, memory and GPUs on one flavor, a100, in cohort ai-shared; it
    borrows only GPUs."""
    return {
        "metadata": {"name": name},
        "spec": {
            "cohortName": "ai-shared",
            "resourceGroups": [
                {
                    "coveredResources": list(nominal),
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {"name": r, "nominalQuota": q} for r, q in nominal.items()
                            ],
                        }
                    ],
                }
            ],
        },
        "status": {
            "flavorsReservation": [
                {
                    "name": "a100",
                    "resources": [
                        {
                            "name": r,
                            "total": u,
                            "borrowed": borrowed if r == "nvidia.com/gpu" else "0",
                        }
                        for r, u in used.items()
                    ],
                }
            ]
        },
    }


def _whole(ticks: list[str]) -> bool:
    return bool(ticks) and all(re.fullmatch(r"\d+", tick) for tick in ticks)


def test_the_status_page_draws_each_resource_on_its_own_axis_gpus_first() -> None:
    """A GPU cluster: 2 TiB of memory beside 16 GPUs. Each resource is its own chart, GPUs
    first, counted on whole ticks, and a queue's GPU bars stand tall enough to read."""
    live = LiveStatus(
        [
            _gpu_queue(
                "team-a-cq",
                {"cpu": "256", "memory": "2Ti", "nvidia.com/gpu": "16"},
                {"cpu": "200", "memory": "1536Gi", "nvidia.com/gpu": "20"},
                "4",
            ),
            _gpu_queue(
                "team-b-cq",
                {"cpu": "256", "memory": "2Ti", "nvidia.com/gpu": "16"},
                {"cpu": "48", "memory": "384Gi", "nvidia.com/gpu": "6"},
                "0",
            ),
        ],
        [],
        [],
    )
    snapshot = Snapshot(live, cluster_profile())
    doc, page = both(Report("status", [], [ClusterResult("gpu-staging")], section=snapshot))
    figures = opened("status", page)
    assert list(figures) == ["quota-nvidia-com-gpu", "quota-cpu", "quota-memory"]
    gpus = figures["quota-nvidia-com-gpu"]
    assert gpus["series"] == ["nominal", "used", "borrowed"]
    assert gpus["data"]["unit"] == "GPUs" and _whole(gpus["yticks"]), gpus["yticks"]
    assert gpus["yticks"][-1] == "20"  # the axis ends where team-a's 20 GPUs do
    cells = [
        c for q in doc["clusterQueues"] for c in q["quota"] if c["resource"] == "nvidia.com/gpu"
    ]
    assert gpus["data"]["series"] == {
        "nominal": [float(c["nominalQuota"]) for c in cells],
        "used": [float(c["used"]) for c in cells],
        "borrowed": [float(c["borrowed"]) for c in cells],
    }
    # the used bar of 20 GPUs is most of the plot's height, not a hairline under 4e12
    assert gpus["tallest"]["serie-1"] > 200, gpus["tallest"]
    assert gpus["rows"][0] == ["ai-shared", "team-a-cq", "a100", "16", "20", "4"]
    memory = figures["quota-memory"]
    assert memory["data"]["unit"] == "memory (GiB)"
    assert memory["data"]["series"]["nominal"] == [2048.0, 2048.0]
    assert memory["data"]["series"]["used"] == [1536.0, 384.0]
    assert figures["quota-cpu"]["data"]["series"]["used"] == [200.0, 48.0]


LABEL = "team-a-cq a100/nvidia.com/gpu nominalQuota"  # the sweep's one axis


def _sweep(p95_target: float) -> Sweep:
    """team-a's a100 GPUs, 2 now, tried at 1 to 4: the wait falls as the quota grows."""
    axis = Axis("ClusterQueue", "team-a-cq", "nominalQuota", ("1", "2", "3", "4"), "a100",
                "nvidia.com/gpu")  # fmt: skip
    target = Target(tenant="team-a", p95_wait=p95_target)
    s = Sweep("lab", "HEAD", "v0.19.2", [axis], ["2"], target, 6)
    waits = {"1": 3000.0, "2": 1800.0, "3": 600.0, "4": 600.0}
    s.points = [Point((v,), abs(int(v) - 2), waits[v], 0, 0, 0) for v in axis.values]
    for p in s.points:
        p.meets = meets(p, target)
    mark_frontier(s.points)
    return s


def test_the_sweep_page_leads_with_the_target_and_the_recommended_change() -> None:
    s = _sweep(660.0)
    doc, page = both(Report("plan", s.findings(), [ClusterResult("lab")], section=s))
    figures = opened("plan-sweep", page)
    shown = answer("plan-sweep")
    assert shown["first"]  # on the first screen, above the frontier
    assert (
        shown["target"] == "Target: team-a's p95 wait ≤ 11.0m, no livelock, nothing never admitted"
    )
    label = LABEL
    assert shown["recommended"].startswith(f"Recommended change: {label} 2 → 3 (size 1)")
    assert shown["changed"] == [[label, "2", "3"]]
    assert doc["sweep"]["best"]["values"] == {label: "3"}
    # then the frontier: the recommended point drawn on it, the frontier's rows first
    frontier = figures["sweep"]
    assert frontier["series"] == ["meets", "misses", "frontier", "recommended"]
    assert [r[0] for r in frontier["rows"]] == ["2", "3", "1", "4"]
    assert [r[-2] for r in frontier["rows"]] == ["", "◀", "", ""]  # the column "recommended"


def test_the_sweep_page_says_first_that_no_point_meets_the_target() -> None:
    s = _sweep(60.0)
    _, page = both(Report("plan", s.findings(), [ClusterResult("lab")], section=s))
    opened("plan-sweep-unmet", page)
    shown = answer("plan-sweep-unmet")
    assert shown["first"] and shown["target"].startswith("Target: team-a's p95 wait ≤ 60s")
    assert shown["recommended"].startswith("No point meets the target")


class _Planned(Sweep):
    """A sweep that also says what its answer rests on, in the keys auditor/replay/sweep.py adds
    for issue 45 item 3 (how the recommendation is chosen, the Workloads no point admits, where
    the nodes' capacity was read, and per point whether the nodes hold its quotas)."""

    def to_json(self) -> dict[str, t.Any]:
        doc = super().to_json()
        doc["sweep"] |= {
            "bestChosenAs": "the smallest change that meets the target, then the shortest wait",
            "neverAdmittedAnywhere": [
                {
                    "namespace": "team-z",
                    "localQueue": "batch",
                    "workloads": 3,
                    "reason": "no ClusterQueue selects the namespace",
                }
            ],
            "capacity": "the capacity clusters/lab/cluster.yaml declares",
        }
        for p in doc["sweep"]["points"]:
            over = ["a100/nvidia.com/gpu 4 > 3"] if p["values"][LABEL] == "4" else []
            p |= {"feasible": not over, "overCapacity": over}
        return doc


def test_the_sweep_page_says_what_the_answer_rests_on_where_the_sweep_says_it() -> None:
    s = _sweep(660.0)
    planned = _Planned(s.cluster, s.revision, s.release, s.axes, s.now, s.target, 6, s.points)
    _, page = both(Report("plan", [], [ClusterResult("lab")], section=planned))
    figures = opened("plan-sweep-rests-on", page)
    shown = answer("plan-sweep-rests-on")
    assert shown["first"]
    assert shown["chosen"] == (
        "Chosen as the smallest change that meets the target, then the shortest wait."
    )
    assert [line for line in shown["apart"].splitlines() if line][1:] == [
        "team-z/batch: 3 Workload(s), no ClusterQueue selects the namespace"
    ]
    assert (
        shown["capacity"]
        == "Quotas checked against the capacity clusters/lab/cluster.yaml declares."
    )
    frontier = figures["sweep"]
    assert "infeasible" in frontier["series"]
    [four] = [r for r in frontier["rows"] if r[0] == "4"]
    assert four[-1] == "a100/nvidia.com/gpu 4 > 3"


BUSY = ["team-b/train-0", "team-b/train-1", "team-b/train-2", livestart.JOB_NAME]


def _forecast(events: dict[int, list[Doc]], pending: str | None = None) -> livestart.Forecast:
    """The simulator's output for three of team-b's Workloads running now and the Job, read as
    `plan job` reads it."""
    start = livestart.LiveStart(BUSY, [{}, {}, {}, {}])
    out = {"workloads": [{"index": i, "events": events.get(i, [])} for i in range(len(BUSY))]}
    out["workloads"][3] |= {"pendingReason": pending} if pending else {}
    job = TracedWorkload("team-a", "batch", "high", {"nvidia.com/gpu": "4"}, 1, 0.0, 3600.0)
    return livestart.forecast(out, start, job, cluster="lab", release="v0.19.2")


def test_the_job_page_says_when_where_and_whom_it_preempts_then_the_timeline() -> None:
    running = {"at": 0.0, "kind": "admitted"}
    f = _forecast(
        {
            0: [running, {"at": 120.0, "kind": "finished"}],
            1: [running, {"at": 240.0, "kind": "preempted", "by": 3}],
            2: [running],
            3: [
                {
                    "at": 240.0,
                    "kind": "admitted",
                    "clusterQueue": "team-a-cq",
                    "flavors": "nvidia.com/gpu=a100",
                }
            ],
        }
    )
    doc, page = both(Report("plan", f.findings(), [ClusterResult("lab")], section=f))
    figures = opened("plan-job", page)
    shown = answer("plan-job")
    assert shown["first"]
    assert shown["when"] == "admitted after 4.0m"
    assert shown["where"] == "ClusterQueue team-a-cq, flavors nvidia.com/gpu=a100"
    assert shown["preempts"] == "team-b/train-1" == doc["job"]["preempts"][0]
    timeline = figures["job-timeline"]
    assert timeline["series"] == ["finished", "preempted", "admitted"]
    assert sorted(timeline["yticks"]) == sorted([livestart.JOB_NAME, *BUSY[:2]])
    assert timeline["rows"] == [
        ["2.0m", "team-b/train-0", "finished", "", ""],
        ["4.0m", "team-b/train-1", "preempted", livestart.JOB_NAME, ""],
        ["4.0m", livestart.JOB_NAME, "admitted", "", "nvidia.com/gpu=a100"],
    ]
    assert timeline["data"]["changes"] == doc["job"]["changes"]


def test_the_job_page_says_first_why_it_is_never_admitted() -> None:
    f = _forecast({0: [{"at": 0.0, "kind": "admitted"}]}, pending="insufficient quota for a100")
    doc, page = both(Report("plan", f.findings(), [ClusterResult("lab")], section=f))
    opened("plan-job-never", page)
    shown = answer("plan-job-never")
    assert shown["first"] and doc["status"] == "findings"
    assert shown["when"] == "never admitted: insufficient quota for a100"
    assert (shown["where"], shown["preempts"]) == ("-", "nothing")


def test_a_page_is_the_same_bytes_for_the_same_report_and_runs_no_script() -> None:
    c = comparison()
    pages = {both(Report("plan", c.findings(), [ClusterResult("gpu-prod")], section=c))[1]}
    pages.add(both(Report("plan", c.findings(), [ClusterResult("gpu-prod")], section=c))[1])
    [page] = pages
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts and set(scripts) == {'<script type="application/json" class="chart-data">'}
