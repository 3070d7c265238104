"""Time an overloaded day through `plan replay --engine sim` (issue 38's goal: 120 s base+head).

The frozen test estate (tests/data/estate) in a scratch git repository; the head halves team-a's
a100 GPUs on gpu-staging (4 -> 2). `trace generate --cluster gpu-staging --workloads 10000
--hours 24` is more work than the cluster's GPUs can run, so a backlog of thousands stands all
day. Printed: base+head wall seconds, the largest process's peak memory, the exit code, the
load before and after, and the report's backlog lines (what the simulation says of the standing
queue).

    .venv/bin/python bench/replay/overloaded.py [--workloads 10000] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from auditor.repo.layout import Repository  # noqa: E402
from auditor.sandbox.kueuesim import ensure_sim  # noqa: E402

ESTATE = ROOT / "tests" / "data" / "estate"
QUEUES = "clusters/gpu-staging/clusterqueues.yaml"
HALVED = ('            - name: nvidia.com/gpu\n              nominalQuota: "4"',
          '            - name: nvidia.com/gpu\n              nominalQuota: "2"')  # fmt: skip


def _git(repo: Path, *argv: str) -> None:
    subprocess.run(["git", "-C", str(repo), *argv], check=True, capture_output=True)


def _cli(repo: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "auditor", "--repo", str(repo), *argv]
    return subprocess.run(command, capture_output=True, text=True, check=False)


def _load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = Path(scratch) / "estate"
        shutil.copytree(ESTATE, repo)
        _git(repo, "init", "-q", "-b", "main")
        _git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com", "add", "-A")
        _git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com",
             "commit", "-qm", "base")  # fmt: skip
        queues = repo / QUEUES
        text = queues.read_text()
        assert text.count(HALVED[0]) >= 1, "team-a's a100 GPUs are no longer 4"
        queues.write_text(text.replace(HALVED[0], HALVED[1], 1))
        _git(repo, "-c", "user.name=bench", "-c", "user.email=bench@example.com",
             "commit", "-qam", "halve team-a's a100 GPUs")  # fmt: skip
        day = Path(scratch) / "day.json"
        made = _cli(repo, "trace", "generate", "--cluster", "gpu-staging", "--workloads",
                    str(args.workloads), "--hours", "24", "--seed", str(args.seed),
                    "--out", str(day))  # fmt: skip
        if made.returncode:
            sys.exit(f"trace generate failed: {made.stderr}")
        # the simulator built before the clock starts (a first build is not the plan's time)
        ensure_sim(ROOT / "testenv", Repository.open(repo).cluster("gpu-staging").kueue_version)
        before = _load()
        started = time.monotonic()
        done = _cli(repo, "plan", "replay", str(day), "--base", "HEAD~1", "--head", "HEAD",
                    "--cluster", "gpu-staging")  # fmt: skip
        took = time.monotonic() - started
        # the largest process this script waited for, the simulators included (KiB on Linux)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
        print(
            f"{args.workloads} Workloads, gpu-staging, team-a's a100 GPUs 4 -> 2: base+head "
            f"{took:.1f} s (goal 120 s), peak {peak} MiB, exit {done.returncode}; "
            f"load {before} -> {_load()}"
        )
        for line in done.stdout.splitlines():
            if "backlog" in line:
                print(line.strip())


if __name__ == "__main__":
    main()
