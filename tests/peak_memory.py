"""Run a command in a process of its own and measure its peak resident memory, as the kernel
counts it, for the tests that hold a memory ceiling (docs/contracts.md, "Input limits").

A process's ru_maxrss keeps the largest resident set of every image it ran, the one it was
forked from included: a child of a test runner that has grown to 400 MiB over a suite reports
400 MiB whatever it does itself. So the command is started by a small launcher (a bare Python
of a few MiB), which forks it, waits for it and reports what the kernel measured of it alone.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import typing as t
from dataclasses import dataclass
from pathlib import Path

_LAUNCHER = """
import json, os, resource, sys
spec = json.loads(sys.argv[1])
pid = os.fork()
if pid == 0:
    if spec["address_space"]:
        limit = spec["address_space"]
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.chdir(spec["cwd"])
    os.execve(spec["argv"][0], spec["argv"], spec["env"])
_, status, usage = os.wait4(pid, 0)
with open(spec["result"], "w") as f:
    json.dump({"code": os.waitstatus_to_exitcode(status), "peak": usage.ru_maxrss * 1024}, f)
"""


@dataclass(frozen=True)
class Measured:
    code: int  # the command's exit code
    peak: int  # bytes: its largest resident set


def run(
    argv: t.Sequence[str],
    *,
    stdout: t.IO[t.Any],
    stderr: t.IO[t.Any] | int,
    seconds: float,
    env: t.Mapping[str, str] | None = None,
    cwd: Path | None = None,
    address_space: int | None = None,
) -> Measured:
    """`argv` (its first element a path), its output to `stdout` and `stderr`, capped at
    `address_space` bytes; killed with its launcher after `seconds` (AssertionError)."""
    result = Path(stdout.name).with_suffix(".measured.json")
    spec = {
        "argv": list(argv),
        "env": dict(os.environ if env is None else env),
        "cwd": str(cwd or Path.cwd()),
        "address_space": address_space,
        "result": str(result),
    }
    launcher = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(spec)],
        stdout=stdout, stderr=stderr, start_new_session=True,
    )  # fmt: skip
    try:
        launcher.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(launcher.pid, signal.SIGKILL)
        launcher.wait()
        raise AssertionError(f"{' '.join(argv)[:200]} still ran after {seconds:g}s") from None
    measured = json.loads(result.read_text())
    return Measured(measured["code"], measured["peak"])
