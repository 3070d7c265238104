"""Validation benchmark: `kueue-gitops validate` vs kubeconform on the same generated corpus.

    python bench/validate/run.py [--tenants N | --objects N] [--rounds R]

Generates a corpus (bench/validate/generate.py; 1,700 tenants make 10,394 objects) in a
temporary repository, builds kubeconform from its pinned module (testenv/tools/kubeconform) and
runs, in alternating rounds on the same files:

- ours cold: `validate --no-cache` (schema, CEL, version contract, policy checks; nothing cached);
- kubeconform `-strict` pointed at our schemas/ (schema only; it has no result cache);
- ours warm: `validate` with its cache, after one file was edited since the previous warm run
  (a label of one tenant's Namespace changes every round), which must report exactly what the
  cold run of the same round reported.

The cache lives in a temporary $KUEUE_GITOPS_CACHE, filled by one run before the rounds. Prints
wall (median), CPU seconds (user + system, workers included), peak RSS (GNU time's: the largest
process) and the ratios (kubeconform's time over ours: above 1.0 we are faster), with the load
average: one command per table row group in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.sandbox.build import TOOLS, ensure_tool
from auditor.schemas.catalog import KUBECONFORM_TEMPLATE
from bench.validate.generate import CLUSTERS, ROOT, generate

OBJECTS_PER_TENANT = 10_394 / 1_700  # what the generator writes, platform objects included
EDITED = "tenants/t00000/gpu-prod/namespace.yaml"
GNU_TIME = "/usr/bin/time"


@dataclass
class Run:
    wall: float
    cpu: float  # user + system seconds of the process and the children it waited for
    rss_mib: float  # peak resident set of the largest process among them
    stdout: str


def measured(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[Run, int]:
    """Run `argv` to its end; its wall time and the rusage the kernel kept for it (wait4)."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile("r") as rss,
    ):
        # GNU time reports the peak RSS: a child forked from this (large) process would
        # report this process's size, which the kernel keeps across exec.
        timed = [GNU_TIME, "-f", "%M", "-o", rss.name, *argv]
        started = time.perf_counter()
        proc = subprocess.Popen(timed, cwd=cwd, stdout=out, stderr=err, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode()
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{argv[:4]} failed ({proc.returncode}):\n{err.read().decode()}")
        peak_kib = int(rss.read().split()[-1])
    cpu = usage.ru_utime + usage.ru_stime
    return Run(wall, cpu, peak_kib / 1024, stdout), proc.returncode


def ours(repo: Path, env: dict[str, str], *flags: str) -> tuple[Run, list[dict[str, object]]]:
    run, _code = measured(
        [sys.executable, "-m", "auditor", "validate", "-o", "json", *flags], repo, env
    )
    findings = json.loads(run.stdout)["findings"]
    broken = [f for f in findings if f["category"] in ("schema", "cel", "input")]
    if broken:
        raise SystemExit(f"the corpus should be schema-valid: {broken[:3]}")
    return run, findings


def peer(binary: Path, repo: Path, env: dict[str, str]) -> tuple[Run, int]:
    """kubeconform, one run per cluster (each cluster has its own schemas), summed."""
    total, checked = Run(0.0, 0.0, 0.0, ""), 0
    for cluster in CLUSTERS:
        location = KUBECONFORM_TEMPLATE.format(root="schemas", cluster=cluster)
        tenants = sorted(str(p.relative_to(repo)) for p in repo.glob(f"tenants/*/{cluster}"))
        argv = [str(binary), "-strict", "-summary", "-output", "json"]
        argv += ["-skip", "ClusterProfile,TenantProfile", "-schema-location", location]
        run, code = measured([*argv, f"clusters/{cluster}", *tenants], repo, env)
        if code != 0:
            raise SystemExit(f"kubeconform found problems or failed:\n{run.stdout[-2000:]}")
        checked += int(json.loads(run.stdout)["summary"]["valid"])
        total = Run(total.wall + run.wall, total.cpu + run.cpu, max(total.rss_mib, run.rss_mib), "")
    return total, checked


def edit(repo: Path, round_: int) -> None:
    """Change one file: the value of one label of one tenant's Namespace."""
    path = repo / EDITED
    text = path.read_text()
    marker = "    bench.example.com/round: "
    lines = [line for line in text.splitlines() if not line.startswith(marker)]
    at = lines.index("  labels:") + 1
    lines.insert(at, f'{marker}"{round_}"')
    path.write_text("\n".join(lines) + "\n")


def median(runs: list[Run]) -> Run:
    return Run(
        statistics.median(r.wall for r in runs),
        statistics.median(r.cpu for r in runs),
        max(r.rss_mib for r in runs),
        "",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--tenants", type=int, help="tenants to generate (default 1700)")
    size.add_argument("--objects", type=int, help="about this many objects (sets --tenants)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tenants = args.tenants or (round(args.objects / OBJECTS_PER_TENANT) if args.objects else 1700)
    binary = ensure_tool(ROOT / "testenv", "kubeconform", TOOLS["kubeconform"], log=print)
    with tempfile.TemporaryDirectory(prefix="kueue-gitops-bench-") as tmp:
        repo, cache = Path(tmp) / "repo", Path(tmp) / "cache"
        env = {**os.environ, "KUEUE_GITOPS_CACHE": str(cache)}
        objects = generate(repo, tenants)
        load_before = os.getloadavg()
        print(f"corpus: {objects} objects, {tenants} tenants on {len(CLUSTERS)} clusters")
        ours(repo, env)  # fills the cache (and lark's analysed CEL grammar, a tool artefact)
        cold, warm, kubeconform = [], [], []
        for round_ in range(args.rounds):
            edit(repo, round_)
            run, cold_findings = ours(repo, env, "--no-cache")
            cold.append(run)
            run, checked = peer(binary, repo, env)
            if checked != objects:
                raise SystemExit(f"kubeconform validated {checked} objects, expected {objects}")
            kubeconform.append(run)
            run, warm_findings = ours(repo, env)
            if warm_findings != cold_findings:
                raise SystemExit("the cached run reported other findings than the cold run")
            warm.append(run)
        load_after = os.getloadavg()
    c, k, w = median(cold), median(kubeconform), median(warm)
    print(
        f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
        f"{', '.join(f'{x:.1f}' for x in load_before)}, after "
        f"{', '.join(f'{x:.1f}' for x in load_after)}; {args.rounds} rounds, medians\n"
    )
    print("| objects | run | wall | objects/s | CPU s | peak RSS | ratio (wall) | ratio (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in (
        ("kubeconform -strict", k),
        ("ours, cold (`--no-cache`)", c),
        ("ours, warm (one file changed)", w),
    ):
        ratio = "" if r is k else f"**{k.wall / r.wall:.2f}** | {k.cpu / r.cpu:.2f}"
        print(
            f"| {objects:,} | {name} | {r.wall:.2f} s | {objects / r.wall:,.0f} | {r.cpu:.2f} | "
            f"{r.rss_mib:.0f} MiB | {ratio or ' | '} |"
        )
    print(f"\npolicy findings per run: {len(cold_findings)} (cold and warm identical every round)")


if __name__ == "__main__":
    main()
