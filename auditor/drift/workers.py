"""Drift's comparisons in parts, shared among processes across the cores (speed/parallel.py).

Reading a cluster is I/O and runs in threads (auditor/drift/engine.py); comparing is pure
Python and would take turns on one core. Once every LIST is done and the readers' threads have
ended, each cluster's comparison, in parts (its objects in two halves; capacity and CRDs), is
one list of `Comparison`s run by the parallel seam; the findings come back in the order a run
on one core gives. A part that trips a bug comes back as its one-line error (the cluster is then
incomplete).
"""

from __future__ import annotations

import logging
import typing as t
from dataclasses import dataclass

from auditor.errors import internal_error, processing
from auditor.model import Finding
from auditor.speed import parallel

log = logging.getLogger(__name__)
Outcome = list[Finding] | str  # the findings, or the one-line error of a bug


@dataclass(frozen=True)
class Comparison:
    """One part of one cluster's comparison: `compare(*args)`."""

    cluster: str
    compare: t.Callable[..., list[Finding]]
    args: tuple[t.Any, ...]


def run(tasks: list[Comparison], jobs: int | None = None) -> dict[str, list[Outcome]]:
    """Each cluster's outcomes, its parts in the order given."""
    out: dict[str, list[Outcome]] = {}
    for task, outcome in zip(tasks, parallel.run(here, tasks, jobs=jobs), strict=True):
        out.setdefault(task.cluster, []).append(outcome)
    return out


def here(task: Comparison) -> Outcome:
    """One part compared in this process."""
    try:
        with processing(f"comparing cluster {task.cluster}"):
            return task.compare(*task.args)
    except Exception as exc:  # one cluster's bug must not hide the others' drift
        log.debug("comparing cluster %s failed", task.cluster, exc_info=True)
        return internal_error(exc)
