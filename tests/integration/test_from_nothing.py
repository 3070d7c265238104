"""From nothing to a queue that admits a real Job (issue 34, "Done when"), the user's way: the
released wheel in a fresh virtualenv, an empty git repository, `init`, `tenant add` with a GPU
quota only, the schemas of the pinned release, then a sandbox of the cluster running that Kueue
release with kwok's nodes sized from the profile's capacity, synced from the repository. A Job
whose pod asks for cpu, memory and a GPU is admitted; a ClusterQueue covering only the GPU (what
`tenant add` wrote before) is `queue-admits-no-job` in `validate`, and Kueue, asked the same,
leaves the Job pending with the reason the finding quotes.

For each release `init` writes clusters for (start.writable_releases()): one sandbox each.
"""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.kueue import versions, workloads
from auditor.kueue.workloads import owner_job
from auditor.live.kube import KubeCluster
from auditor.onboard import start
from auditor.sandbox import Sandbox
from tests.installed import git, run
from tests.integration.waiting import eventually

URL = "https://git.example.com/platform/kueue.git"
Json = dict[str, t.Any]


def tenant(name: str, gpus: int) -> list[str]:
    """`tenant add` as the hint of `init` puts it: a GPU quota, nothing else."""
    return [
        *("tenant", "add", name, "--cluster", "gpu-a", "--owner", f"@platform/{name}"),
        *("--group", f"platform:{name}", "--quota", f"gpu.nvidia.com/gpu={gpus}"),
    ]


def job(name: str, ns: str) -> Json:
    """An ordinary Job: its pod asks for cpu and memory beside its GPU."""
    request = {"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {"kueue.x-k8s.io/queue-name": "batch"},
        },
        "spec": {
            "suspend": True,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "main",
                            "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": request, "limits": request},
                        }
                    ],
                }
            },
        },
    }


def workload_of(live: KubeCluster, api: str, ns: str, job_name: str) -> Json | None:
    return next((w for w in live.list_in(api, "Workload", ns) if owner_job(w) == job_name), None)


def gpu_only(path: Path, queue: str) -> None:
    """Make `queue` in `path` cover only its GPUs, as `tenant add` wrote it before issue 34."""
    docs = list(yaml.safe_load_all(path.read_text()))
    for doc in docs:
        if doc["metadata"]["name"] == queue:
            group = doc["spec"]["resourceGroups"][0]
            group["coveredResources"] = ["nvidia.com/gpu"]
            for flavor in group["flavors"]:
                flavor["resources"] = [r for r in flavor["resources"] if "gpu" in r["name"]]
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


@pytest.mark.parametrize("release", start.writable_releases())
def test_a_gpu_only_tenant_admits_a_job_asking_cpu_memory_and_a_gpu(
    adopter: Path,
    tmp_path: Path,
    release: str,
) -> None:
    sandboxes = {"KUEUE_GITOPS_SANDBOXES": str(tmp_path / "sandboxes")}  # only this test's
    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")

    def kg(*argv: str, code: int = 0, **kw: t.Any) -> str:
        done = run([str(adopter), *argv], repo, env=sandboxes | kw.pop("env", {}))
        assert done.returncode == code, (
            f"kueue-gitops {' '.join(argv)}:\n{done.stdout}{done.stderr}"
        )
        return done.stdout

    said = kg("init", "--cluster", "gpu-a", "--repo-url", URL, "--owner", "@platform/admins",
              "--kueue-version", release)  # fmt: skip
    assert "--quota gpu.nvidia.com/gpu=8" in said  # the hint: a GPU quota alone will do
    kg(*tenant("team-x", 4))
    kg(*tenant("team-y", 2))
    gpu_only(repo / "clusters/gpu-a/clusterqueues.yaml", "team-y-cq")
    kg("schemas", "fetch", "--cluster", "gpu-a", "--release", release)
    report = json.loads(kg("validate", "-o", "json", code=1))
    assert sorted((f["rule"], f["kind"], f["name"]) for f in report["findings"]) == [
        ("queue-admits-no-job", "ClusterQueue", "team-y-cq"),
        ("queue-admits-no-job", "LocalQueue", "batch"),
    ]
    [lq] = [f for f in report["findings"] if f["kind"] == "LocalQueue"]
    assert (lq["namespace"], lq["file"]) == ("team-y", "tenants/team-y/gpu-a/localqueues.yaml")

    profile = yaml.safe_load((repo / "clusters/gpu-a/profile.yaml").read_text())["spec"]
    api = versions.api_version(profile["kueue"]["apiVersions"])
    try:
        kg("sandbox", "up", "gpu-a", "--with-kueue")  # kwok nodes from the profile's capacity
        kg("sandbox", "apply", "--cluster", "gpu-a")
        live = Sandbox("gpu-a", root=tmp_path / "sandboxes").connect()
        assert {n["metadata"]["name"] for n in live.list("v1", "Node")}, "no simulated nodes"
        for ns in ("team-x", "team-y"):
            live.create(job("train", ns))

        def admitted() -> Json | None:
            found = workload_of(live, api, "team-x", "train")
            return found if found and workloads.state(found) == "admitted" else None

        eventually(
            admitted,
            what="team-x's Job (cpu, memory and a GPU) admitted by team-x-cq",
            seconds=120,
            seen=lambda: workload_of(live, api, "team-x", "train"),
        )

        def refused() -> str | None:
            found = workload_of(live, api, "team-y", "train")
            reasons = [c.get("message", "") for c in (found or {}).get("status", {}).get(
                "conditions", [])]  # fmt: skip
            return next((m for m in reasons if "unavailable in ClusterQueue" in m), None)

        why = eventually(
            refused,
            what="team-y's Job pending: a resource unavailable in team-y-cq",
            seconds=120,
            seen=lambda: workload_of(live, api, "team-y", "train"),
        )
        assert "resource cpu unavailable in ClusterQueue" in why or "memory" in why
        wl = workload_of(live, api, "team-y", "train")
        assert wl is not None and workloads.state(wl) == "pending"
    finally:
        run([str(adopter), "sandbox", "down", "gpu-a"], repo, env=sandboxes)
