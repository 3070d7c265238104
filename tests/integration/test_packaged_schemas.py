"""The schemas the package carries for each supported Kueue release (auditor/schemas/packaged/)
are what the pinned Kubernetes serves with that release's CRDs, read again from a sandbox as
`sandbox kueue-api --write` reads them: no file of them can be edited by hand unnoticed."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from auditor.sandbox import releases, served
from auditor.schemas import fetch
from auditor.schemas.catalog import PACKAGED, PACKAGED_FILES
from tests.conftest import ROOT

PINNED = [None, *releases.pinned(ROOT / "testenv")]  # None: the control plane's own
PACKAGE = Path(str(resources.files("auditor.schemas").joinpath(PACKAGED)))


@pytest.mark.parametrize("version", PINNED, ids=[v or "control-plane" for v in PINNED])
def test_the_packaged_schemas_are_what_each_pinned_release_serves(
    version: str | None, sandboxes_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_SANDBOXES", str(sandboxes_dir))
    got = served.schemas(ROOT / "testenv", version)
    assert version in (None, got.kueue)
    manifest, files = fetch.packaged(got.fetched, got.kueue, got.kubernetes)
    flag = f" --kueue {version}" if version else ""
    again = f"run `kueue-gitops sandbox kueue-api{flag} --write`"
    stored = PACKAGE / f"{got.kueue}.json"
    assert stored.is_file(), f"not carried: {again}"
    assert stored.read_text() == manifest, f"stale: {again}"
    for digest, text in files.items():
        assert (PACKAGE / PACKAGED_FILES / f"{digest}.json").read_text() == text, again
    # Every kind the sandbox serves that the repository uses is in the set, core kinds too.
    kinds = json.loads(manifest)["index"]["kinds"]
    assert {"Namespace", "rbac.authorization.k8s.io/ClusterRole",
            "monitoring.coreos.com/PrometheusRule"} <= set(kinds)  # fmt: skip
