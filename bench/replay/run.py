"""Time `plan --replay --engine sim`: a day's synthetic trace of 1k, 10k and 50k Workloads.

For each size, a trace over 24 h (`trace generate`, the cluster's tenants and priorities) runs
through the simulator built against the cluster's pinned Kueue, once per side as `plan --replay`
runs it (base and head are the same revision here: the time a pull request's check takes).
Printed per size: Workloads, Kueue's scheduling cycles, wall seconds for base+head, Workloads per
second, the simulator's peak memory (its max RSS), and the ratio to the goal (10,000 Workloads
base+head in 120 s). The anchor: Kueue's own performance harness admits 15,000 synthetic
Workloads in about 351 s of wall time, in real time (issue 28).

    .venv/bin/python bench/replay/run.py                  # gpu-prod, 1000,10000,50000
    .venv/bin/python bench/replay/run.py --sizes 1000 --cluster gpu-staging
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.replay import sim, synthetic, trace  # noqa: E402
from auditor.repo.layout import Repository  # noqa: E402
from auditor.sandbox.kueuesim import ensure_sim  # noqa: E402

GOAL_WORKLOADS, GOAL_SECONDS = 10_000, 120.0
HARNESS = 15_000 / 351  # Kueue's performance harness, Workloads per second (real time)


def _busy(made: trace.Trace) -> float:
    work = sum(sim.gpus_of(w.requests, w.pod_count) * w.run_seconds for w in made.workloads)
    return work / made.seconds


def _day(cluster: str, mixes: list[synthetic.TenantMix], n: int, busy: float) -> trace.Trace:
    """n Workloads over 24 h whose run times keep `busy` GPUs in use on average."""
    first = synthetic.generate(cluster, mixes, workloads=n, hours=24, seed=1, median_run=600.0)
    median = 600.0 * busy / _busy(first)
    return synthetic.generate(cluster, mixes, workloads=n, hours=24, seed=1, median_run=median)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", default="gpu-prod")
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument(
        "--busy-gpus",
        type=float,
        default=40.0,
        help="the trace's mean GPUs in use (run times scaled to it): a day the cluster can "
        "keep up with; an overloaded one grows a backlog Kueue retries at every change",
    )
    args = parser.parse_args()
    repo = Repository.open(ROOT)
    binary, release = ensure_sim(ROOT / "testenv", repo.cluster(args.cluster).kueue_version)
    mixes = synthetic.mixes_from(repo, args.cluster)
    goal = f"goal {GOAL_WORKLOADS} Workloads base+head in {GOAL_SECONDS:.0f} s"
    print(f"{args.cluster}, Kueue {release}; {goal}; Kueue's harness: {HARNESS:.0f} Workloads/s")
    print(f"{'workloads':>10} {'cycles':>9} {'base+head s':>12} {'wl/s':>8} {'peak MiB':>9} "
          f"{'vs harness':>10}")  # fmt: skip
    for n in (int(v) for v in args.sizes.split(",")):
        made = _day(args.cluster, mixes, n, args.busy_gpus)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "in.json"
            path.write_text(json.dumps(sim.sim_input(repo, args.cluster, made)))
            started, cycles = time.monotonic(), 0
            for _ in ("base", "head"):
                out = subprocess.run([str(binary), "-in", str(path)], capture_output=True,
                                     text=True, check=True)  # fmt: skip
                cycles = json.loads(out.stdout)["cycles"]
            took = time.monotonic() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        rate = 2 * n / took
        print(f"{n:>10} {cycles:>9} {took:>12.1f} {rate:>8.0f} {peak:>9.0f} "
              f"{rate / HARNESS:>9.1f}x")  # fmt: skip
        if n == GOAL_WORKLOADS:
            print(f"{'':>10} goal ratio (120 s over measured): {GOAL_SECONDS / took:.2f}")


if __name__ == "__main__":
    main()
