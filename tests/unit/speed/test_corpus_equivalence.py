"""validate's findings on the benchmark's corpus are the same by the fast path (the fast reader,
its byte check, the kept validators) as by PyYAML's path alone: the speed changes nothing found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.repo import fast_reader
from auditor.repo.layout import Repository
from auditor.validate.engine import validate
from bench.validate.generate import generate

ODD = """apiVersion: v1
kind: ConfigMap
metadata:
  name: odd
  namespace: t00001
  labels: &labels {a: "yes", b: "1", c: '@team'}
data:
  plain: yes
  quoted: "no"
  merged: [1, "1", 2024-01-01]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: odd-2, namespace: t00001, labels: *labels}
"""


def findings(root: Path, *only: str) -> list[str]:
    report = validate(Repository.open(root), root / "schemas", jobs=1, only=only)
    return [json.dumps(f.to_json(), sort_keys=True, default=str) for f in report.findings]


def test_the_fast_path_finds_what_pyyamls_path_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "repo"
    generate(root, 40)
    (root / "tenants/t00001/gpu-prod/odd.yaml").write_text(ODD)
    fast = findings(root)
    assert any("odd.yaml" in f for f in fast)  # the odd file is judged, not skipped
    monkeypatch.setattr(fast_reader, "ENABLED", False)
    assert findings(root) == fast
    slow_schema = findings(root, "schema")
    monkeypatch.setattr(fast_reader, "ENABLED", True)
    assert findings(root, "schema") == slow_schema
