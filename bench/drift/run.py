"""Drift benchmark: our `drift` against the raw LISTs it needs and against `kubectl diff`.

One run: start a sandbox; for each size (ascending), generate a repo of N tenant namespaces
(each with a LocalQueue and a RoleBinding) over M ClusterQueues, sync what is new with
server-side apply as Argo CD would, then time, each in its own process on the same cluster and
the same manifests:

  raw LISTs      the paginated LISTs the audit needs, through our client, nothing else
  drift          `kueue-gitops drift -o json` end to end (load repo, read, normalize, compare),
                 after an earlier run (untimed) filled the cache, as the scheduled workflow
                 runs it: the repository served from validate's cache (auditor/repo/cache.py)
  drift --no-cache    the same without the cache: the repository parsed (in the forked
                 loader, auditor/drift/preload.py), as every run did before
  drift (--against)   with --against DIR, `drift` from that checkout, in turn with ours
  kubectl diff   `kubectl diff --server-side` over the same manifests (kubectl built from
                 k8s.io/kubernetes/cmd/kubectl at the control plane's version), for sizes up to
                 --kubectl-max only (it makes a dry-run apply and a GET per object)

and print one table: medians of wall and CPU seconds, each process's peak memory (max RSS),
the ratios, and the machine's load average while each size ran.

Every timed process runs from bytecode, as an installed kueue-gitops does (pip compiles it;
a checkout writes __pycache__): PYTHONDONTWRITEBYTECODE, when set, is left out of their
environment and the bytecode goes under the run's own folder (PYTHONPYCACHEPREFIX), written by
an untimed run of each. Compiling ~70 of our modules on every run is ~75 ms of drift's CPU, ~20
ms of the raw LISTs': a cost no user pays. --source-each-run measures as before.

    .venv/bin/python bench/drift/run.py [--sizes 2000] [--cluster-queues 50] [--repeat 3]
    .venv/bin/python bench/drift/run.py --sizes 500,2000,10000
    .venv/bin/python bench/drift/run.py --repeat 8 --kubectl-max 0 --against /tmp/main-checkout
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.drift import engine, reading
from auditor.k8s.objects import ResourceKey
from auditor.live.apply import apply_all
from auditor.live.kube import KubeCluster
from auditor.model import Resource
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, ensure_built
from auditor.sandbox.build import TOOLS, ensure_tool
from bench.drift.generate import ROOT, SOURCE, generate, manifests_only

CLUSTER = SOURCE
AGAINST = "drift (--against)"

RAW_LISTS = """
import sys
from auditor.live.kube import KubeCluster
from auditor.model import Resource
cluster = KubeCluster.connect("bench", kubeconfig=sys.argv[1])
for spec in sys.argv[2:]:
    api_version, kind = spec.split(",")
    cluster.list(api_version, kind)
