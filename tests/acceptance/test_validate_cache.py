"""`validate`'s cache of per-file results: what a cached run reports is what a cold run reports,
and nothing is served for a changed file, a changed schema or another tool version."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import time
import typing as t
from pathlib import Path

import pytest

from auditor import cache, rules
from auditor.model import Finding
from auditor.repo import cache as repo_cache
from auditor.repo import manifests
from auditor.schemas.validator import UNKNOWN_FIELD_RULES, Verdict
from tests.conftest import ROOT, run_line
from tests.estate import copy_estate

LOCALQUEUE = "tenants/team-a/gpu-prod/localqueues.yaml"
NAMESPACE = "tenants/team-a/gpu-prod/namespace.yaml"
LQ_SCHEMA = "schemas/gpu-prod/kueue.x-k8s.io/localqueue_v1beta2.json"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the repository, its files older than the racy-stat window so the
    stat fast path is live, and a cache directory of its own."""
    repo = tmp_path / "repo"
    copy_estate(repo, "clusters", "tenants", "schemas")
    age(repo)
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    return repo


def age(repo: Path, seconds: float = 600) -> None:
    past = time.time() - seconds
    for path in repo.rglob("*"):
        os.utime(path, (past, past))


def findings(repo: Path, *flags: str) -> list[dict[str, t.Any]]:
    result = run_line(["kueue-gitops", "--repo", str(repo), "validate", "-o", "json", *flags])
    assert result.exit_code in (0, 1), result.output
    return t.cast(list[dict[str, t.Any]], json.loads(result.stdout)["findings"])


def same_with_and_without_cache(repo: Path) -> list[dict[str, t.Any]]:
    cached = findings(repo)
    assert cached == findings(repo, "--no-cache")
    return cached


def pack(cluster: str = "gpu-prod") -> Path:
    [found] = repo_cache.validate_cache_root().glob(f"*/{cluster}.pickle")
    return found


def plant(path: str, message: str, cluster: str = "gpu-prod") -> None:
    """Put a made-up finding into the cached results of `path`: if a run reports it, the run
    served that file's results from the cache."""
    with open(pack(cluster), "rb") as f:
        stored = pickle.load(f)
    entry = stored.entries[path]
    results = pickle.loads(entry.results)
    line = next(iter(results))
    fake = Finding(rule=rules.get("schema"), message=message, file=path, line=line)
    fake.cluster = cluster
    results[line] = Verdict([fake], True, frozenset(), frozenset())
    entry.results = pickle.dumps(results)
    with open(pack(cluster), "wb") as f:
        pickle.dump(stored, f)


def messages(found: list[dict[str, t.Any]]) -> set[str]:
    return {f["message"] for f in found}


def test_a_cached_run_reports_what_a_cold_run_does_over_a_series_of_edits(repo: Path) -> None:
    baseline = same_with_and_without_cache(repo)
    assert pack().exists()
    assert same_with_and_without_cache(repo) == baseline  # everything served from the cache

    lq = repo / LOCALQUEUE
    original = lq.read_text()
    lq.write_text(original.replace("clusterQueue: team-a-cq", "clusterQueue: no-such-cq"))
    broken = same_with_and_without_cache(repo)  # a new finding
    assert any(f["file"] == LOCALQUEUE and f["rule"] == "lq-cluster-queue-missing" for f in broken)

    lq.write_text(original)  # fixed again
    assert same_with_and_without_cache(repo) == baseline

    schema_file = repo / LQ_SCHEMA  # the schema now forbids the LocalQueues' spec field
    schema = json.loads(schema_file.read_text())
    del schema["properties"]["spec"]["properties"]["clusterQueue"]
    schema_file.write_text(json.dumps(schema))
    unknown = same_with_and_without_cache(repo)
    assert any(
        f["file"] == LOCALQUEUE and f["rule"] in {r.id for r in UNKNOWN_FIELD_RULES}
        for f in unknown
    )
    shutil.copyfile(ROOT / LQ_SCHEMA, schema_file)
    assert same_with_and_without_cache(repo) == baseline

    renamed = repo / "tenants/team-a/gpu-prod/queues.yaml"
    lq.rename(renamed)
    moved = same_with_and_without_cache(repo)
    assert LOCALQUEUE not in {f["file"] for f in moved}

    renamed.unlink()  # deleted: its objects are gone, references to them dangle
    same_with_and_without_cache(repo)

    lq.write_text(original.replace("name: batch", "name: Not_A_Name"))  # added, with a finding
    added = same_with_and_without_cache(repo)
    assert any(f["file"] == LOCALQUEUE and f["rule"] == "invalid-name" for f in added)


