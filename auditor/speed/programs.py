"""One run of an executable, as either engine of the parallel seam carries it: the local cores
(auditor/speed/parallel.py) or Ray tasks (auditor/speed/ray.py). Both import this module and
neither the other (an import-linter contract), so a run is described once.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Program:
    """One run of an executable: all an engine needs to carry it elsewhere."""

    binary: Path
    args: tuple[str, ...]
    stdin: str
    timeout: float  # real seconds; the run is stopped past them


@dataclass(frozen=True)
class Finished:
    returncode: int | None  # None: stopped at its timeout
    stdout: str
    stderr: str
    seconds: float


def execute(program: Program) -> Finished:
    """`program` run here, to its end or its timeout."""
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [str(program.binary), *program.args],
            input=program.stdin,
            capture_output=True,
            text=True,
            check=False,
            timeout=program.timeout,
        )
    except subprocess.TimeoutExpired:  # run() has killed it
        return Finished(None, "", "", time.monotonic() - started)
    return Finished(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)
