"""Fleet benchmark: `drift` and `validate` over 8 sandbox clusters in one run.

Starts N sandboxes (plain etcd + kube-apiserver, distinct names, started in parallel) and
states the memory they take (the RSS of their processes, summed); generates one repository of
N clusters (clusters/<c>/ with its profile, schemas/<c>/ copied from schemas/gpu-prod/, the
tenants spread over them), syncs each cluster; writes one kubeconfig with N contexts, each
profile naming its own; then times, each in its own process:

  fleet drift     `kueue-gitops drift -o json` over every cluster (the clusters audited in
                  one forked worker per core), after an untimed run filled the cache
  single drift    `kueue-gitops drift --cluster c -o json`, for each c: the slowest one counts
  validate        `kueue-gitops validate -o json` over the N clusters' folders
  kubeconform     `kubeconform -strict` over the same folders, one run per cluster (each has
                  its own schemas), run one after the other

Last, it stops one cluster and runs the fleet drift again: the other clusters must still be
reported (clean), the stopped one named incomplete, the exit code 3.

    .venv/bin/python bench/fleet/run.py [--clusters 8] [--tenants 2000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import typing as t
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain, ensure_built
from auditor.sandbox.build import TOOLS, ensure_tool
from auditor.sandbox.controlplane import merged_kubeconfig
from auditor.schemas.catalog import KUBECONFORM_TEMPLATE
from bench.drift.generate import ROOT, generate
from bench.drift.run import Sample, measure


def rss_mib(boxes: list[Sandbox]) -> float:
    """The resident memory of every process of `boxes`, summed (from /proc)."""
    total_kib = 0
    for box in boxes:
        state = box.state()
        for pid in state.pids.values() if state else ():
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kib += int(line.split()[1])
    return total_kib / 1024


def start(toolchain: Toolchain, boxes: list[Sandbox]) -> float:
    """Start every sandbox, as many at once as there are cores; return the wall seconds."""
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        for future in [pool.submit(box.up, toolchain) for box in boxes]:
            future.result()
    return time.perf_counter() - started


def sync(boxes: list[Sandbox], repo: Path) -> int:
    """Apply each cluster's objects to its sandbox (clusters in parallel); the objects in all."""
    loaded = Repository.open(repo).load([b.name for b in boxes])

    def one(box: Sandbox) -> int:
        resources = loaded.for_cluster(box.name)
        failed = [a for a in apply_all(box.connect(), resources) if a.error]
        if failed:
            raise SystemExit(f"sync of {box.name} failed: {failed[0].resource.key}: ...")
        return len(resources)

    with ThreadPoolExecutor(max_workers=len(boxes)) as pool:
        return sum(pool.map(one, boxes))


def kubeconform_argv(binary: Path, repo: Path, cluster: str) -> list[str]:
    location = KUBECONFORM_TEMPLATE.format(root=repo / "schemas", cluster=cluster)
    folders = [str(repo / "clusters" / cluster), *map(str, repo.glob(f"tenants/*/{cluster}"))]
    return [
        str(binary),
        *("-strict", "-summary", "-output", "json"),
        *("-skip", "ClusterProfile,TenantProfile", "-schema-location", location),
        *folders,
    ]


def summed(samples: list[Sample]) -> Sample:
    return Sample(
        sum(s.wall for s in samples), sum(s.cpu for s in samples), max(s.mib for s in samples)
    )


def median(samples: list[Sample]) -> Sample:
    return Sample(
        statistics.median(s.wall for s in samples),
        statistics.median(s.cpu for s in samples),
        max(s.mib for s in samples),
    )


