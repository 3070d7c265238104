"""The `plan` group: its verbs in the order a reviewer meets them."""

from __future__ import annotations

import click

from auditor.cli.plan.diff import diff
from auditor.cli.plan.job import job
from auditor.cli.plan.legacy import PlanGroup
from auditor.cli.plan.replay import replay
from auditor.cli.plan.sweep import sweep


@click.group(cls=PlanGroup)
def plan() -> None:
    """What a change does before it merges, one verb per question."""


for verb in (diff, replay, job, sweep):
    plan.add_command(verb)
