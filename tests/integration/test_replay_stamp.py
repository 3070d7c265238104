"""Every simulated plan report says what it simulated: the Kueue release, each feature gate's value,
the scheduler settings (waitForPodsReady as the release defaults it) and what the simulation does
not model. The simulator built from the pinned v0.19.2, on an inline estate (tests/integration/
lab_estate.py); the head's Configuration turns a gate on and sets a field the simulation does not
model."""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from auditor.cli.main import cli
from auditor.replay import trace
from auditor.replay.trace import Trace, TracedWorkload
from tests.conftest import ROOT
from tests.integration.lab_estate import lab_estate
from tests.unit.conftest import Revisions

HEAD_CONFIG = """\
featureGates:
  PrioritizePreemptorWorkloads: true
objectRetentionPolicies:
  workloads:
    afterFinished: 1h
"""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    root = lab_estate(tmp_path_factory.mktemp("stamp"), {"team-a": 2, "team-b": 2})
    revs = Revisions(root)
    try:
        base = revs.commit("base")
        lab_estate(root, {"team-a": 2, "team-b": 2}, config=HEAD_CONFIG)
        head = revs.commit("a gate on, retention set")
    finally:
        revs.repo.close()
    work = [TracedWorkload("team-a", "batch", "low", {"nvidia.com/gpu": "1"}, 1, 0.0, 600.0)]
    trace.write(
        Trace("lab", {"source": "synthetic", "seconds": 600.0, "seed": 0}, work), root / "t.json"
    )
    return root, base, head


def plan(repo: tuple[Path, str, str], fmt: str) -> str:
    root, base, head = repo
    argv = ["--repo", str(root), "plan", "replay", str(root / "t.json"), "--base", base,
            "--head", head, "--cluster", "lab", "-o", fmt]  # fmt: skip
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_the_json_report_stamps_release_gates_settings_and_what_is_not_modelled(
    repo: tuple[Path, str, str],
) -> None:
    doc: dict[str, t.Any] = json.loads(plan(repo, "json"))
    schema = json.loads((ROOT / "auditor/report/report.schema.json").read_text())
    jsonschema.validate(doc, schema)
    base, head = doc["replay"]["simulated"]["base"], doc["replay"]["simulated"]["head"]
    assert base["kueueRelease"] == head["kueueRelease"] == "v0.19.2"
    # the release's own gate default, and the head's Configuration over it
    assert base["featureGates"]["PrioritizePreemptorWorkloads"] is False
    assert head["featureGates"]["PrioritizePreemptorWorkloads"] is True
    assert head["configuredGates"] == {"PrioritizePreemptorWorkloads": True}
    assert base["configuredGates"] == {}
    # v0.19 turns waitForPodsReady on by default: its timeout and backoff, as the release says
    pods = base["scheduler"]["waitForPodsReady"]
    assert pods["timeout"] == "30m0s"
    assert pods["requeuingStrategy"]["backoffBaseSeconds"] == 60
    assert base["scheduler"]["requeueBatchSeconds"] == 1
    assert any(n.startswith("objectRetentionPolicies") for n in head["notModelled"])
    assert not any(n.startswith("objectRetentionPolicies") for n in base["notModelled"])
    assert any("PodsReady" in n for n in base["notModelled"])


def test_the_text_and_markdown_reports_say_it_too(repo: tuple[Path, str, str]) -> None:
    out = plan(repo, "text")
    assert "\nbase: simulated Kueue v0.19.2: feature gates the release's defaults;" in out
    assert "head: simulated Kueue v0.19.2: feature gates the release's defaults with " in out
    assert "PrioritizePreemptorWorkloads=on" in out
    assert "waitForPodsReady on (timeout 30m0s" in out
    assert "\nhead: not modelled: objectRetentionPolicies" in out
    assert "\nnot modelled: pods are ready at admission" in out  # both sides: said once
    assert "head: not modelled: objectRetentionPolicies" in plan(repo, "markdown")
