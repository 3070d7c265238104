"""The drift modules' sandbox: the repo as the sandbox can serve it, synced, and drift's JSON
report of it."""

from __future__ import annotations

import contextlib
import copy
import json
import typing as t
from pathlib import Path

import yaml

from auditor.live.apierrors import KindNotServed
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import own_context, run_line, start_sandbox
from tests.estate import copy_estate

CLUSTER = "gpu-prod"
KUEUE = "kueue.x-k8s.io/v1beta2"
RBAC = "rbac.authorization.k8s.io/v1"
Json = dict[str, t.Any]


def servable_repo(dest: Path, cluster: KubeCluster) -> Path:
    """The repo copied to `dest`, minus manifests and schemas of kinds the sandbox does not serve.

    The sandbox serves Kueue's CRDs; manifests for other operators would be reported as
    missing by every audit, which is right for a real cluster but not what these tests study.
    """
    copy_estate(dest, "clusters", "tenants", "schemas")
    for index_file in dest.glob("schemas/*/index.json"):
        index = json.loads(index_file.read_text())
        for name, entry in list(index["kinds"].items()):
            try:
                cluster.resource(f"{entry['group']}/{entry['served'][0]}", entry["kind"])
            except KindNotServed:
                del index["kinds"][name]
        index_file.write_text(json.dumps(index))
    for path in sorted(dest.glob("**/*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if path.name == "profile.yaml" or not isinstance(doc, dict):
                continue
            try:
                cluster.resource(doc["apiVersion"], doc["kind"])
            except KindNotServed:
                path.unlink()
                break
    return dest


def sync(box: Sandbox, repo: Path) -> None:
    resources = Repository.open(repo).load([CLUSTER]).for_cluster(CLUSTER)
    failed = [
        (str(a.resource.key), a.error) for a in apply_all(box.connect(), resources) if a.error
    ]
    assert failed == []


def drift_json(
    repo: Path, kubeconfig: Path | str, *extra: str, cluster: str = CLUSTER
) -> tuple[int, Json]:
    result = run_line(
        [
            *("kueue-gitops", "--repo", str(repo), "drift", "--cluster", cluster),
            *own_context(kubeconfig),
            "-o",
            "json",
            *extra,
        ]
    )
    return result.exit_code, json.loads(result.stdout)


def repo_body(repo: Path, kind: str, name: str) -> Json:
    for r in Repository.open(repo).load([CLUSTER]).for_cluster(CLUSTER):
        if r.kind == kind and r.name == name:
            return copy.deepcopy(r.body)
    raise AssertionError(f"no {kind} {name} in the repo")


def gpu(spec: Json, flavor: str) -> Json:
    [group] = spec["resourceGroups"]
    [found] = [f for f in group["flavors"] if f["name"] == flavor]
    [res] = [r for r in found["resources"] if r["name"] == "nvidia.com/gpu"]
    return t.cast(Json, res)


@contextlib.contextmanager
def synced_sandbox(
    toolchain: Toolchain, sandboxes_dir: Path, repo_dir: Path, name: str
) -> t.Iterator[tuple[Sandbox, Path]]:
    """A sandbox holding exactly what the repo says, and the repo copy (in `repo_dir`) it was
    synced from: what a drift module's `synced` fixture yields."""
    box = start_sandbox(toolchain, sandboxes_dir, name)
    repo = servable_repo(repo_dir, box.connect())
    sync(box, repo)
    yield box, repo
    box.down()
