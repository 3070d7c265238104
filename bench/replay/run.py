"""Time `plan replay --engine sim`: a day's synthetic trace of 1k, 10k and 50k Workloads.

For each size, a trace over 24 h (`trace generate`'s generator: the cluster's tenants and
priorities, a diurnal curve and bursts) runs through the simulator built against the cluster's
pinned Kueue, base and head at once as `plan replay` runs them (base and head are the same
revision here: the time a pull request's check takes). Printed per size: Workloads, Kueue's
scheduling cycles per side, wall seconds for base+head, Workloads per wall second (both sides'),
the simulator's peak memory (its max RSS, the larger side), and the ratio to Kueue's own
performance harness, the anchor: 15,000 synthetic Workloads in about 351 s of wall time, in real
time (issue 28). The goal: 10,000 Workloads base+head in 120 s (60 s wanted). The load average is
printed before and after each size: the machine is shared.

    .venv/bin/python bench/replay/run.py                  # gpu-prod, 1000,10000,50000
    .venv/bin/python bench/replay/run.py --sizes 1000 --cluster gpu-staging
    .venv/bin/python bench/replay/run.py --sizes 10000 --inputs /tmp/in   # keep the inputs

With --inputs DIR the simulator's input for each size is kept as DIR/<size>.json, to profile one
side: `kueuesim -in DIR/10000.json -out /dev/null -cpuprofile cpu.prof`, then
`go tool pprof -top -cum cpu.prof` (the binary: ~/.cache/kueue-gitops/kueuesim/<release>-<key>/).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.replay import sim, synthetic, trace  # noqa: E402
from auditor.repo.layout import Repository  # noqa: E402
from auditor.sandbox.kueuesim import ensure_sim  # noqa: E402

GOAL_WORKLOADS, GOAL_SECONDS, WANTED_SECONDS = 10_000, 120.0, 60.0
HARNESS = 15_000 / 351  # Kueue's performance harness, Workloads per second (real time)
RSS = re.compile(r"max RSS (\d+) MiB")


def _busy(made: trace.Trace) -> float:
    work = sum(sim.gpus_of(w.requests, w.pod_count) * w.run_seconds for w in made.workloads)
    return work / made.seconds


def _day(cluster: str, mixes: list[synthetic.TenantMix], n: int, busy: float) -> trace.Trace:
    """n Workloads over 24 h whose run times keep `busy` GPUs in use on average."""
    first = synthetic.generate(cluster, mixes, workloads=n, hours=24, seed=1, median_run=600.0)
    median = 600.0 * busy / _busy(first)
    return synthetic.generate(cluster, mixes, workloads=n, hours=24, seed=1, median_run=median)


def _load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", default="gpu-prod")
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument(
        "--busy-gpus",
        type=float,
        default=20.0,
        help="the trace's mean GPUs in use (run times scaled to it; gpu-prod has 64, its "
        "tenants' quotas less): the bursts still grow backlogs, which Kueue retries at every "
        "change, and the cycles grow with them",
    )
    parser.add_argument("--inputs", type=Path, help="keep each size's simulator input here")
    args = parser.parse_args()
    repo = Repository.open(ROOT)
    binary, release = ensure_sim(ROOT / "testenv", repo.cluster(args.cluster).kueue_version)
    mixes = synthetic.mixes_from(repo, args.cluster)
    goal = f"goal {GOAL_WORKLOADS} Workloads base+head in {GOAL_SECONDS:.0f} s"
    print(f"{args.cluster}, Kueue {release}, {args.busy_gpus:g} GPUs busy on average; {goal}; "
          f"Kueue's harness: {HARNESS:.0f} Workloads/s; {os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'workloads':>10} {'cycles/side':>12} {'base+head s':>12} {'wl/s':>8} "
          f"{'peak MiB':>9} {'vs harness':>10}  load before -> after")  # fmt: skip
    for n in (int(v) for v in args.sizes.split(",")):
        made = _day(args.cluster, mixes, n, args.busy_gpus)
        side = sim.prepare(binary, release, repo, args.cluster, made, label="base")
        if args.inputs:
            args.inputs.mkdir(parents=True, exist_ok=True)
            (args.inputs / f"{n}.json").write_text(side.document)
        head = dataclasses.replace(side, label="head")
        lines: list[str] = []
        before = _load()
        started = time.monotonic()
        runs = sim.simulate([side, head], made, log=lines.append)
        took = time.monotonic() - started
        peak = max((int(m.group(1)) for line in lines if (m := RSS.search(line))), default=0)
        rate = 2 * n / took
        print(f"{n:>10} {runs['base'].cycles:>12} {took:>12.1f} {rate:>8.0f} {peak:>9} "
              f"{rate / HARNESS:>9.1f}x  {before} -> {_load()}")  # fmt: skip
        if n == GOAL_WORKLOADS:
            print(f"{'':>10} goal ratio (120 s over measured): {GOAL_SECONDS / took:.2f}; "
                  f"wanted (60 s): {WANTED_SECONDS / took:.2f}")  # fmt: skip
        if runs["base"].cycles != runs["head"].cycles:
            print(f"{'':>10} base and head differ on one revision: not deterministic")


if __name__ == "__main__":
    main()
