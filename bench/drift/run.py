"""Drift benchmark: our `drift` against the raw LISTs it needs and against `kubectl diff`.

One run: start a sandbox, generate a repo of N tenant namespaces (each with a LocalQueue and a
RoleBinding) over M ClusterQueues, sync it as Argo CD would, then time, each in its own process
on the same cluster and the same manifests:

  raw LISTs      the paginated LISTs the audit needs, through our client, nothing else
  drift          `kueue-gitops drift -o json` end to end (load repo, read, normalize, compare)
  kubectl diff   `kubectl diff --server-side` over the same manifests (kubectl built from
                 k8s.io/kubernetes/cmd/kubectl at the control plane's version)

and print medians, ratios and each process's peak memory (max RSS).

    .venv/bin/python bench/drift/run.py [--tenants 2000] [--cluster-queues 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import typing as t
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.drift import engine as drift  # noqa: E402
from auditor.live.apply import apply_all  # noqa: E402
from auditor.repo.layout import Repository  # noqa: E402
from auditor.sandbox import Sandbox, ensure_built  # noqa: E402
from auditor.sandbox.build import TOOLS, ensure_tool  # noqa: E402

CLUSTER = "gpu-prod"
KUEUE = "kueue.x-k8s.io/v1beta2"
PLATFORM_FILES = ("resourceflavors.yaml", "cohorts.yaml", "priorityclasses.yaml", "rbac.yaml")


def dump(path: Path, docs: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))


def cluster_queue(name: str) -> dict[str, object]:
    resources = [
        {"name": "cpu", "nominalQuota": "64"},
        {"name": "memory", "nominalQuota": "256Gi"},
        {"name": "nvidia.com/gpu", "nominalQuota": "4", "borrowingLimit": "2"},
    ]
    return {
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohortName": "ai-shared",
            "namespaceSelector": {"matchLabels": {"bench.example.com/cq": name}},
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory", "nvidia.com/gpu"],
                    "flavors": [{"name": "a100", "resources": resources}],
                }
            ],
        },
    }


def generate(dest: Path, tenants: int, queues: int) -> Path:
    """A repo: the real platform files for gpu-prod plus generated queues and tenants."""
    platform = dest / "clusters" / CLUSTER
    platform.mkdir(parents=True)
    for name in ("profile.yaml", *PLATFORM_FILES):
        shutil.copy(ROOT / "clusters" / CLUSTER / name, platform / name)
    cq_names = [f"bench-cq-{i:03d}" for i in range(queues)]
    dump(platform / "clusterqueues.yaml", [cluster_queue(n) for n in cq_names])
    per_queue = -(-tenants // queues)
    for q, cq in enumerate(cq_names):
        tenant = f"bench-{q:03d}"
        namespaces = [
            f"{tenant}-ns-{i:03d}" for i in range(per_queue) if q * per_queue + i < tenants
        ]
        profile: dict[str, t.Any] = {
            "apiVersion": "kueue-gitops.io/v1alpha1",
            "kind": "TenantProfile",
            "metadata": {"name": tenant},
            "spec": {
                "owners": [f"@example-org/{tenant}"],
                "group": f"example-org:{tenant}",
                "clusters": {CLUSTER: {"namespaces": namespaces, "clusterQueues": [cq]}},
            },
        }
        dump(dest / "tenants" / tenant / "profile.yaml", [profile])
        docs: list[dict[str, t.Any]] = []
        for ns in namespaces:
            labels = {"platform.example.com/kueue": "enabled", "bench.example.com/cq": cq}
            docs += [
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {"name": ns, "labels": labels},
                },
                {
                    "apiVersion": KUEUE,
                    "kind": "LocalQueue",
                    "metadata": {"name": "batch", "namespace": ns},
                    "spec": {"clusterQueue": cq},
                },
                {
                    "apiVersion": "rbac.authorization.k8s.io/v1",
                    "kind": "RoleBinding",
                    "metadata": {"name": "submitters", "namespace": ns},
                    "roleRef": {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "ClusterRole",
                        "name": "kueue-gitops:tenant-submitter",
                    },
                    "subjects": [
                        {
                            "apiGroup": "rbac.authorization.k8s.io",
                            "kind": "Group",
                            "name": f"example-org:{tenant}",
                        }
                    ],
                },
            ]
        dump(dest / "tenants" / tenant / CLUSTER / "tenant.yaml", docs)
    return dest


def manifests_only(repo: Path, dest: Path) -> Path:
    """The same manifests for kubectl, without the profiles it cannot read."""
    for path in sorted(repo.glob("**/*.yaml")):
        if path.name != "profile.yaml":
            target = dest / path.relative_to(repo)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, target)
    return dest


RAW_LISTS = """
import sys
from auditor.live.kube import KubeCluster
cluster = KubeCluster.connect("bench", kubeconfig=sys.argv[1])
for spec in sys.argv[2:]:
    api_version, kind = spec.split(",")
    cluster.list(api_version, kind)
