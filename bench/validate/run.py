"""Validation benchmark: `kueue-gitops validate` vs kubeconform on the same generated corpus.

    python bench/validate/run.py [--tenants N | --objects N] [--rounds R]

Generates a corpus (bench/validate/generate.py; 1,700 tenants make 10,394 objects) in a
temporary repository, builds kubeconform from its pinned module (testenv/tools/kubeconform) and
runs, in alternating rounds on the same files:

- ours, schema only: `validate --only schema --no-cache` (version contract, schema, CEL; no
  policy check): the same work as kubeconform's, the comparison the goal is set on;
- ours cold: `validate --no-cache` (the full check: the policy checks too; nothing cached);
- kubeconform `-strict` pointed at our schemas/ (schema only; it has no result cache);
- ours warm: `validate` with its cache, after one file was edited since the previous warm run
  (a label of one tenant's Namespace changes every round), which must report exactly what the
  cold run of the same round reported.

Ours runs as an installed wheel runs: from a copy of this checkout's `auditor` package,
byte-compiled first (`compileall`) so no run compiles a module; the development environment's
PYTHONDONTWRITEBYTECODE would otherwise have every run compile ~120 modules (~0.1 s). The cache
lives in a temporary $KUEUE_GITOPS_CACHE, filled by one run before the rounds. Prints wall
(median), CPU seconds (user + system, workers included), peak RSS (GNU time's: the largest
process) and the ratios (kubeconform's time over ours, wall and CPU: above 1.0 we are faster),
with the load average: the rows and the summary line bench/README.md takes.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
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


def installed(into: Path) -> Path:
    """A byte-compiled copy of this checkout's `auditor` package under `into`, as a wheel
    installs it: the folder to put first on PYTHONPATH."""
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "auditor", into / "auditor", ignore=skip)
    if not compileall.compile_dir(into / "auditor", quiet=1, workers=0):
        raise SystemExit("the package did not byte-compile")
    return into


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


def corpus_arguments(description: str) -> tuple[int, int]:
    """The corpus's size in tenants (--tenants, or --objects over the objects a tenant makes)
    and the rounds, from the command line: the same for every validate benchmark."""
    parser = argparse.ArgumentParser(description=description)
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--tenants", type=int, help="tenants to generate (default 1700)")
    size.add_argument("--objects", type=int, help="about this many objects (sets --tenants)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    tenants = args.tenants or (round(args.objects / OBJECTS_PER_TENANT) if args.objects else 1700)
    return tenants, args.rounds


def main() -> None:
    tenants, repeat = corpus_arguments(__doc__.splitlines()[0])
    binary = ensure_tool(ROOT / "testenv", "kubeconform", TOOLS["kubeconform"], log=print)
    with tempfile.TemporaryDirectory(prefix="kueue-gitops-bench-") as tmp:
        repo, cache = Path(tmp) / "repo", Path(tmp) / "cache"
        package = installed(Path(tmp) / "site")
        env = {**os.environ, "KUEUE_GITOPS_CACHE": str(cache), "PYTHONPATH": str(package)}
        objects = generate(repo, tenants)
        load_before = os.getloadavg()
        print(f"corpus: {objects} objects, {tenants} tenants on {len(CLUSTERS)} clusters")
        ours(repo, env)  # fills the cache (and lark's analysed CEL grammar, a tool artefact)
        runs, findings = rounds(binary, repo, env, objects, repeat)
        load_after = os.getloadavg()
    print(
        f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
        f"{', '.join(f'{x:.1f}' for x in load_before)}, after "
        f"{', '.join(f'{x:.1f}' for x in load_after)}; {repeat} rounds, medians\n"
    )
    table(objects, {name: median(each) for name, each in runs.items()})
    print(f"\npolicy findings per run: {findings} (cold and warm identical every round)")


def rounds(
    binary: Path, repo: Path, env: dict[str, str], objects: int, count: int
) -> tuple[dict[str, list[Run]], int]:
    """Each run's measures over `count` rounds, one file edited before each, and how many
    findings the full check reported (the same in every cold and warm run)."""
    runs: dict[str, list[Run]] = {name: [] for name in ROWS}
    for round_ in range(count):
        edit(repo, round_)
        run, schema_findings = ours(repo, env, "--no-cache", "--only", "schema")
        if schema_findings:
            raise SystemExit(f"the corpus should be schema-clean: {schema_findings[:3]}")
        runs[SCHEMA].append(run)
        run, cold_findings = ours(repo, env, "--no-cache")
        runs[COLD].append(run)
        run, checked = peer(binary, repo, env)
        if checked != objects:
            raise SystemExit(f"kubeconform validated {checked} objects, expected {objects}")
        runs[PEER].append(run)
        run, warm_findings = ours(repo, env)
        if warm_findings != cold_findings:
            raise SystemExit("the cached run reported other findings than the cold run")
        runs[WARM].append(run)
    return runs, len(cold_findings)


PEER = "kubeconform -strict"
SCHEMA = "ours, schema only (`--only schema --no-cache`)"
COLD = "ours, full check, cold (`--no-cache`)"
WARM = "ours, full check, warm (one file changed)"
ROWS = (PEER, SCHEMA, COLD, WARM)


def table(objects: int, runs: dict[str, Run]) -> None:
    """The rows of bench/README.md's table, and its summary line (ratios: kubeconform's
    seconds over ours, wall and CPU; above 1.0 we are faster)."""
    k = runs[PEER]
    print("| objects | run | wall | objects/s | CPU s | peak RSS | ratio (wall) | ratio (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, r in runs.items():
        ratio = "" if r is k else f"**{k.wall / r.wall:.2f}** | {k.cpu / r.cpu:.2f}"
        print(
            f"| {objects:,} | {name} | {r.wall:.2f} s | {objects / r.wall:,.0f} | {r.cpu:.2f} | "
            f"{r.rss_mib:.0f} MiB | {ratio or ' | '} |"
        )
    said = ", ".join(
        f"{label} **{k.wall / runs[name].wall:.2f}** ({k.cpu / runs[name].cpu:.2f} per CPU-second)"
        for label, name in (("schema only", SCHEMA), ("full cold", COLD), ("full warm", WARM))
    )
    print(f"\nsummary (of kubeconform's objects/s, wall): {said} at {objects:,} objects")


if __name__ == "__main__":
    main()
