"""The constructed case plan --sweep is held to."""

from __future__ import annotations

GRID = """\
grid:
  - clusterQueue: team-a-cq
    flavor: a100
    resource: nvidia.com/gpu
    field: nominalQuota
    values: [{values}]
  - clusterQueue: team-a-cq
    field: preemption.withinClusterQueue
    values: [LowerPriority, Never]
target:
  tenant: team-a
  p95WaitSeconds: 660
"""
