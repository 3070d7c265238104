"""Kueue's own scheduler performance harness through the simulation, beside its expectations.

For each harness configuration (`trace import --kueue-harness NAME`: the estate and the trace,
read from the pinned Kueue module), one side runs through `kueuesim` (Kueue's own scheduler on a
logical clock, as `plan replay --engine sim` runs each side). Printed: the real seconds the
side took, the simulator's peak memory (its max RSS) and scheduling cycles, then per Workload
class the Workloads admitted of those submitted, the mean time to admission (from submission to
the first admission) and the evictions its Workloads suffered, the mean time beside the
harness's rangespec.yaml (its expected maxima, calibrated on Kueue's CI running the real Kueue
against an API server, its client held to 50 requests a second: latencies the simulation has
none of, so equal numbers are not expected), and the logical seconds the simulated run lasted
beside the harness's maxWallMs.

    .venv/bin/python bench/harness/run.py                        # baseline
    .venv/bin/python bench/harness/run.py --harness large-scale --deadline 600
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.errors import SandboxError  # noqa: E402
from auditor.replay import sim, trace  # noqa: E402
from auditor.repo.layout import Repository  # noqa: E402
from auditor.sandbox import harness, releases  # noqa: E402
from auditor.sandbox.kueuesim import ensure_sim  # noqa: E402

RSS = re.compile(r"max RSS (\d+) MiB")


def _load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def one(name: str, deadline: float) -> None:
    module, release = releases.source(ROOT / "testenv", None)
    expected = harness.load(module, name, release).rangespec
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / name
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "auditor", "trace", "import", "--kueue-harness", name,
             "--out-dir", str(out)],
            check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        imported = time.monotonic() - started
        repo = Repository.open(out)
        made = trace.read(out / "trace.json")
        cluster = made.cluster
        binary, built = ensure_sim(ROOT / "testenv", repo.cluster(cluster).kueue_version)
        side = sim.prepare(binary, built, repo, cluster, made, label="base")
        lines: list[str] = []
        before = _load()
        print(f"{name}: Kueue {built}, {len(made.workloads)} Workloads over {made.seconds:g} s, "
              f"imported in {imported:.1f} s; simulating one side (deadline {deadline:.0f} s), "
              f"load {before}", flush=True)  # fmt: skip
        started = time.monotonic()
        try:
            runs = sim.simulate([side], made, log=lines.append, within=deadline)
        except SandboxError as exc:
            print(f"  stopped after {time.monotonic() - started:.0f} s: {exc}")
            return
        took = time.monotonic() - started
    run = runs["base"]
    peak = max((int(m.group(1)) for line in lines if (m := RSS.search(line))), default=0)
    print(f"  {took:.1f} s real, peak {peak} MiB, {run.cycles} cycles, load -> {_load()}")
    wall = expected.get("cmd", {}).get("maxWallMs")
    shown = "-" if wall is None else f"{wall:,}"
    print(f"  simulated run lasted {run.end_seconds * 1000:,.0f} ms of Kueue's clock; "
          f"harness maxWallMs {shown} (real time, real Kueue)")  # fmt: skip
    limits = expected.get("wlClassesMaxAvgTimeToAdmissionMs", {})
    print(f"  {'class':<8} {'submitted':>9} {'admitted':>8} {'mean to admission ms':>21} "
          f"{'rangespec max ms':>17} {'evicted':>8}")  # fmt: skip
    classes = sorted({w.traced.priority_class or "" for w in run.workloads})
    for klass in classes:
        mine = [w for w in run.workloads if w.traced.priority_class == klass]
        waits = [w.admitted - w.traced.submitted_at for w in mine if w.admitted is not None]
        mean = 1000 * sum(waits) / len(waits) if waits else float("nan")
        limit = limits.get(klass)
        evicted = sum(w.preemptions for w in mine)
        print(f"  {klass:<8} {len(mine):>9} {len(waits):>8} {mean:>21,.0f} "
              f"{'-' if limit is None else f'{limit:,}':>17} {evicted:>8}")  # fmt: skip
    usage = expected.get("clusterQueueClassesMinUsage")
    if usage:
        print(f"  rangespec clusterQueueClassesMinUsage {usage} (%): not measured here")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--harness", default="baseline", help="comma-separated configurations")
    parser.add_argument(
        "--deadline", type=float, default=600.0, help="real seconds a side may take"
    )
    args = parser.parse_args()
    for name in args.harness.split(","):
        one(name, args.deadline)


if __name__ == "__main__":
    main()
