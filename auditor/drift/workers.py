"""Drift's comparisons, run across the cores in forked worker processes.

Reading a cluster is I/O and runs in threads (auditor/drift/engine.py); comparing is pure
Python and would take turns on one core. The RBAC powers are judged while the other kinds are
still read; once every LIST is done and the readers' threads have ended, the rest of each
cluster's comparison, in parts (its objects in two halves; capacity and CRDs), runs in this
process and a pool of forked workers, one per further core, as validate's clusters do: this
process takes every count-th part, a worker inherits what was read and sends back only its
findings (pickled), and the parent puts them in the order a run on one core gives. A part
that trips a bug comes back as its one-line error (the cluster is then incomplete); a pool that
breaks (a worker killed, a finding that does not pickle) makes the parent compare on its own,
so nothing is lost.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
import typing as t
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from auditor.errors import internal_error, processing
from auditor.live import forking
from auditor.model import Finding

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
    for task, outcome in zip(tasks, _outcomes(tasks, jobs), strict=True):
        out.setdefault(task.cluster, []).append(outcome)
    return out


_TASKS: list[Comparison] | None = None  # a forked worker inherits them: only indexes are sent


def _outcomes(tasks: list[Comparison], jobs: int | None) -> list[Outcome]:
    count = min(len(tasks), jobs or os.cpu_count() or 1)
    if count < 2 or not forking.alone():
        return [here(task) for task in tasks]
    global _TASKS
    _TASKS = tasks
    mine = range(0, len(tasks), count)  # this process takes every count-th part itself
    gc.freeze()  # what was read is not walked by the collector meanwhile (nor copied by it)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(count - 1, mp_context=context, initializer=gc.disable) as pool:
            theirs = {i: pool.submit(_job, i) for i in range(len(tasks)) if i not in mine}
            done = {i: here(tasks[i]) for i in mine}
            return [done[i] if i in done else theirs[i].result() for i in range(len(tasks))]
    except Exception:  # a worker killed, a result that does not pickle: compare here
        log.debug("the comparison workers failed; comparing in this process", exc_info=True)
        return [here(task) for task in tasks]
    finally:
        _TASKS = None
        gc.unfreeze()


def _job(index: int) -> Outcome:
    assert _TASKS is not None
    return here(_TASKS[index])


def here(task: Comparison) -> Outcome:
    """One part compared in this process."""
    try:
        with processing(f"comparing cluster {task.cluster}"):
            return task.compare(*task.args)
    except Exception as exc:  # one cluster's bug must not hide the others' drift
        log.debug("comparing cluster %s failed", task.cluster, exc_info=True)
        return internal_error(exc)
