"""Plan run offline on a small estate of ClusterQueues."""

from __future__ import annotations

import json
import typing as t

from tests.conftest import run_line
from tests.unit.conftest import Revisions

CQS = "clusters/gpu-prod/clusterqueues.yaml"


def plan(revs: Revisions, *args: str) -> tuple[int, t.Any]:
    result = run_line(
        ["kueue-gitops", "--repo", str(revs.root), "plan", "diff", *args, "-o", "json"]
    )
    return result.exit_code, json.loads(result.output) if result.output.startswith("{") else result
