"""What the pinned Kubernetes serves with a pinned Kueue release's CRDs: the schemas of
`schemas fetch --release` and the sets the package carries (`sandbox kueue-api --write`)."""

from __future__ import annotations

import os
import shutil
import typing as t
from dataclasses import dataclass
from pathlib import Path

from auditor.sandbox import pki, releases
from auditor.sandbox.build import ensure_built
from auditor.sandbox.controlplane import Sandbox
from auditor.schemas import fetch

KUBERNETES_MODULE = "k8s.io/kubernetes"


@dataclass
class Served:
    """A sandbox's schemas, and the Kueue and Kubernetes releases that served them."""

    fetched: fetch.Fetched
    kueue: str
    kubernetes: str


def schemas(
    testenv: Path, version: str | None, *, log: t.Callable[[str], None] | None = None
) -> Served:
    """Fetch, as `schemas fetch` reads a cluster, from a sandbox of the pins in `testenv` with
    Kueue `version`'s CRDs (None: the control plane's own release); the sandbox is started for
    it and gone afterwards. Builds what the cache lacks."""
    pki.require_extra()
    toolchain = ensure_built(testenv, log=log)
    found = releases.release(toolchain, version, log=log)
    box = Sandbox(f"schemas-{found.version}-{os.getpid()}")
    try:
        box.up(toolchain, kueue_release=found, log=log)
        fetched = fetch.fetch(box.connect())
    finally:
        box.down()
        shutil.rmtree(box.dir, ignore_errors=True)
    return Served(fetched, found.version, toolchain.versions[KUBERNETES_MODULE])
