"""The simulator's files for a release: one adapter per minor version, or a clear refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.sandbox.kueuesim import SimulationUnavailable, sources

SOURCE = Path(__file__).resolve().parents[3] / "testenv" / "kueuesim"


def test_a_release_takes_the_shared_files_and_its_minor_versions_adapter() -> None:
    files = [p.name for p in sources(SOURCE, "v0.19.2")]
    assert "release_v0_19.go" in files and "main.go" in files
    assert not any(f.startswith("release_") and f != "release_v0_19.go" for f in files)


def test_a_release_without_an_adapter_is_refused_naming_the_ones_there_are() -> None:
    with pytest.raises(SimulationUnavailable) as refused:
        sources(SOURCE, "v0.12.3")
    said = str(refused.value)
    assert "no adapter for Kueue v0.12.3" in said and "v0_19" in said
    assert "--engine" not in said  # --live, --job and --sweep have no other engine
