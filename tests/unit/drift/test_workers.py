"""Drift's comparisons in forked workers: the findings of a run on one core, in its order."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from auditor import rules
from auditor.drift import engine, reading, workers
from auditor.model import Finding
from auditor.repo.layout import Repository
from tests.unit.drift.repo_as_live import RepoAsLive, live_objects

CLUSTERS = ["gpu-prod", "gpu-staging"]


def _tasks(repo: Repository) -> list[workers.Comparison]:
    """Both clusters' comparisons, each with drift: an object missing, one changed, one extra."""
    tasks = []
    for name in CLUSTERS:
        objects = live_objects(repo, name)
        del objects[3]
        queue = next(o for o in objects if o["kind"] == "LocalQueue")
        queue["spec"]["clusterQueue"] = "changed"
        profile = repo.cluster(name)
        extra = {"apiVersion": profile.kueue_api, "kind": "Cohort", "metadata": {"name": "x"}}
        objects.append(extra)
        desired = repo.load([name]).for_cluster(name)
        live = reading.read(RepoAsLive(name, objects), reading.kinds_to_read(profile, desired))
        schemas = reading.LiveSchemas(None, live.crds)
        tasks += [
            workers.Comparison(name, engine.compare_objects, (profile, desired, live, schemas)),
            workers.Comparison(
                name, engine.compare_aggregates, (profile, desired, live, schemas, repo.tenants)
            ),
        ]
    return tasks


def _shown(outcomes: dict[str, list[workers.Outcome]]) -> dict[str, list[object]]:
    return {
        c: [p if isinstance(p, str) else [f.to_json() for f in p] for p in parts]
        for c, parts in outcomes.items()
    }


def test_forked_workers_find_what_one_process_finds_in_its_order(repo_copy: Path) -> None:
    repo = Repository.open(repo_copy)
    alone = workers.run(_tasks(repo), jobs=1)
    forked = workers.run(_tasks(repo), jobs=2)
    assert list(forked) == CLUSTERS
    assert _shown(forked) == _shown(alone)
    changes = {
        f.change for parts in alone.values() for p in parts if isinstance(p, list) for f in p
    }
    assert {"missing", "modified", "unmanaged"} <= changes


def _pid(cluster: str) -> list[Finding]:
    rule = rules.of("auditor.drift.findings")["drift-admission-label"]
    return [Finding(rule, str(os.getpid()), cluster=cluster)]


def _bug(cluster: str) -> list[Finding]:
    raise KeyError(cluster)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bug_in_one_part_is_that_clusters_error(jobs: int) -> None:
    # With two jobs this process takes parts 0 and 2 (the bugs), a worker parts 1 and 3.
    tasks = [workers.Comparison(c, f, (c,)) for c in ("a", "b") for f in (_bug, _pid)]
    got = workers.run(tasks, jobs=jobs)
    for cluster in ("a", "b"):
        error, found = got[cluster]
        assert isinstance(found, list) and [f.cluster for f in found] == [cluster]
        assert (int(found[0].message) != os.getpid()) is (jobs > 1)  # forked: another process
        assert error == (
            f"internal error while comparing cluster {cluster}: KeyError: '{cluster}' "
            "(a bug in kueue-gitops; -v shows the traceback)"
        )


def test_the_objects_halves_are_the_whole_comparison_in_its_order(repo_copy: Path) -> None:
    repo = Repository.open(repo_copy)
    for task in _tasks(repo)[::2]:  # each cluster's objects part, with drift in both halves
        profile, desired, live, schemas = task.args[:4]
        whole = engine.compare_objects(profile, desired, live, schemas)
        halves = [
            *engine.compare_objects(profile, desired, live, schemas, (0, 2)),
            *engine.compare_objects(profile, desired, live, schemas, (1, 2)),
        ]
        assert [f.to_json() for f in halves] == [f.to_json() for f in whole]
        assert {f.change for f in whole} >= {"missing", "modified", "unmanaged"}
