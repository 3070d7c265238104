"""The trace format: written, read back, and refused with the file and the field when wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.replay import synthetic, trace
from tests.conftest import run_line

MIX = [synthetic.TenantMix("team-a", "batch", 1.0, {"batch-low": 1.0})]


def test_a_written_trace_reads_back_equal(tmp_path: Path) -> None:
    made = synthetic.generate("gpu-staging", MIX, workloads=12, hours=1, seed=3)
    trace.write(made, tmp_path / "t.json")
    again = trace.read(tmp_path / "t.json")
    assert again.to_json() == made.to_json()
    assert again.workloads == made.workloads


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"traceVersion": 2}, "traceVersion 2 is not one this kueue-gitops reads"),
        ({"cluster": ""}, "cluster: '' should be non-empty"),
        ({"workloads": [{"namespace": "team-a"}]}, "workloads[0]: 'localQueue' is a required"),
    ],
)
def test_a_bad_trace_names_its_file_and_field(
    tmp_path: Path, change: dict[str, object], says: str
) -> None:
    doc = synthetic.generate("gpu-staging", MIX, workloads=2, hours=1, seed=1).to_json() | change
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ConfigError) as err:
        trace.read(path)
    assert str(err.value).startswith(f"{path}: ") and says in str(err.value)


def test_a_bad_request_quantity_and_a_negative_run_are_refused(tmp_path: Path) -> None:
    doc = synthetic.generate("gpu-staging", MIX, workloads=1, hours=1, seed=1).to_json()
    doc["workloads"][0]["requests"]["nvidia.com/gpu"] = "lots"
    with pytest.raises(ConfigError, match=r"workloads\[0\]\.requests\.nvidia.com/gpu"):
        trace.parse(doc, "t.json")
    doc["workloads"][0]["requests"]["nvidia.com/gpu"] = "1"
    doc["workloads"][0]["runSeconds"] = 0
    with pytest.raises(ConfigError, match=r"workloads\[0\]\.runSeconds"):
        trace.parse(doc, "t.json")


def test_plan_replay_with_a_missing_or_broken_trace_exits_2(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{")
    for name, says in (("missing.json", "cannot read the trace"), ("broken.json", "not JSON")):
        result = run_line(
            ["kueue-gitops", "plan", "replay", str(tmp_path / name), "--base", "HEAD"]
        )
        assert result.exit_code == 2 and says in result.stderr


def test_a_speed_beyond_the_measured_bound_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    trace.write(synthetic.generate("gpu-staging", MIX, workloads=1, hours=1, seed=1), path)
    result = run_line(
        ["kueue-gitops", "plan", "replay", str(path), "--base", "HEAD", "--speed", "500"]
    )
    assert result.exit_code == 2 and "--speed 500 is outside (0, 60]" in result.stderr


def test_a_repeat_beyond_five_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    trace.write(synthetic.generate("gpu-staging", MIX, workloads=1, hours=1, seed=1), path)
    for repeat in ("0", "6"):
        result = run_line(
            ["kueue-gitops", "plan", "replay", str(path), "--base", "HEAD", "--repeat", repeat]
        )
        assert result.exit_code == 2 and f"--repeat {repeat} is outside [1, 5]" in result.stderr