"""


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float
    mib: float


def measure(argv: list[str], expect: set[int], env: dict[str, str] | None = None) -> Sample:
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
            env={**os.environ, **(env or {})},
        )
        took = time.perf_counter() - started
        if proc.returncode not in expect:
            raise SystemExit(
                f"{argv[0]} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
            )
        kib, user, system = peak.read().split()[-3:]
    return Sample(took, float(user) + float(system), int(kib) / 1024)


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
    live = reading.read(box.connect(), kinds)
    read = time.perf_counter() - started
    started = time.perf_counter()
    found = engine.compare_cluster(engine.RepoSide(profile, desired), live)
    compare = time.perf_counter() - started
    assert found == [], found[:3]
    return {"raw LISTs": lists, "load repo": load, "read": read, "compare": compare}


@dataclass
class SizeResult:
    tenants: int
    objects: int
    synced: float
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    phases: list[dict[str, float]] = field(default_factory=list)
    load: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after

    def median(self, name: str, what: str) -> float | None:
        got = self.samples.get(name)
        return statistics.median(getattr(s, what) for s in got) if got else None

    def peak(self, name: str) -> float | None:
        got = self.samples.get(name)
        return max(s.mib for s in got) if got else None


def sync(cluster: KubeCluster, repo: Path, done: set[ResourceKey]) -> tuple[int, float]:
    """Apply the repo's objects not applied yet; return how many it holds and the seconds.

    The platform's objects first, then the tenants' folders four at a time (each folder's
    Namespaces before what they hold, as apply_all orders them)."""
    resources = Repository.open(repo).load([CLUSTER]).for_cluster(CLUSTER)
    fresh = [r for r in resources if r.key not in done]
    started = time.perf_counter()
    by_tenant: dict[str | None, list[Resource]] = {}
    for resource in fresh:
        by_tenant.setdefault(resource.tenant, []).append(resource)
    applied = apply_all(cluster, by_tenant.pop(None, []))
    with ThreadPoolExecutor(max_workers=4) as pool:
        for batch in pool.map(lambda rs: apply_all(cluster, rs), by_tenant.values()):
            applied += batch
    failed = [a for a in applied if a.error]
    if failed:
        raise SystemExit(f"sync failed: {failed[0].resource.key}: {failed[0].error}")
    done.update(r.key for r in fresh)
    return len(resources), time.perf_counter() - started


def run_size(
    box: Sandbox, work: Path, tenants: int, args: argparse.Namespace, done: set[ResourceKey]
) -> SizeResult:
    repo = generate(work / f"repo-{tenants}", tenants, args.cluster_queues)
    objects, synced = sync(box.connect(), repo, done)
    print(f"{tenants} tenants: {objects} objects, synced in {synced:.1f}s", flush=True)
    result = SizeResult(tenants, objects, synced)
    profile = Repository.open(repo).cluster(CLUSTER)
    kinds = reading.kinds_to_read(
        profile, Repository.open(repo).load([CLUSTER]).for_cluster(CLUSTER)
    )
    kubeconfig, python = str(box.kubeconfig), sys.executable
    runs: dict[str, tuple[list[str], set[int]]] = {
        "raw LISTs": ([python, "-c", RAW_LISTS, kubeconfig, *(f"{v},{k}" for v, k in kinds)], {0}),
        "drift": (
            [
                str(Path(python).with_name("kueue-gitops")),
                *("--repo", str(repo), "drift", "--cluster", CLUSTER),
                *("--kubeconfig", kubeconfig, "--context", box.context, "-o", "json"),
            ],
            {0},
        ),
    }
    runs["drift --no-cache"] = ([*runs["drift"][0], "--no-cache"], {0})
    other = {"PYTHONPATH": str(args.against)} if args.against else None
    if other:  # the same command from another checkout, in the same sitting: a paired before
        runs[AGAINST] = runs["drift"]
    if tenants <= args.kubectl_max:
        manifests = manifests_only(repo, work / f"manifests-{tenants}")
        kubectl = ensure_tool(ROOT / "testenv", "kubectl", TOOLS["kubectl"], log=print)
        runs["kubectl diff"] = (
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
        )
    measure(*runs["raw LISTs"])  # untimed: its modules' bytecode written
    measure(*runs["drift"])  # untimed: fills the cache, as the scheduled run before did
    if other:
        measure(*runs[AGAINST], other)
    before = os.getloadavg()[0]
    for _ in range(args.repeat):
        for name, (argv, expect) in runs.items():
            env = other if name == AGAINST else None
            result.samples.setdefault(name, []).append(measure(argv, expect, env))
        result.phases.append(in_process(box, repo, kinds))
    result.load = (before, os.getloadavg()[0])
    return result


def cell(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def report(results: list[SizeResult], repeat: int) -> None:
    print(f"\nmedians of {repeat} runs; peak RSS is the largest of them")
    head = (
        "| tenant namespaces | objects | load | raw LISTs wall / CPU / RSS "
        "| drift wall / CPU / RSS | drift / raw LISTs | kubectl diff wall / CPU "
        "| kubectl diff / drift |"
    )
    print(head)
    print("|" + "---|" * 8)
    for r in results:
        raw, dr, kd = (r.median(n, "wall") for n in ("raw LISTs", "drift", "kubectl diff"))
        ratio = dr / raw if dr and raw else None
        speedup = kd / dr if kd and dr else None
        print(
            f"| {r.tenants:,} | {r.objects:,} | {r.load[0]:.1f} to {r.load[1]:.1f} "
            f"| {cell(raw, '.2f')} s / {cell(r.median('raw LISTs', 'cpu'), '.2f')} s / "
            f"{cell(r.peak('raw LISTs'), '.0f')} MiB "
            f"| {cell(dr, '.2f')} s / {cell(r.median('drift', 'cpu'), '.2f')} s / "
            f"{cell(r.peak('drift'), '.0f')} MiB "
            f"| **{cell(ratio, '.2f')}x** "
            f"| {cell(kd, '.1f')} s / {cell(r.median('kubectl diff', 'cpu'), '.1f')} s "
            f"| {cell(speedup, '.1f')}x |"
        )
    print("\nthe cache (auditor/repo/cache.py, filled by an earlier run), wall / CPU:")
    print("| tenant namespaces | drift | drift --no-cache |")
    print("|---|---|---|")
    for r in results:
        pair = [
            f"{cell(r.median(n, 'wall'), '.2f')} s / {cell(r.median(n, 'cpu'), '.2f')} s"
            for n in ("drift", "drift --no-cache")
        ]
        print(f"| {r.tenants:,} | " + " | ".join(pair) + " |")
    print("\nin one warm process (medians, seconds):")
    phases = list(results[0].phases[0])
    print("| tenant namespaces | " + " | ".join(phases) + " | read + compare / raw LISTs |")
    print("|" + "---|" * (len(phases) + 2))
    for r in results:
        cells = [statistics.median(p[name] for p in r.phases) for name in phases]
        audit = statistics.median(p["read"] + p["compare"] for p in r.phases)
        raw = statistics.median(p["raw LISTs"] for p in r.phases)
        print(
            f"| {r.tenants:,} | "
            + " | ".join(f"{c:.2f}" for c in cells)
            + f" | {audit / raw:.2f}x |"
        )
    runs(results)
    readme(results)
    print("\ngoals: drift / raw LISTs <= 1.5x; kubectl diff / drift >= 10x")


def readme(results: list[SizeResult]) -> None:
    """The lines bench/README.md takes (medians; wall, then CPU, of raw LISTs and drift)."""
    print("\nfor bench/README.md:")
    print("| tenant namespaces | raw LISTs | drift | ratio | kubectl diff |")
    print("|---|---|---|---|---|")
    for r in results:
        raw, dr, kd = (r.median(n, "wall") for n in ("raw LISTs", "drift", "kubectl diff"))
        raw_cpu, dr_cpu = r.median("raw LISTs", "cpu"), r.median("drift", "cpu")
        ratio = f"**{dr / raw:.2f}x**" if dr and raw else "-"
        cpu = f" ({dr_cpu / raw_cpu:.2f}x CPU)" if dr_cpu and raw_cpu else ""
        slower = f"{kd / dr:.1f}x slower than drift" if kd and dr else "-"
        print(
            f"| {r.tenants:,} | {cell(raw, '.2f')} s / {cell(raw_cpu, '.2f')} CPU-s "
            f"| {cell(dr, '.2f')} s / {cell(dr_cpu, '.2f')} CPU-s | {ratio}{cpu} | {slower} |"
        )
    for r in results:
        print(
            f"`--no-cache` took {cell(r.median('drift --no-cache', 'wall'), '.2f')} s at "
            f"{r.tenants:,}; load average {r.load[0]:.1f} to {r.load[1]:.1f}."
        )
        if AGAINST in r.samples:
            wall, seconds = r.median(AGAINST, "wall"), r.median(AGAINST, "cpu")
            lists = r.median("raw LISTs", "wall")
            print(
                f"--against at {r.tenants:,}: {cell(wall, '.2f')} s / {cell(seconds, '.2f')} "
                f"CPU-s ({cell(wall / lists if wall and lists else None, '.2f')}x the raw LISTs)."
            )


def runs(results: list[SizeResult]) -> None:
    """Every run, not only the medians: on a busy machine one run's ratio says little."""
    print("\neach run, wall / CPU seconds (raw LISTs and drift ran one after the other):")
    print("| tenant namespaces | run | raw LISTs | drift | drift / raw, wall | drift / raw, CPU |")
    print("|" + "---|" * 6)
    for r in results:
        for name in ("drift", AGAINST) if AGAINST in r.samples else ("drift",):
            pairs = zip(r.samples["raw LISTs"], r.samples[name], strict=True)
            for i, (raw, dr) in enumerate(pairs, 1):
                print(
                    f"| {r.tenants:,} | {i}{'' if name == 'drift' else ' (--against)'} "
                    f"| {raw.wall:.2f} s / {raw.cpu:.2f} s | {dr.wall:.2f} s / {dr.cpu:.2f} s "
                    f"| {dr.wall / raw.wall:.2f}x | {dr.cpu / raw.cpu:.2f}x |"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--sizes", default="2000", help="tenant namespaces, comma-separated (default 2000)"
    )
    parser.add_argument("--tenants", type=int, help="one size (the same as --sizes N)")
    parser.add_argument("--cluster-queues", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--kubectl-max",
        type=int,
        default=2000,
        help="run kubectl diff only up to this many tenant namespaces (default 2000)",
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="also time drift from this checkout (its PYTHONPATH), run for run beside ours: "
        "before and after in one sitting, under the same load",
    )
    parser.add_argument(
        "--source-each-run",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as it is: each run compiles what it imports",
    )
    args = parser.parse_args()
    sizes = sorted({args.tenants} if args.tenants else {int(s) for s in args.sizes.split(",")})

    toolchain = ensure_built(ROOT / "testenv", log=print)
    work = Path(tempfile.mkdtemp(prefix="bench-drift-"))
    os.environ["KUEUE_GITOPS_CACHE"] = str(work / "cache")  # the runs' own, removed after
    if not args.source_each_run:  # as installed: from bytecode (the module's docstring)
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    box = Sandbox(f"bench-drift-{os.getpid()}", root=work / "sandboxes")
    box.up(toolchain)
    try:
        done: set[ResourceKey] = set()
        results = [run_size(box, work, size, args, done) for size in sizes]
        report(results, args.repeat)
    finally:
        box.down()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
