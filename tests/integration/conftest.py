from __future__ import annotations

import os
import typing as t
from pathlib import Path

import pytest

from auditor.live.apply import apply_all
from auditor.repo.layout import Repository
from auditor.sandbox import Sandbox, Toolchain
from tests.conftest import ROOT


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration/" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def kueue_sandbox(toolchain: Toolchain, sandboxes_dir: Path) -> t.Iterator[Sandbox]:
    """A sandbox running Kueue and kube-controller-manager, synced from clusters/gpu-staging."""
    box = Sandbox(f"gpu-staging-{os.getpid()}", root=sandboxes_dir)
    try:
        box.up(toolchain, with_kueue=True)
    except Exception as exc:
        pytest.fail(f"the Kueue sandbox could not start: {exc}", pytrace=False)
    try:
        loaded = Repository.open(ROOT).load(["gpu-staging"])
        results = apply_all(box.connect(), loaded.for_cluster("gpu-staging"))
        assert [(str(r.resource.key), r.error) for r in results if r.error] == []
        yield box
    finally:
        box.down()
