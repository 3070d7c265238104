"""The synthetic trace generator: deterministic for a seed, shaped as it says."""

from __future__ import annotations

import pytest

from auditor.errors import ConfigError
from auditor.replay import synthetic
from auditor.repo.layout import Repository
from tests.estate import ESTATE

MIXES = [
    synthetic.TenantMix("team-a", "batch", 3.0, {"batch-low": 1.0}),
    synthetic.TenantMix("team-b", "batch", 1.0, {"batch-low": 1.0, "batch-standard": 3.0}),
]


def test_the_same_seed_gives_the_same_trace_and_another_seed_another() -> None:
    def make(seed: int) -> object:
        return synthetic.generate("c", MIXES, workloads=50, hours=4, seed=seed).to_json()

    assert make(5) == make(5)
    assert make(5) != make(6)


def test_shares_priorities_and_ordering_follow_the_mix() -> None:
    made = synthetic.generate("c", MIXES, workloads=400, hours=24, seed=2, bursts=0)
    team_a = [w for w in made.workloads if w.namespace == "team-a"]
    assert 0.65 < len(team_a) / 400 < 0.85  # share 3 of 4
    assert {w.priority_class for w in team_a} == {"batch-low"}
    team_b = [w for w in made.workloads if w.namespace == "team-b"]
    standard = sum(w.priority_class == "batch-standard" for w in team_b) / len(team_b)
    assert 0.6 < standard < 0.9
    times = [w.submitted_at for w in made.workloads]
    assert times == sorted(times) and times[0] >= 0 and times[-1] < 24 * 3600
    assert all(60 <= w.run_seconds <= 3600 for w in made.workloads)


def test_the_load_is_diurnal_busy_in_the_afternoon_quiet_before_dawn() -> None:
    made = synthetic.generate("c", MIXES, workloads=2000, hours=24, seed=4, bursts=0)
    by_hour = [0] * 24
    for w in made.workloads:
        by_hour[int(w.submitted_at // 3600)] += 1
    assert sum(by_hour[13:17]) > 2.5 * sum(by_hour[1:5])


def test_bursts_put_a_quarter_of_the_work_into_short_windows() -> None:
    made = synthetic.generate("c", MIXES, workloads=400, hours=10, seed=9, bursts=1)
    window = 10 * 3600 * synthetic.BURST_LENGTH
    times = sorted(w.submitted_at for w in made.workloads)
    densest = max(sum(1 for x in times if start <= x <= start + window) for start in times)
    assert densest >= 100  # 25 % of 400, plus what the curve puts there


def test_default_mixes_are_the_clusters_tenant_queues_with_their_approved_priorities() -> None:
    mixes = synthetic.mixes_from(Repository.open(ESTATE), "gpu-staging")
    assert [(m.namespace, m.local_queue, sorted(m.priorities)) for m in mixes] == [
        ("team-a", "batch", ["batch-low", "batch-standard"]),
        ("team-b", "batch", ["batch-low", "batch-standard"]),
    ]


QUEUES = {"team-a": ["short", "training"], "team-b": ["batch"]}


def test_a_tenant_mix_goes_to_its_namespaces_own_queues_its_share_split() -> None:
    mixes = [
        synthetic.TenantMix("team-a", "", 0.6, {"batch-low": 1.0}),
        synthetic.TenantMix("team-b", "", 0.4),
    ]
    made = synthetic.placed(mixes, QUEUES, "c")
    assert [(m.namespace, m.local_queue, m.share) for m in made] == [
        ("team-a", "short", 0.3),
        ("team-a", "training", 0.3),
        ("team-b", "batch", 0.4),
    ]
    named = synthetic.placed([synthetic.TenantMix("team-a", "training", 1.0)], QUEUES, "c")
    assert [(m.local_queue, m.share) for m in named] == [("training", 1.0)]


def test_an_unknown_namespace_or_queue_is_refused_naming_what_there_is() -> None:
    with pytest.raises(ConfigError, match=r"namespace team-z on cluster c .*team-a, team-b"):
        synthetic.placed([synthetic.TenantMix("team-z", "")], QUEUES, "c")
    with pytest.raises(ConfigError, match=r"no LocalQueue batch .*it has: short, training"):
        synthetic.placed([synthetic.TenantMix("team-a", "batch")], QUEUES, "c")
