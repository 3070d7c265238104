"""A sandbox keeps one process a name, so `down` stops every process it started."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from auditor.sandbox import services
from auditor.sandbox.controlplane import Sandbox, SandboxState


def test_spawning_a_name_again_stops_the_first_and_down_stops_the_second(tmp_path: Path) -> None:
    box = Sandbox("s", root=tmp_path)
    box.logs.mkdir(parents=True)
    box.state_file.write_text(json.dumps(asdict(SandboxState("s", 0, 0, 0))))
    first = box.spawn("kube-controller-manager", ["sleep", "600"])
    second = box.spawn("kube-controller-manager", ["sleep", "600"])  # as a Kueue switch does
    try:
        assert first != second
        assert not services.alive(first), "the first process was left running"
        assert box.process_alive("kube-controller-manager")
    finally:
        assert box.down() == ["kube-controller-manager"]
    assert not services.alive(second)