def test_after_a_one_file_change_only_that_file_is_read_again(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    findings(repo, "--jobs", "1")
    parsed: list[str] = []
    load_bytes = manifests.load_bytes

    def counted(data: bytes, file: str) -> t.Any:
        parsed.append(file)
        return load_bytes(data, file)

    monkeypatch.setattr(manifests, "load_bytes", counted)
    (repo / NAMESPACE).write_text((repo / NAMESPACE).read_text() + "# a comment\n")
    findings(repo, "--jobs", "1")
    cluster_profiles = {
        f"clusters/{c}/profile.yaml" for c in ("gpu-legacy", "gpu-prod", "gpu-staging")
    }
    assert set(parsed) - cluster_profiles == {NAMESPACE}  # cluster profiles: read every run
    assert len(parsed) == len(cluster_profiles) + 1


def test_a_changed_file_of_the_same_size_is_not_served(repo: Path) -> None:
    findings(repo)
    plant(LOCALQUEUE, "planted")
    assert "planted" in messages(findings(repo))  # the stat fast path served it
    lq = repo / LOCALQUEUE
    before = lq.stat()
    text = lq.read_text()
    changed = text.replace("team-a-cq", "team-x-cq")
    assert len(changed.encode()) == len(text.encode()) and changed != text
    with open(lq, "r+") as f:  # in place: same inode, same size, and the mtime put back
        f.write(changed)
    os.utime(lq, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (lq.stat().st_size, lq.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    found = findings(repo)
    assert "planted" not in messages(found)
    assert any(f["file"] == LOCALQUEUE and f["rule"] == "lq-cluster-queue-missing" for f in found)


def test_a_touched_but_unchanged_file_is_served_by_its_content(repo: Path) -> None:
    findings(repo)
    plant(LOCALQUEUE, "planted")
    os.utime(repo / LOCALQUEUE)  # a new mtime, the same bytes: the hash still matches
    assert "planted" in messages(findings(repo))


def test_a_changed_schema_fingerprint_is_not_served(repo: Path) -> None:
    findings(repo)
    plant(LOCALQUEUE, "planted")
    schema_file = repo / LQ_SCHEMA
    schema_file.write_text(schema_file.read_text() + "\n")  # same schema, other bytes
    assert "planted" not in messages(findings(repo))


def test_another_tool_version_is_not_served(
    repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    findings(repo)
    plant(LOCALQUEUE, "planted")
    assert "planted" in messages(findings(repo))
    plant(LOCALQUEUE, "planted")
    monkeypatch.setattr(cache, "version", lambda: "99.0.0")  # the tool's version, at its home
    assert "planted" not in messages(findings(repo))
    monkeypatch.undo()

    source = tmp_path / "source"  # the key follows the source, not only the version
    source.mkdir()
    (source / "module.py").write_text("X = 1\n")
    key = repo_cache.tool_key(source)
    (source / "module.py").write_text("X = 2\n")
    assert repo_cache.tool_key(source) != key


def test_a_corrupt_cache_is_ignored_and_rebuilt(repo: Path) -> None:
    baseline = findings(repo, "--no-cache")
    findings(repo)
    for cluster in ("gpu-prod", "gpu-staging", "gpu-legacy"):
        pack(cluster).write_bytes(b"\x80\x05 not a pickle")
    (pack("gpu-prod").parent / "_tenant-profiles.pickle").write_bytes(b"")
    assert findings(repo) == baseline
    plant(LOCALQUEUE, "planted")  # rewritten whole: readable again, and served
    assert "planted" in messages(findings(repo))


def test_clear_cache_and_no_cache(repo: Path) -> None:
    findings(repo, "--no-cache")
    assert not repo_cache.validate_cache_root().exists()
    findings(repo)
    plant(LOCALQUEUE, "planted")
    assert "planted" not in messages(findings(repo, "--clear-cache"))


def test_policy_checks_are_served_while_what_they_read_is_unchanged(repo: Path) -> None:
    """Each check's findings are kept with the digest of what it read (auditor/validate/
    kept.py): served while that is unchanged, run again when any of it changes, and always
    what a cold run reports."""
    baseline = same_with_and_without_cache(repo)
    stored = pickle.loads(pack().read_bytes())
    kept = stored.checks["localqueue-target"]  # reads LocalQueues, ClusterQueues, Namespaces
    assert "LocalQueue" in kept.reads.kinds and not kept.reads.loads
    fake = Finding(rule=rules.get("lq-cluster-queue-missing"), message="planted", file="x")
    fake.cluster = "gpu-prod"
    kept.findings = pickle.dumps([fake])
    pack().write_bytes(pickle.dumps(stored))
    assert "planted" in messages(findings(repo))  # served: the check did not run again
    priority = repo / "clusters/gpu-prod/priorityclasses.yaml"
    priority.write_text(priority.read_text() + "# no kind the check reads\n")
    assert "planted" in messages(findings(repo))
    namespace = repo / NAMESPACE
    namespace.write_text(namespace.read_text() + "# a Namespace: read by the check\n")
    assert "planted" not in messages(findings(repo))  # run again
    assert same_with_and_without_cache(repo) == baseline

    # edits of what every check reads, and of a file one reads through the tree
    tenant = repo / "tenants/team-a/profile.yaml"
    before = tenant.read_text()
    tenant.write_text(before.replace("workload: [batch-low, batch-standard]", "workload: []"))
    changed = same_with_and_without_cache(repo)
    assert changed != baseline
    tenant.write_text(before)
    assert same_with_and_without_cache(repo) == baseline
    policies = repo / "clusters/gpu-prod/admission-policies.yaml"
    policies.write_text(policies.read_text() + "# edited by hand\n")
    stale = same_with_and_without_cache(repo)
    assert any(f["rule"] == "admission-policies-stale" for f in stale)
    namespace.write_text(
        namespace.read_text().replace("platform.example.com/kueue: enabled", "other: x")
    )
    same_with_and_without_cache(repo)
