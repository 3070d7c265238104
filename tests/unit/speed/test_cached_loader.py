"""The loader served from the user cache gives what a cold load gives: the same objects, lines
(of fields too, derived again from the file) and findings; an edited file is read again."""

from __future__ import annotations

import os
import time
import typing as t
from pathlib import Path

import pytest

from auditor.drift import comparer
from auditor.model import Finding
from auditor.repo import cached
from auditor.repo.cache import FileCache
from auditor.repo.layout import Loaded, Repository
from auditor.validate.engine import validate

CLUSTER = "c1"
PROFILE = """\
apiVersion: kueue-gitops.io/v1alpha1
kind: ClusterProfile
metadata:
  name: c1
spec:
  context: c1
  owners: ["@example/platform"]
  kueue:
    apiVersions: [v1beta2]
    version: v0.19.2
  admissionLabel: {key: example.com/kueue, value: enabled}
  capacity: {}
"""
QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: a
spec:
  cohortName: all
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: b   # a comment the fast reader leaves out
spec: {cohortName: all}
"""
BROKEN = "apiVersion: v1\nkind: [unclosed\n"
NO_NAME = "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    files = {
        f"clusters/{CLUSTER}/profile.yaml": PROFILE,
        f"clusters/{CLUSTER}/queues.yaml": QUEUES,
        f"clusters/{CLUSTER}/broken.yaml": BROKEN,
        f"clusters/{CLUSTER}/no-name.yaml": NO_NAME,
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "tenants").mkdir()
    age(root)
    return root


def age(root: Path) -> None:
    """Older than the racy-stat window, so the cache trusts the files' stat."""
    past = time.time() - 600
    for path in root.rglob("*"):
        os.utime(path, (past, past))


def shown(loaded: Loaded) -> tuple[list[tuple[str, int, dict[str, t.Any], int]], list[Finding]]:
    objects = [
        (r.file, r.line, r.body, r.line_of(["spec", "cohortName"]))
        for r in loaded.for_cluster(CLUSTER)
    ]
    return objects, loaded.findings


def load(root: Path) -> tuple[Loaded, FileCache]:
    cache = FileCache(root, CLUSTER, "tool", "schemas")
    loaded = cached.load(Repository.open(root), [CLUSTER], {CLUSTER: cache})
    cache.save()
    return loaded, cache


def test_a_load_from_the_cache_is_the_cold_load(root: Path) -> None:
    cold = Repository.open(root).load([CLUSTER])
    first, cache = load(root)
    assert not cache.old  # nothing cached yet: every file read and stored
    again, cache = load(root)
    assert cache.old.keys() == cache.new.keys()  # every file served
    assert shown(first) == shown(again) == shown(cold)
    objects, findings = shown(cold)
    assert [line for _f, line, _b, _field in objects] == [1, 8]
    assert [field for _f, _l, _b, field in objects] == [6, 12]
    assert {f.rule.id for f in findings} == {"yaml-syntax", "missing-identity"}


def test_an_edited_file_is_read_again(root: Path) -> None:
    load(root)
    queues = root / f"clusters/{CLUSTER}/queues.yaml"
    queues.write_text(QUEUES.replace("name: b ", "name: renamed "))
    edited, _ = load(root)
    assert shown(edited) == shown(Repository.open(root).load([CLUSTER]))
    assert [r.name for r in edited.for_cluster(CLUSTER)] == ["a", "renamed"]


def test_drift_reads_the_packs_validate_filled(root: Path) -> None:
    """validate and drift open each cluster's pack one way (auditor/speed/packs.py): a drift
    after a validate loads every file from it (in drift's repository side, drift/comparer.py)."""
    validate(Repository.open(root), root / "schemas", cache=True)
    caches = comparer.file_caches(Repository.open(root), [CLUSTER])
    [pack] = caches.values()
    assert sorted(pack.old) == sorted(
        f"clusters/{CLUSTER}/{name}" for name in ("broken.yaml", "no-name.yaml", "queues.yaml")
    )
    loaded = cached.load(Repository.open(root), [CLUSTER], caches)
    assert shown(loaded) == shown(Repository.open(root).load([CLUSTER]))
