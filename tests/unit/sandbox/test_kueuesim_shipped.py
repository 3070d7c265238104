"""Where the simulator comes from: the installed kueue-gitops-sim's binary when it was built from
this package's sources, found before any Go build is tried; else Go; else a configuration error
naming what to install. The companion here is a folder on sys.path laid out as the wheel
installs it (the package, its manifest, a binary, its dist-info); tests/integration/
test_sim_wheel.py installs the real one."""

from __future__ import annotations

import json
import os
import sys
import typing as t
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.sandbox import kueuesim

TESTENV = Path(__file__).resolve().parents[3] / "testenv"


def test_the_pinned_release_is_read_from_go_mod() -> None:
    assert kueuesim.release_of(TESTENV) == "v0.17.0"
    assert kueuesim.release_of(TESTENV / "kueue-v0.19.2") == "v0.19.2"
    assert kueuesim.simulable(TESTENV) == ["v0.17.0", "v0.19.2"]  # v0.9.1 has no adapter


def companion(site: Path, sources: str) -> Path:
    """kueue-gitops-sim 9.9.9 installed in `site`, its v0.19.2 binary built from `sources`."""
    package = site / "kueue_gitops_sim"
    binary = package / "bin/v0.19.2/kueuesim"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    (package / "__init__.py").write_text("")
    shipped = {"binary": "bin/v0.19.2/kueuesim", "sources": sources}
    (package / "manifest.json").write_text(json.dumps({"releases": {"v0.19.2": shipped}}))
    meta = site / "kueue_gitops_sim-9.9.9.dist-info"
    meta.mkdir()
    metadata = "Metadata-Version: 2.1\nName: kueue-gitops-sim\nVersion: 9.9.9\n"
    (meta / "METADATA").write_text(metadata)
    return binary


@pytest.fixture
def no_go(monkeypatch: pytest.MonkeyPatch) -> t.Iterator[None]:
    kept = [d for d in os.environ["PATH"].split(os.pathsep) if not (Path(d) / "go").exists()]
    monkeypatch.setenv("PATH", os.pathsep.join(kept))
    yield
    sys.modules.pop("kueue_gitops_sim", None)


def test_the_companions_binary_is_used_without_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_go: None
) -> None:
    module = TESTENV / "kueue-v0.19.2"
    files = kueuesim.sources(TESTENV / "kueuesim", "v0.19.2")
    binary = companion(tmp_path, kueuesim.source_key(module, files))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert kueuesim.ensure_sim(TESTENV, "v0.19.2") == (binary, "v0.19.2")


def test_a_companion_built_from_other_sources_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_go: None
) -> None:
    companion(tmp_path, "0123456789abcdef")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as refused:
        kueuesim.ensure_sim(TESTENV, "v0.19.2")
    said = str(refused.value)
    assert "kueue-gitops-sim 9.9.9 was built from other sources than kueue-gitops" in said
    assert "pip install 'kueue-gitops[sim]'" in said and "Go toolchain" in said


def test_a_companion_without_the_release_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_go: None
) -> None:
    companion(tmp_path, "0123456789abcdef")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as refused:
        kueuesim.ensure_sim(TESTENV, None)  # the control plane's, v0.17.0
    assert "kueue-gitops-sim 9.9.9 has no simulator for Kueue v0.17.0" in str(refused.value)
