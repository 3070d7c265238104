"""Drift's repository side (auditor/drift/comparer.py): what a forked child loads and finds is
what this process does; a child that fails leaves this one to do it; validate's cache is read and
filled; the shape check is shared across a fleet's clusters."""

from __future__ import annotations

import collections
import typing as t
from pathlib import Path

import pytest

from auditor.drift import comparer, reading, shapes
from auditor.drift.reading import Listed
from auditor.k8s.objects import RBAC_KINDS
from auditor.model import Finding
from auditor.repo import manifests
from auditor.repo.layout import Repository
from auditor.repo.profiles import PROFILE_FILE
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator
from tests.estate import ESTATE
from tests.unit.drift.repo_as_live import RepoAsLive, live_objects

CLUSTERS = ["gpu-prod", "gpu-staging"]


def _result(comparing: comparer.Comparer) -> tuple[list[t.Any], ...]:
    """The plans, the repository's findings and each cluster's, nothing read of it (so every
    repo object is missing): all the repository side gives."""
    plans = comparing.early()
    for name in CLUSTERS:
        comparing.put((name, Listed(plans[name][-1].kind, [])))
    loaded, compared = comparing.result()
    shown = [[f.to_json() for f in found] for found, _ in compared.values()]
    return [[(p.api_version, p.kind) for p in plans[n]] for n in CLUSTERS], _json(loaded), shown


def _json(found: list[Finding]) -> list[dict[str, t.Any]]:
    return [f.to_json() for f in found]


def _here(repo_copy: Path) -> tuple[list[t.Any], ...]:
    return _result(comparer.start(Repository.open(repo_copy), CLUSTERS, None, fork=False))


def test_the_forked_repository_side_is_this_processs(repo_copy: Path) -> None:
    comparing = comparer.start(Repository.open(repo_copy), CLUSTERS, None)
    assert comparing.forked  # a child was forked (this machine has two cores)
    assert _result(comparing) == _here(repo_copy)


def test_a_broken_manifest_is_reported_as_without_the_fork(repo_copy: Path) -> None:
    (repo_copy / "clusters/gpu-prod/broken.yaml").write_text("kind: [unclosed\n")
    got = _result(comparer.start(Repository.open(repo_copy), CLUSTERS, None))
    want = Repository.open(repo_copy).load(CLUSTERS).findings
    assert got == _here(repo_copy) and got[1] == _json(want) != []


