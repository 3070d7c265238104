"""Drift over several clusters in one run: each cluster's failure stays its own.

Three real sandboxes, one repository with a folder and a profile per cluster, one kubeconfig
with a context per cluster (as bench/fleet/run.py has it, with eight). One cluster stopped
mid-fleet: the others are still audited and their drift reported, the stopped one is named
incomplete, and the run exits 3.
"""

from __future__ import annotations

import json
import os
import typing as t
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from auditor.sandbox.controlplane import merged_kubeconfig
from bench.drift.generate import generate
from tests.conftest import run_line, start_sandbox
from tests.estate import ESTATE

Json = dict[str, t.Any]


@pytest.fixture(scope="module")
def fleet(
    toolchain: Toolchain, sandboxes_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> t.Iterator[tuple[list[Sandbox], Path, Path]]:
    names = [f"fleet-{os.getpid()}-{i}" for i in range(3)]
    boxes: list[Sandbox] = []
    try:
        with ThreadPoolExecutor(len(names)) as pool:
            futures = [pool.submit(start_sandbox, toolchain, sandboxes_dir, n) for n in names]
            boxes = [f.result() for f in futures]
        repo = generate(
            tmp_path_factory.mktemp("fleet") / "repo",
            30,
            3,
            names,
            with_schemas=True,
            source=ESTATE,
        )
        loaded = Repository.open(repo).load(names)
        for box in boxes:
            failed = [a for a in apply_all(box.connect(), loaded.for_cluster(box.name)) if a.error]
            assert failed == []
        yield boxes, repo, merged_kubeconfig(boxes, repo.parent / "kubeconfig")
    finally:
        for name in names:
            Sandbox(name, root=sandboxes_dir).down()


def drift(repo: Path, kubeconfig: Path) -> tuple[int, Json]:
    result = run_line(
        [
            "kueue-gitops",
            "--repo",
            str(repo),
            "drift",
            "--kubeconfig",
            str(kubeconfig),
            "-o",
            "json",
        ]
    )
    return result.exit_code, json.loads(result.stdout)


def test_a_stopped_cluster_leaves_the_others_audited_and_their_drift_reported(
    fleet: tuple[list[Sandbox], Path, Path],
) -> None:
    boxes, repo, kubeconfig = fleet
    code, clean = drift(repo, kubeconfig)
    assert code == 0, clean
    assert [(c["name"], c["status"]) for c in clean["clusters"]] == [
        (b.name, "ok") for b in sorted(boxes, key=lambda b: b.name)
    ]

    first, stopped, _ = boxes
    [tampered] = [
        r
        for r in Repository.open(repo).load([first.name]).for_cluster(first.name)
        if r.kind == "Namespace" and r.tenant
    ][:1]
    first.connect().patch(
        "v1", "Namespace", tampered.name, {"metadata": {"labels": {"bench.example.com/cq": "x"}}}
    )
    stopped.down()

    code, report = drift(repo, kubeconfig)
    assert code == 3
    status = {c["name"]: c for c in report["clusters"]}
    assert status[stopped.name]["status"] == "incomplete"
    assert "unreachable" in status[stopped.name]["errors"][0]
    assert [n for n, c in status.items() if c["status"] == "ok"] == sorted(
        b.name for b in boxes if b is not stopped
    )
    assert [(f["cluster"], f["kind"], f["name"]) for f in report["findings"]] == [
        (first.name, "Namespace", tampered.name)
    ]
