"""Validation benchmark: `kueue-gitops validate` vs kubeconform on the same generated corpus.

    python bench/validate/run.py [--tenants N] [--rounds R]

Generates >= 10,000 objects (bench/validate/generate.py) in a temporary repository, builds
kubeconform from its pinned module (testenv/tools/kubeconform) and runs both on the same files
in alternating rounds: our full `validate` (schema, CEL, version contract, policy checks) and
`kubeconform -strict` pointed at our schemas/ (schema only). Prints objects/s and the ratio
(ours / kubeconform, median wall time of the rounds; above 1.0 we are faster).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.sandbox.build import TOOLS, ensure_tool
from auditor.schemas.catalog import KUBECONFORM_TEMPLATE
from bench.validate.generate import CLUSTERS, ROOT, generate

CPU: list[float] = []  # CPU seconds (user + system, all processes and threads) of each run


def timed(argv: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall seconds of one run; its CPU seconds go to CPU (less sensitive to a busy machine)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall, proc


def ours(repo: Path) -> tuple[float, int]:
    seconds, proc = timed([sys.executable, "-m", "auditor", "validate", "-o", "json"], repo)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"kueue-gitops validate failed ({proc.returncode}):\n{proc.stderr}")
    report = json.loads(proc.stdout)
    schema_errors = [f for f in report["findings"] if f["category"] in ("schema", "cel", "input")]
    if schema_errors:
        raise SystemExit(f"the corpus should be schema-valid: {schema_errors[:3]}")
    return seconds, len(report["findings"])


def peer(binary: Path, repo: Path) -> list[tuple[float, int]]:
    """kubeconform, one run per cluster (each cluster has its own schemas)."""
    runs = []
    for cluster in CLUSTERS:
        location = KUBECONFORM_TEMPLATE.format(root="schemas", cluster=cluster)
        tenants = sorted(str(p.relative_to(repo)) for p in repo.glob(f"tenants/*/{cluster}"))
        folders = [f"clusters/{cluster}", *tenants]
        argv = [str(binary), "-strict", "-summary", "-output", "json"]
        argv += ["-skip", "ClusterProfile,TenantProfile", "-schema-location", location]
        seconds, proc = timed([*argv, *folders], repo)
        if proc.returncode != 0:
            raise SystemExit(f"kubeconform found problems or failed:\n{proc.stdout[-2000:]}")
        summary = json.loads(proc.stdout)["summary"]
        runs.append((seconds, int(summary["valid"])))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=1700)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binary = ensure_tool(ROOT / "testenv", "kubeconform", TOOLS["kubeconform"], log=print)
    with tempfile.TemporaryDirectory(prefix="kueue-gitops-bench-") as tmp:
        repo = Path(tmp)
        objects = generate(repo, args.tenants)
        print(f"corpus: {objects} objects, {args.tenants} tenants on {len(CLUSTERS)} clusters")
        print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
        our_times, peer_times, our_cpu, peer_cpu = [], [], [], []
        for _ in range(args.rounds):
            seconds, findings = ours(repo)
            our_times.append(seconds)
            our_cpu.append(CPU[-1])
            runs = peer(binary, repo)
            peer_cpu.append(sum(CPU[-len(runs) :]))
            checked = sum(n for _, n in runs)
            if checked != objects:
                raise SystemExit(f"kubeconform validated {checked} objects, expected {objects}")
            peer_times.append(sum(s for s, _ in runs))
        mine, theirs = statistics.median(our_times), statistics.median(peer_times)
        print(
            f"kueue-gitops validate: {mine:.2f} s, {objects / mine:,.0f} objects/s "
            f"(schema + CEL + version contract + policy checks; {findings} policy findings)"
        )
        print(
            f"kubeconform -strict:   {theirs:.2f} s, {objects / theirs:,.0f} objects/s "
            "(schema only)"
        )
        print(f"ratio (ours / kubeconform, objects/s): {theirs / mine:.2f}")
        cpu_mine, cpu_theirs = statistics.median(our_cpu), statistics.median(peer_cpu)
        print(
            f"CPU seconds: ours {cpu_mine:.2f}, kubeconform {cpu_theirs:.2f}; "
            f"ratio per CPU-second {cpu_theirs / cpu_mine:.2f}"
        )


if __name__ == "__main__":
    main()