def row(name: str, s: Sample, note: str = "") -> str:
    return f"| {name} | {s.wall:.2f} s | {s.cpu:.2f} s | {s.mib:.0f} MiB | {note} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clusters", type=int, default=8)
    parser.add_argument("--tenants", type=int, default=2000, help="tenant namespaces in all")
    parser.add_argument("--cluster-queues", type=int, default=48)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    toolchain = ensure_built(ROOT / "testenv", log=print)
    kubeconform = ensure_tool(ROOT / "testenv", "kubeconform", TOOLS["kubeconform"], log=print)
    work = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    os.environ["KUEUE_GITOPS_CACHE"] = str(work / "cache")  # the runs' own, removed after
    names = [f"fleet-{os.getpid()}-{i}" for i in range(args.clusters)]
    boxes = [Sandbox(name, root=work / "sandboxes") for name in names]
    try:
        load_before = os.getloadavg()[0]
        up = start(toolchain, boxes)
        idle_mib = rss_mib(boxes)
        print(f"{len(boxes)} sandboxes up in {up:.1f}s; their processes hold {idle_mib:.0f} MiB")
        repo = generate(work / "repo", args.tenants, args.cluster_queues, names, with_schemas=True)
        started = time.perf_counter()
        objects = sync(boxes, repo)
        synced_mib = rss_mib(boxes)
        print(
            f"{objects} objects synced in {time.perf_counter() - started:.1f}s; the sandboxes "
            f"now hold {synced_mib:.0f} MiB"
        )
        kubeconfig = str(merged_kubeconfig(boxes, work / "kubeconfig"))
        cli = str(Path(sys.executable).with_name("kueue-gitops"))
        drift = [cli, "--repo", str(repo), "drift", "--kubeconfig", kubeconfig, "-o", "json"]
        validate = [cli, "--repo", str(repo), "validate", "-o", "json"]
        fleet: list[Sample] = []
        single: dict[str, list[Sample]] = {n: [] for n in names}
        ours: list[Sample] = []
        peer: list[Sample] = []
        measure(drift, {0})  # untimed: fills the cache, as the scheduled run before did
        for _ in range(args.repeat):
            fleet.append(measure(drift, {0}))
            for name in names:
                single[name].append(measure([*drift, "--cluster", name], {0}))
            ours.append(measure(validate, {0, 1}))
            peer.append(
                summed([measure(kubeconform_argv(kubeconform, repo, n), {0}) for n in names])
            )
        load_after = os.getloadavg()[0]
        slowest_name = max(names, key=lambda n: statistics.median(s.wall for s in single[n]))
        slowest = median(single[slowest_name])
        all_fleet, all_ours, all_peer = median(fleet), median(ours), median(peer)

        boxes[-1].down()
        stopped = measure(drift, {3})
        out = _drift_json([*drift], stopped_expect=3)
        statuses = {c["name"]: c["status"] for c in out["clusters"]}
        ok = [n for n, s in statuses.items() if s == "ok"]
        assert statuses[names[-1]] == "incomplete", statuses
        assert sorted(ok) == sorted(names[:-1]), statuses
        assert out["findings"] == [], out["findings"][:3]

        print(
            f"\n{len(boxes)} clusters, {objects:,} objects ({args.tenants:,} tenant namespaces), "
            f"load {load_before:.1f} to {load_after:.1f}; medians of {args.repeat}, peak RSS "
            "the largest"
        )
        print("| process | wall | CPU | peak RSS | |")
        print("|---|---|---|---|---|")
        print(row(f"drift, {len(names)} clusters in one command", all_fleet))
        print(row("drift --cluster c, the slowest c", slowest, slowest_name))
        print(row(f"validate, {len(names)} clusters", all_ours))
        print(row(f"kubeconform -strict, {len(names)} runs", all_peer, "summed"))
        print(row("drift with one cluster stopped", stopped, "exit 3"))
        print(
            f"\nfleet drift / slowest single drift = {all_fleet.wall / slowest.wall:.2f}x "
            "(goal <= 1.5x)"
            f"\nvalidate / kubeconform (wall)      = {all_ours.wall / all_peer.wall:.2f}x"
            f"\nsandboxes: {idle_mib:.0f} MiB after start, {synced_mib:.0f} MiB synced "
            f"({synced_mib / len(boxes):.0f} MiB per cluster)"
            f"\none cluster stopped: {len(ok)} clusters reported ok, {names[-1]} "
            f"incomplete ({out['clusters'][-1]['errors'][0][:80]}...), exit 3"
        )
    finally:
        for box in boxes:
            box.down()
        shutil.rmtree(work, ignore_errors=True)


def _drift_json(argv: list[str], stopped_expect: int) -> dict[str, t.Any]:
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != stopped_expect:
        raise SystemExit(f"drift exited {proc.returncode}: {proc.stderr[-2000:]}")
    return t.cast(dict[str, t.Any], json.loads(proc.stdout))


if __name__ == "__main__":
    main()
