"""The resident validate against kubeconform: `validate` after a one-file change, answered by the
repository's resident (auditor/lsp/resident.py), beside a cold run, the cached warm run and
kubeconform, on the corpus and with the helpers of bench/validate/run.py.

    python bench/validate/resident.py [--tenants N | --objects N] [--rounds R]

The resident is started once before the rounds (its first load is not timed: an editor or a
pre-commit hook pays it once a session). Each round edits one file (run.py's edit), then runs
in turn: `validate --no-cache --no-resident` (cold), kubeconform, `validate --no-resident` (warm,
the file cache), and a plain `validate`, which the resident answers. That run's CPU seconds are
the client's (the process and its children, as run.py counts) plus what the resident spent
answering (its /proc/PID/stat before and after); its findings must be the cold run's. Prints
medians and the same-run ratios (kubeconform's time over ours: above 1.0 we are faster).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from auditor.lsp import ask
from auditor.sandbox.build import TOOLS, ensure_tool
from bench.validate.generate import CLUSTERS, ROOT, generate
from bench.validate.run import Run, corpus_arguments, edit, median, ours, peer


def cpu_of(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    """The resident's resident set now (what keeping the repository loaded costs)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def stop(pid: int, deadline: float = 60.0) -> None:
    os.kill(pid, signal.SIGTERM)
    fd = os.pidfd_open(pid)
    try:
        if not select.select([fd], [], [], deadline)[0]:
            raise SystemExit(f"the resident (pid {pid}) did not exit on SIGTERM")
    finally:
        os.close(fd)


def answered(repo: Path, env: dict[str, str]) -> str:
    """What a plain run says on stderr (it must say the resident answered)."""
    argv = [sys.executable, "-m", "auditor", "validate", "-o", "json"]
    return subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True).stderr


def rounds(
    repo: Path, env: dict[str, str], binary: Path, pid: int, count: int, objects: int
) -> dict[str, list[Run]]:
    runs: dict[str, list[Run]] = {"cold": [], "kubeconform": [], "warm": [], "resident": []}
    for round_ in range(count):
        edit(repo, round_)
        run, cold = ours(repo, env, "--no-cache", "--no-resident")
        runs["cold"].append(run)
        run, checked = peer(binary, repo, env)
        if checked != objects:
            raise SystemExit(f"kubeconform validated {checked} objects, expected {objects}")
        runs["kubeconform"].append(run)
        run, warm = ours(repo, env, "--no-resident")
        runs["warm"].append(run)
        before = cpu_of(pid)
        run, resident = ours(repo, env)
        run.cpu += cpu_of(pid) - before
        runs["resident"].append(run)
        if warm != cold or resident != cold:
            raise SystemExit(f"round {round_}: the findings differ from the cold run's")
        said = answered(repo, env)  # the timed run was the resident's (it answers alike)
        if "answered by the resident validate" not in said:
            raise SystemExit(f"round {round_}: the resident did not answer:\n{said}")
    return runs


def main() -> None:
    tenants, repeat = corpus_arguments(__doc__.splitlines()[0])
    binary = ensure_tool(ROOT / "testenv", "kubeconform", TOOLS["kubeconform"], log=print)
    with tempfile.TemporaryDirectory(prefix="kueue-gitops-bench-") as tmp:
        repo, cache = Path(tmp) / "repo", Path(tmp) / "cache"
        env = {**os.environ, "KUEUE_GITOPS_CACHE": str(cache)}
        os.environ["KUEUE_GITOPS_CACHE"] = str(cache)  # where ask.start puts the resident
        objects = generate(repo, tenants)
        print(f"corpus: {objects} objects, {tenants} tenants on {len(CLUSTERS)} clusters")
        ours(repo, env, "--no-resident")  # fills the cache
        pid = ask.start(repo)
        try:
            load_before = os.getloadavg()
            runs = rounds(repo, env, binary, pid, repeat, objects)
            load_after = os.getloadavg()
            held = rss_mib(pid)
        finally:
            stop(pid)
    report(runs, objects, load_before, load_after, repeat)
    print(f"the resident holds {held:.0f} MiB (its resident set after the rounds)")


def report(
    runs: dict[str, list[Run]],
    objects: int,
    load_before: tuple[float, float, float],
    load_after: tuple[float, float, float],
    count: int,
) -> None:
    medians = {key: median(found) for key, found in runs.items()}
    k = medians["kubeconform"]
    print(
        f"machine: {os.cpu_count()} cores; load average (1, 5, 15 min) before "
        f"{', '.join(f'{x:.1f}' for x in load_before)}, after "
        f"{', '.join(f'{x:.1f}' for x in load_after)}; {count} rounds, medians\n"
    )
    print("| objects | run | wall | objects/s | CPU s | ratio (wall) | ratio (CPU) |")
    print("|---|---|---|---|---|---|---|")
    names = {
        "kubeconform": "kubeconform -strict",
        "cold": "ours, cold (`--no-cache --no-resident`)",
        "warm": "ours, warm cache (one file changed, `--no-resident`)",
        "resident": "ours, resident (one file changed; client + resident CPU)",
    }
    for key, name in names.items():
        r = medians[key]
        ratio = " | " if r is k else f"**{k.wall / r.wall:.2f}** | {k.cpu / r.cpu:.2f}"
        print(
            f"| {objects:,} | {name} | {r.wall:.2f} s | {objects / r.wall:,.0f} | "
            f"{r.cpu:.2f} | {ratio} |"
        )
    print("\nfindings: cold, warm and resident identical every round")


if __name__ == "__main__":
    main()
