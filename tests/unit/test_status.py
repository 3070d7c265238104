"""`status` text: each ClusterQueue's quota cells, its queues, and which namespaces admit."""

from __future__ import annotations

from auditor.status import LiveStatus, render_text
from tests.unit.conftest import cluster_profile

PROFILE = cluster_profile()


def test_the_quota_of_each_flavor_shows_nominal_borrowing_and_lending() -> None:
    cq = {
        "metadata": {"name": "team-a-cq"},
        "spec": {
            "cohortName": "ai-shared",
            "stopPolicy": "Hold",
            "resourceGroups": [
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "cpu-only",
                            "resources": [
                                {"name": "cpu", "nominalQuota": "64"},
                                {"name": "memory", "nominalQuota": "256Gi"},
                            ],
                        }
                    ],
                },
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "a100",
                            "resources": [
                                {
                                    "name": "nvidia.com/gpu",
                                    "nominalQuota": "8",
                                    "borrowingLimit": "4",
                                    "lendingLimit": "2",
                                }
                            ],
                        },
                        {
                            "name": "h100",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "2"}],
                        },
                    ],
                },
            ],
        },
        "status": {"pendingWorkloads": 3, "admittedWorkloads": 1},
    }
    live = LiveStatus(
        [cq],
        [
            {
                "metadata": {"namespace": "team-a", "name": "batch"},
                "spec": {"clusterQueue": "team-a-cq"},
            }
        ],
        [
            {"metadata": {"name": "team-a", "labels": {"platform.example.com/kueue": "enabled"}}},
            {"metadata": {"name": "sandbox"}},
        ],
    )
    lines = render_text(live, PROFILE).splitlines()
    assert "stopPolicy=Hold" in lines[3] and "pending=3 admitted=1" in lines[3]
    assert lines[4].strip() == (
        "cpu-only: cpu=64 memory=256Gi; a100: nvidia.com/gpu=8(+4)(lend 2); h100: nvidia.com/gpu=2"
    )
    assert any("team-a" in line and "ADMITS WORK" in line for line in lines)
    assert any("sandbox" in line and "no admission" in line for line in lines)