def test_a_child_that_fails_leaves_this_process_to_prepare(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = Repository.open(repo_copy)
    real = Repository.load
    monkeypatch.setattr(Repository, "load", lambda *_a, **_k: 1 / 0)  # the child's copy fails
    comparing = comparer.start(repo, CLUSTERS, None, cache=False)
    monkeypatch.setattr(Repository, "load", real)
    assert comparing.forked and _result(comparing) == _here(repo_copy)


def test_a_run_after_another_parses_only_the_files_that_changed(
    repo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """drift reads and fills validate's cache: the first run fills it, the next parses only
    an edited file, and finds what a cold run does."""
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    first = comparer.start(Repository.open(repo_copy), CLUSTERS, None, cache=True)
    assert first.forked
    _result(first)  # the child loads, and fills the cache
    edited = repo_copy / "clusters/gpu-prod/cohorts.yaml"
    edited.write_text(edited.read_text().replace("name: ", "name: x", 1))
    parsed: list[str] = []
    real = manifests.load_bytes

    def counting(data: bytes, path: str) -> t.Any:
        if not path.endswith(PROFILE_FILE):
            parsed.append(path)
        return real(data, path)

    monkeypatch.setattr(manifests, "load_bytes", counting)
    repo = Repository.open(repo_copy)
    again = _result(comparer.start(repo, CLUSTERS, None, cache=True, fork=False))
    assert parsed == ["clusters/gpu-prod/cohorts.yaml"]
    assert again == _here(repo_copy)


def test_without_the_cache_nothing_is_read_or_written_there(
    repo_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """drift --no-cache: the child reads and writes no pack (the schema validators the shape
    check compiles are cached apart, auditor/schemas/validator.py, as they were)."""
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    got = _result(comparer.start(Repository.open(repo_copy), CLUSTERS, None, cache=False))
    assert got == _here(repo_copy)
    assert not list((tmp_path / "cache").rglob("*.pickle"))
    _result(comparer.start(Repository.open(repo_copy), CLUSTERS, None, cache=True))
    assert list((tmp_path / "cache").rglob("*.pickle"))  # the same run with it fills it


def test_the_plan_reads_the_crds_and_the_selector_kinds_first(repo_copy: Path) -> None:
    """Every kind's comparison needs the schemas and the label readers (engine.SELECTOR_KINDS):
    read first, they let each other kind be compared as soon as its LIST ends."""
    plans, _, _ = _here(repo_copy)
    kinds = [k for _, k in plans[0]]
    assert kinds[0] == "CustomResourceDefinition"
    assert set(kinds[1:3]) == {"ClusterQueue", "ClusterRole"}
    assert len(kinds) == len(set(kinds)) and {"Namespace", "LocalQueue", "Node"} <= set(kinds)


def test_then_the_rbac_kinds_then_the_kinds_the_repository_holds_most_of(
    repo_copy: Path,
) -> None:
    """The RBAC part, the dearest comparison, is done while the big kinds are read; what is
    left after the last LIST is a small kind's (the Nodes: none in the repository)."""
    repo = Repository.open(repo_copy)
    desired = repo.load(["gpu-prod"]).for_cluster("gpu-prod")
    kinds = [p.kind for p in reading.plan(repo.cluster("gpu-prod"), desired)]
    context = 1 + sum(k in reading.SELECTOR_KINDS for k in kinds)  # the CRDs and those
    after = context + 3
    assert set(kinds[context:after]) == {"ClusterRoleBinding", "Role", "RoleBinding"}
    held = collections.Counter(r.kind for r in desired)
    counts = [held[k] for k in kinds[after:-1]]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    assert kinds[-1] == "Node"


def test_what_needs_no_repository_is_read_before_the_plan_is_waited_on(
    repo_copy: Path,
) -> None:
    repo = Repository.open(repo_copy)
    profile = repo.cluster("gpu-prod")
    cluster = RepoAsLive("gpu-prod", live_objects(repo, "gpu-prod"))
    asked_before: list[str] = []

    def planned() -> list[reading.Planned]:
        asked_before[:] = cluster.asked
        return reading.plan(profile, repo.load(["gpu-prod"]).for_cluster("gpu-prod"))

    sent: list[Listed] = []
    reading.read_cluster(cluster, profile, planned, sent.append)
    assert asked_before[0] == "CustomResourceDefinition"
    assert set(asked_before) == {"CustomResourceDefinition", "ClusterQueue", *RBAC_KINDS}
    assert sorted(cluster.asked) == sorted({p.kind for p in planned()})  # each kind once
    assert [s.kind for s in sent] == cluster.asked


def test_clusters_with_the_same_schemas_compile_each_kind_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a", "b"):
        (tmp_path / "schemas" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "schemas" / name).symlink_to(ESTATE / "schemas" / "gpu-prod")
    compiled_kinds: list[tuple[str, str]] = []
    real = ClusterValidator.kind_schema

    def counting(self: ClusterValidator, api_version: str, kind: str) -> object:
        compiled_kinds.append((api_version, kind))
        return real(self, api_version, kind)

    monkeypatch.setattr(ClusterValidator, "kind_schema", counting)
    repo = Repository.open(ESTATE)
    desired = repo.load(["gpu-prod"]).for_cluster("gpu-prod")
    compiled: shapes.Compiled = {}
    for name in ("a", "b"):
        catalog = SchemaCatalog(tmp_path / "schemas", name)
        sound, refused = shapes.sound(repo.cluster("gpu-prod"), catalog, desired, compiled)
        assert (len(sound), refused) == (len(desired), [])
    assert compiled_kinds  # the first cluster compiled its kinds; the second none again
    assert len(compiled_kinds) == len(set(compiled_kinds)) == len(compiled)
