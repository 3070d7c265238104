"""The repository's Argo CD objects against Argo CD's real CRDs, installed in a sandbox.

What the controllers make of them is tests/integration/test_argocd_real.py."""

from __future__ import annotations

import copy
import os
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.errors import ClusterAccessError, SandboxError
from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox, Toolchain
from auditor.sandbox.build import crd_set_files
from tests.conftest import start_sandbox
from tests.estate import ESTATE

Json = dict[str, t.Any]
ARGO = "argoproj.io/v1alpha1"


@pytest.fixture(scope="module")
def argocd_sandbox(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    box = start_sandbox(toolchain, sandboxes_dir, f"argocd-{os.getpid()}")
    try:
        box.install_crd_sets(toolchain.testenv, ["argocd"])
        box.connect().create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "argocd"}}
        )
    except Exception as exc:
        box.down()
        pytest.fail(f"Argo CD's CRDs could not be installed: {exc}", pytrace=False)
    yield box
    box.down()


def repo_objects() -> list[Json]:
    return [
        doc
        for path in sorted((ESTATE / "argocd").rglob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


def test_argo_cds_own_crds_are_served(argocd_sandbox: Sandbox) -> None:
    cluster = argocd_sandbox.connect()
    for kind in ("Application", "ApplicationSet", "AppProject"):
        assert cluster.resource(ARGO, kind).namespaced


def test_every_argocd_object_of_the_repository_applies(argocd_sandbox: Sandbox) -> None:
    cluster = argocd_sandbox.connect()
    objects = repo_objects()
    assert {o["kind"] for o in objects} == {"ApplicationSet", "AppProject"}
    for obj in objects:
        cluster.apply(obj, manager="argocd-bootstrap")
    live = {(o["kind"], o["metadata"]["name"]) for o in _argo_objects(cluster)}
    assert live == {(o["kind"], o["metadata"]["name"]) for o in objects}
    tenants = cluster.get(ARGO, "ApplicationSet", "kueue-tenants", "argocd")
    spec = tenants["spec"]
    assert spec["generators"][0]["git"]["directories"] == [{"path": "tenants/*/*"}]
    assert "ServerSideApply=true" in spec["template"]["spec"]["syncPolicy"]["syncOptions"]
    project = cluster.get(ARGO, "AppProject", "tenant-team-a", "argocd")
    assert project["spec"]["clusterResourceWhitelist"] == [
        {"group": "", "kind": "Namespace", "name": "team-a"}
    ]


def _argo_objects(cluster: KubeCluster) -> list[Json]:
    return cluster.list(ARGO, "ApplicationSet") + cluster.list(ARGO, "AppProject")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s["template"]["spec"]["syncPolicy"]["automated"].update(prunne=True), "prunne"),
        (lambda s: s["syncPolicy"].update(applicationsSync="delete-all"), "applicationsSync"),
    ],
    ids=["misspelt-field", "unknown-enum-value"],
)
def test_the_crds_really_validate_what_we_apply(
    argocd_sandbox: Sandbox, change: t.Callable[[Json], None], message: str
) -> None:
    [appset] = [o for o in repo_objects() if o["metadata"]["name"] == "kueue-clusters"]
    broken = copy.deepcopy(appset)
    broken["metadata"]["name"] = f"broken-{message.lower()}"
    change(broken["spec"])
    with pytest.raises(ClusterAccessError, match=message):
        argocd_sandbox.connect().apply(broken, manager="argocd-bootstrap")


def test_an_unknown_crd_set_is_an_error_that_lists_the_known_ones(toolchain: Toolchain) -> None:
    with pytest.raises(SandboxError, match="no CRD set 'argo'; known: argocd"):
        crd_set_files(toolchain.testenv, "argo")
