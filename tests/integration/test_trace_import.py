"""`trace import --kueue-harness`: Kueue's own scheduler performance harness, read from the pinned
Kueue module in the Go module cache (the sandbox's build fills it; without it these tests fail,
they do not skip), as an estate that validates clean and a trace of the harness's Workloads."""

from __future__ import annotations

import json
import typing as t
from collections import Counter
from pathlib import Path

import pytest
import yaml

from auditor.sandbox import releases
from tests.conftest import ROOT, run_line


def _generator(name: str) -> dict[str, t.Any]:
    """The configuration as Kueue ships it, read here independently of the importer."""
    module, _ = releases.source(ROOT / "testenv", None)  # raises when the module is missing
    path = module / "test/performance/scheduler/configs" / name / "generator.yaml"
    return t.cast(dict[str, t.Any], yaml.safe_load(path.read_text()))


def _expected(config: dict[str, t.Any]) -> tuple[Counter[str], int]:
    """Workloads per class, and ClusterQueues, that the harness's generator creates."""
    counts: Counter[str] = Counter()
    queues = 0
    for cohorts in config["cohorts"]:
        for qs in cohorts["queuesSets"]:
            queues += cohorts["count"] * qs["count"]
            for ws in qs["workloadsSets"]:
                for w in ws["workloads"]:
                    counts[w["className"]] += cohorts["count"] * qs["count"] * ws["count"]
    return counts, queues


@pytest.mark.parametrize("name", ["baseline", "large-scale"])
def test_a_harness_imports_as_a_clean_estate_and_its_trace(name: str, tmp_path: Path) -> None:
    out = tmp_path / name
    made = run_line(["kueue-gitops", "trace", "import", "--kueue-harness", name,
                     "--out-dir", str(out)])  # fmt: skip
    assert made.exit_code == 0, made.output
    counts, queues = _expected(_generator(name))

    checked = run_line(["kueue-gitops", "--repo", str(out), "validate", "--strict", "-o", "json"])
    report = json.loads(checked.stdout)
    assert checked.exit_code == 0, [f["message"] for f in report["findings"]][:5]

    doc = json.loads((out / "trace.json").read_text())
    assert doc["recorded"] == doc["recorded"] | {"source": "harness", "harness": name}
    assert Counter(w["priorityClass"] for w in doc["workloads"]) == counts
    assert len({w["localQueue"] for w in doc["workloads"]}) == queues
    cluster = doc["cluster"]
    cqs = yaml.safe_load_all((out / "clusters" / cluster / "clusterqueues.yaml").read_text())
    assert sum(1 for _ in cqs) == queues
    assert f"{sum(counts.values())} Workloads" in made.output


def test_an_unknown_configuration_is_refused_naming_those_there_are(tmp_path: Path) -> None:
    made = run_line(["kueue-gitops", "trace", "import", "--kueue-harness", "nope",
                     "--out-dir", str(tmp_path / "x")])  # fmt: skip
    assert made.exit_code == 2
    assert "'nope'" in made.output and "baseline" in made.output
    assert not (tmp_path / "x").exists()


def test_a_configuration_with_a_topology_is_refused(tmp_path: Path) -> None:
    made = run_line(["kueue-gitops", "trace", "import", "--kueue-harness", "tas",
                     "--out-dir", str(tmp_path / "x")])  # fmt: skip
    assert made.exit_code == 2
    assert "generator.yaml" in made.output and "topology" in made.output


def test_a_folder_with_files_in_it_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep\n")
    made = run_line(["kueue-gitops", "trace", "import", "--kueue-harness", "baseline",
                     "--out-dir", str(tmp_path)])  # fmt: skip
    assert made.exit_code == 2
    assert "not empty" in made.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]
