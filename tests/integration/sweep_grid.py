"""The constructed case plan sweep is held to."""

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
# One axis, team-a's GPUs, toward the same target: the sweeps over a real estate's capacity.
QUOTA_GRID = """\
grid:
  - clusterQueue: team-a-cq
    flavor: a100
    resource: nvidia.com/gpu
    field: nominalQuota
    values: [1, 2, 3, 4, 6]
target:
  tenant: team-a
  p95WaitSeconds: 660
"""