"""


def measure(argv: list[str], expect: set[int]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS (MiB) of one process.

    GNU time reports the peak: a child forked from this (large) process would otherwise count
    our own resident memory in its ru_maxrss.
    """
    with tempfile.NamedTemporaryFile("r") as peak:
        started = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M %U %S", "-o", peak.name, *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        took = time.perf_counter() - started
        if proc.returncode not in expect:
            raise SystemExit(
                f"{argv[0]} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
        kib, user, system = peak.read().split()[-3:]
    return took, float(user) + float(system), int(kib) / 1024


def in_process(box: Sandbox, repo: Path, kinds: list[tuple[str, str]]) -> dict[str, float]:
    """The same work inside one warm process: no interpreter start, no imports."""
    cluster = box.connect()
    started = time.perf_counter()
    for api_version, kind in kinds:
        cluster.list(api_version, kind)
    lists = time.perf_counter() - started
    repository = Repository.open(repo)
    started = time.perf_counter()
    loaded = repository.load([CLUSTER])
    load = time.perf_counter() - started
    profile, desired = repository.cluster(CLUSTER), loaded.for_cluster(CLUSTER)
    started = time.perf_counter()
    live = drift.read(box.connect(), kinds)
    read = time.perf_counter() - started
    started = time.perf_counter()
    found = drift.compare(profile, desired, live, drift.LiveSchemas(None, live.crds))
    compare = time.perf_counter() - started
    assert found == [], found[:3]
    return {"raw LISTs": lists, "load repo": load, "read": read, "compare": compare}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=2000, help="tenant namespaces")
    parser.add_argument("--cluster-queues", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    toolchain = ensure_built(ROOT / "testenv", log=print)
    kubectl = ensure_tool(ROOT / "testenv", "kubectl", TOOLS["kubectl"], log=print)
    work = Path(tempfile.mkdtemp(prefix="bench-drift-"))
    box = Sandbox("bench-drift", root=work / "sandboxes")
    box.up(toolchain)
    try:
        repo = generate(work / "repo", args.tenants, args.cluster_queues)
        manifests = manifests_only(repo, work / "manifests")
        resources = Repository.open(repo).load([CLUSTER]).for_cluster(CLUSTER)
        started = time.perf_counter()
        failed = [a for a in apply_all(box.connect(), resources) if a.error]
        if failed:
            raise SystemExit(f"sync failed: {failed[0].resource.key}: {failed[0].error}")
        print(
            f"corpus: {len(resources)} objects ({args.tenants} namespaces, LocalQueues and "
            f"RoleBindings; {args.cluster_queues} ClusterQueues); synced in "
            f"{time.perf_counter() - started:.1f}s"
        )
        profile = Repository.open(repo).cluster(CLUSTER)
        kinds = drift.kinds_to_read(profile, resources)
        kubeconfig = str(box.kubeconfig)
        python = sys.executable
        kueue_gitops = str(Path(python).with_name("kueue-gitops"))
        runs = {
            "raw LISTs": (
                [python, "-c", RAW_LISTS, kubeconfig, *(f"{v},{k}" for v, k in kinds)],
                {0},
            ),
            "drift": (
                [
                    kueue_gitops,
                    "--repo",
                    str(repo),
                    "drift",
                    "--cluster",
                    CLUSTER,
                    "--kubeconfig",
                    kubeconfig,
                    "--context",
                    box.context,
                    "-o",
                    "json",
                ],
                {0},
            ),
            "kubectl diff": (
                [
                    str(kubectl),
                    "--kubeconfig",
                    kubeconfig,
                    "diff",
                    "--server-side",
                    "--force-conflicts",
                    "-R",
                    "-f",
                    str(manifests),
                ],
                {0, 1},
            ),
        }
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in runs}
        phases: list[dict[str, float]] = []
        for _ in range(args.repeat):
            for name, (argv, expect) in runs.items():
                results[name].append(measure(argv, expect))
            phases.append(in_process(box, repo, kinds))
        seconds = {n: statistics.median(s for s, _, _ in r) for n, r in results.items()}
        cpu = {n: statistics.median(c for _, c, _ in r) for n, r in results.items()}
        memory = {n: max(m for _, _, m in r) for n, r in results.items()}
        print(
            f"\n{'process':14} {'wall s':>7} {'CPU s':>7} {'peak MiB':>9}"
            f"   (medians of {args.repeat})"
        )
        for name in runs:
            print(f"{name:14} {seconds[name]:7.2f} {cpu[name]:7.2f} {memory[name]:9.0f}")
        print("\nin one warm process (medians):")
        for phase in phases[0]:
            print(f"  {phase:12} {statistics.median(p[phase] for p in phases):6.2f} s")
        audit = statistics.median(p["read"] + p["compare"] for p in phases)
        raw = statistics.median(p["raw LISTs"] for p in phases)
        print(f"  read + compare / raw LISTs = {audit / raw:.2f}x")
        print(
            f"\ndrift / raw LISTs    = {seconds['drift'] / seconds['raw LISTs']:.2f}x "
            "(goal <= 1.5x)"
            f"\nkubectl diff / drift = {seconds['kubectl diff'] / seconds['drift']:.1f}x "
            "(goal >= 10x)"
        )
    finally:
        box.down()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
