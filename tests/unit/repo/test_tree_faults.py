"""Nothing under a repository folder is skipped in silence: linked folders are followed inside the
repository and refused outside it or in a loop; FIFOs, devices and huge files are refused
without being read; a file that cannot be read is a finding."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from auditor.model import Finding
from auditor.repo.layout import Loaded, Repository
from auditor.repo.tree import MAX_FILE_BYTES

TEAM_A = "tenants/team-a/gpu-prod"
LQ = (
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
    "metadata: {{name: {}, namespace: team-a}}\nspec: {{clusterQueue: team-a-cq}}\n"
)


def load(repo: Path) -> Loaded:
    return Repository.open(repo).load(["gpu-prod"])


def about(loaded: Loaded, rule: str) -> list[tuple[str | None, int | None]]:
    return [(f.file, f.line) for f in loaded.findings if f.rule.id == rule]


def messages(found: list[Finding]) -> str:
    return "\n".join(f"{f.rule.id} {f.file}:{f.line} {f.message}" for f in found)


def test_a_linked_folder_inside_the_repository_is_followed_and_judged(repo_copy: Path) -> None:
    shared = repo_copy / "shared" / "queues"
    shared.mkdir(parents=True)
    (shared / "good.yaml").write_text(LQ.format("linked"))
    (shared / "bad.yaml").write_text("kind: [unclosed\n")
    (repo_copy / TEAM_A / "more").symlink_to("../../../shared/queues")
    loaded = load(repo_copy)
    assert about(loaded, "yaml-syntax") == [(f"{TEAM_A}/more/bad.yaml", 2)]
    [linked] = [r for r in loaded.resources if r.name == "linked"]
    assert (linked.file, linked.cluster, linked.tenant) == (
        f"{TEAM_A}/more/good.yaml",
        "gpu-prod",
        "team-a",
    )


def test_a_tenant_cluster_folder_linked_outside_the_repository_is_refused(repo_copy: Path) -> None:
    outside = repo_copy.parent / f"{repo_copy.name}-outside"
    outside.mkdir()
    (outside / "secret.yaml").write_text(
        "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen, namespace: team-a}\n"
    )
    folder = repo_copy / TEAM_A
    for child in folder.iterdir():
        child.rename(outside / child.name)
    folder.rmdir()
    folder.symlink_to(outside)
    loaded = load(repo_copy)
    [found] = [f for f in loaded.findings if f.rule.id == "symlink-outside"]
    assert (found.file, found.line) == (f"{TEAM_A}/", 1)
    assert str(outside) in found.message and "not read" in found.message
    assert not [r for r in loaded.resources if r.file.startswith(TEAM_A)]


def test_a_linked_folder_to_etc_and_a_loop_are_each_a_finding(repo_copy: Path) -> None:
    (repo_copy / TEAM_A / "etc").symlink_to("/etc")
    (repo_copy / TEAM_A / "again").symlink_to("..")
    (repo_copy / TEAM_A / "a.yaml").symlink_to("b.yaml")
    (repo_copy / TEAM_A / "b.yaml").symlink_to("a.yaml")
    loaded = load(repo_copy)
    assert about(loaded, "symlink-outside") == [(f"{TEAM_A}/etc/", 1)]
    assert sorted(about(loaded, "symlink-loop")) == [
        (f"{TEAM_A}/a.yaml", 1),
        (f"{TEAM_A}/again/", 1),
        (f"{TEAM_A}/b.yaml", 1),
    ]
    assert not [r for r in loaded.resources if "/etc/" in r.file or "/again/" in r.file]


def test_a_fifo_named_like_a_manifest_is_refused_without_being_opened(repo_copy: Path) -> None:
    fifo = repo_copy / TEAM_A / "x.yaml"
    os.mkfifo(fifo)
    result: list[Loaded] = []
    worker = threading.Thread(target=lambda: result.append(load(repo_copy)), daemon=True)
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # opened: it waits for a writer forever; free it, then fail
        with open(fifo, "w"):
            pass
        raise AssertionError("the loader opened the FIFO and blocked on it")
    [found] = [f for f in result[0].findings if f.rule.id == "special-file"]
    assert (found.file, found.line) == (f"{TEAM_A}/x.yaml", 1)
    assert "FIFO" in found.message


def test_an_unreadable_file_and_a_huge_one_are_findings(repo_copy: Path) -> None:
    (repo_copy / TEAM_A / "gone.yaml").symlink_to("nowhere.yaml")
    huge = repo_copy / TEAM_A / "huge.yaml"
    with open(huge, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: only its size is ever looked at
    loaded = load(repo_copy)
    assert about(loaded, "unreadable-file") == [(f"{TEAM_A}/gone.yaml", 1)]
    [big] = [f for f in loaded.findings if f.rule.id == "file-too-large"]
    assert big.file == f"{TEAM_A}/huge.yaml" and "10.0 MiB" in big.message, messages(
        loaded.findings
    )
    assert len(loaded.findings) == 2, messages(loaded.findings)
