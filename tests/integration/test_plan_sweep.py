"""`plan sweep`: a grid of alternatives simulated through Kueue's own scheduler (v0.19.2, pinned)
on a constructed case whose answer is known. team-a alone, 2 a100 GPUs; six 1-GPU Workloads at
once, 10 minutes each: with Q GPUs they run in ceil(6/Q) waves, so the p95 wait (the sixth's) is
(ceil(6/Q) - 1) waves of 600 s (plus the release's 1 s requeue batch per wave), and a p95 of at
most 11 minutes needs Q >= 3: the smallest change is 2 -> 3."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from auditor.cli.main import cli
from auditor.replay import trace
from auditor.replay.trace import Trace, TracedWorkload
from tests.integration import sweep_grid
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions


def sweep(root: Path, grid: str, fmt: str) -> Result:
    argv = ["--repo", str(root), "plan", "sweep", str(root / grid), "--trace",
            str(root / "day.json"), "--cluster", "lab", "-o", fmt]  # fmt: skip
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def test_the_sweep_finds_the_known_minimal_quota_and_repeats_byte_for_byte(
    sweep_case: Path,
) -> None:
    first = sweep(sweep_case, "grid.yaml", "json")
    assert first.exit_code == 0, first.output
    doc: dict[str, t.Any] = json.loads(first.stdout)["sweep"]
    assert len(doc["points"]) == 10
    assert doc["simulated"]["kueueRelease"] == "v0.19.2"  # what the sweep simulated, stamped
    best = doc["best"]
    assert best["values"] == {
        "team-a-cq a100/nvidia.com/gpu nominalQuota": "3",
        "team-a-cq preemption.withinClusterQueue": "LowerPriority",
    }
    waits = {
        p["values"]["team-a-cq a100/nvidia.com/gpu nominalQuota"]: p["p95WaitSeconds"]
        for p in doc["points"]
    }
    waves = {q: -(-6 // int(q)) for q in waits}
    assert {q: int(w // 600) for q, w in waits.items()} == {q: n - 1 for q, n in waves.items()}
    again = sweep(sweep_case, "grid.yaml", "json")
    assert again.stdout == first.stdout


def test_the_text_table_names_the_smallest_change(sweep_case: Path) -> None:
    out = sweep(sweep_case, "grid.yaml", "text").stdout
    assert (
        "smallest change that meets the target: team-a-cq a100/nvidia.com/gpu nominalQuota 2 -> 3"
        in out
    )


def test_a_grid_that_never_meets_the_target_exits_1_with_its_rule(sweep_case: Path) -> None:
    result = sweep(sweep_case, "short.yaml", "json")
    assert result.exit_code == 1
    findings = json.loads(result.stdout)["findings"]
    assert [f["rule"] for f in findings] == ["replay-sweep-target-unmet"]
    assert "team-a's p95 wait <= 660 s" in findings[0]["message"]


def test_a_grid_naming_a_queue_the_cluster_lacks_is_refused(sweep_case: Path) -> None:
    result = sweep(sweep_case, "bad.yaml", "text")
    assert result.exit_code == 2
    assert "ClusterQueue team-z-cq is not on the cluster" in result.output


def test_the_html_page_draws_the_frontier_and_repeats_byte_for_byte(sweep_case: Path) -> None:
    first = sweep(sweep_case, "grid.yaml", "html")
    assert first.exit_code == 0, first.output
    assert "The sweep&#x27;s frontier" in first.stdout or "The sweep's frontier" in first.stdout
    assert "<svg " in first.stdout
    assert sweep(sweep_case, "grid.yaml", "html").stdout == first.stdout


def test_over_two_days_the_busier_day_decides(sweep_case: Path) -> None:
    """Eight Workloads on the second day: three waves at 3 GPUs, two at 4, so 4 is the least."""
    result = sweep(sweep_case, "two-days.yaml", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["sweep"]
    assert doc["days"] == 2
    assert doc["best"]["values"]["team-a-cq a100/nvidia.com/gpu nominalQuota"] == "4"


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The known case on a real estate's troubles: team-c's namespace carries another tenant
    label, so no ClusterQueue selects it and its three Workloads are never admitted whatever
    team-a's quota; and the nodes hold 4 GPUs, of which team-c-cq's quota promises 1, so team-a
    at 4 or 6 promises more than there is. team-c-cq lends its idle GPU to team-a (one cohort):
    team-a's six run in ceil(6 / (Q + 1)) waves, two (p95 <= 660 s) from Q = 2; Q = 6 would run
    them at once, on GPUs the nodes do not have."""
    root = lab_estate(tmp_path_factory.mktemp("estate"), {"team-a": 1, "team-c": 1})
    profile = root / "clusters" / "lab" / "profile.yaml"
    profile.write_text(profile.read_text().replace('nvidia.com/gpu: "16"', 'nvidia.com/gpu: "4"'))
    namespace = root / "tenants" / "team-c" / "lab" / "namespace.yaml"
    namespace.write_text(namespace.read_text().replace("tenant: team-c", "tenant: team-x"))
    revs = Revisions(root)
    try:
        revs.commit("team-a at 1 GPU, team-c's namespace unselected, 4 GPUs of nodes")
    finally:
        revs.repo.close()
    a = TracedWorkload("team-a", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)
    c = TracedWorkload("team-c", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)
    made = Trace("lab", {"source": "synthetic", "seconds": 3600.0, "seed": 0}, [a] * 6 + [c] * 3)
    trace.write(made, root / "day.json")
    (root / "grid.yaml").write_text(sweep_grid.QUOTA_GRID)
    return root


def test_on_a_real_estate_the_unadmittable_are_apart_and_the_nodes_bound_the_answer(
    estate: Path,
) -> None:
    result = sweep(estate, "grid.yaml", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)["sweep"]
    [apart] = doc["neverAdmittedAnywhere"]
    assert (apart["namespace"], apart["localQueue"], apart["workloads"]) == ("team-c", "batch", 3)
    assert "doesn't match" in apart["reason"]  # Kueue's word: no ClusterQueue selects it
    by_quota = {p["values"]["team-a-cq a100/nvidia.com/gpu nominalQuota"]: p for p in doc["points"]}
    assert {q for q, p in by_quota.items() if not p["feasible"]} == {"4", "6"}
    assert by_quota["6"]["overCapacity"] == ["a100/nvidia.com/gpu 7 > 4"]
    assert not by_quota["4"]["meets"] and not by_quota["6"]["meets"]
    assert all(p["neverAdmitted"] == 0 for p in doc["points"])  # team-c's not counted
    assert by_quota["6"]["p95WaitSeconds"] == 0  # what the old sweep called meeting the target
    best = doc["best"]
    assert best["values"] == {"team-a-cq a100/nvidia.com/gpu nominalQuota": "2"}
    assert best["frontier"]
    assert [q for q, p in by_quota.items() if p["frontier"]] == ["1", "2"]
    assert "clusters/lab/profile.yaml" in doc["capacity"]
    assumed = doc["simulated"]["assumed"]  # what the answer took as given, said with it
    assert "what the nodes hold: the capacity clusters/lab/profile.yaml declares" in assumed
    assert any(a.startswith("run times: the synthetic trace's") for a in assumed)
    text = sweep(estate, "grid.yaml", "text").stdout
    assert "3 Workload(s) of team-c/batch" in text
    assert "no: a100/nvidia.com/gpu 5 > 4" in text
