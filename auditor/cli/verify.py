"""`kueue-gitops verify`: admission conformance of a live cluster, with probe Jobs."""

from __future__ import annotations

import json
import sys
import typing as t

import click

from auditor import verify as conformance
from auditor.cli.options import Context, cluster_access, pass_context
from auditor.live.access import connect
from auditor.repo import boundaries
from auditor.report import REPORTER_BY_NAME

MARK = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}


@click.command()
@click.option("--cluster", "cluster", required=True, metavar="NAME", help="Repo cluster to probe.")
@cluster_access
@click.option(
    "-o",
    "--output",
    "output",
    default="text",
    show_default=True,
    type=click.Choice(sorted(REPORTER_BY_NAME)),
    help="Report format (json adds every check, passed or not, with its Workloads).",
)
@click.option(
    "--timeout", default=60.0, show_default=True, help="Seconds to wait for Kueue to act."
)
@click.option(
    "--watch-seconds",
    default=10,
    show_default=True,
    type=click.IntRange(1, 50),
    help="How long the unlabelled-namespace and unqueued Jobs are watched for a Pod.",
)
@pass_context
def verify(
    ctx: Context,
    cluster: str,
    kubeconfig: str | None,
    context: str | None,
    output: str,
    timeout: float,
    watch_seconds: int,
) -> None:
    """Check with probe Jobs that Kueue admits as configured: nominal quota, borrowing limit,
    preemption by priority, no admission from unlabelled namespaces, stopPolicy Hold.

    Runs in scratch namespaces and deletes everything it made, also on failure or interrupt.
    Refuses clusters whose profile lacks `verify: {allowed: true}` (exit 2).
    Exit 0 every check passed, 1 a check failed, 3 incomplete.
    """
    repo = ctx.repository()
    profile = repo.cluster(cluster)
    conformance.ensure_allowed(profile)  # before any connection is made
    tenants = [repo.tenants[name] for name in sorted(repo.tenants)]
    declared = boundaries.boundaries(
        profile, repo.tenants, repo.load([cluster]).for_cluster(cluster)
    )
    live = connect(profile, kubeconfig=kubeconfig, context=context)
    result = conformance.run(
        live,
        profile,
        tenants,
        timeout=timeout,
        watch_seconds=watch_seconds,
        boundaries=declared,
    )
    if output == "json":
        json.dump(result.to_json(), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    elif output == "text":
        _write_checks(result, sys.stdout)
    else:
        REPORTER_BY_NAME[output](result.report, sys.stdout)
    click.get_current_context().exit(result.report.exit_code)


def _write_checks(result: conformance.Verification, out: t.TextIO) -> None:
    for check in result.checks:
        doc = check.to_json()
        where = f" [{check.cluster_queue}]" if check.cluster_queue else ""
        out.write(f"{MARK[doc['status']]} {check.name}{where}: {check.summary}\n")
        if doc["status"] == "failed":
            for w in doc["workloads"]:
                conds = ", ".join(
                    f"{c['type']}={c['status']}" + (f" ({c['reason']})" if c["reason"] else "")
                    for c in w["conditions"]
                )
                out.write(
                    f"       {w['namespace']}/{w['name']} priority {w['priority']}: {conds}\n"
                )
    for c in result.report.clusters:
        for error in c.errors:
            out.write(f"INCOMPLETE {c.name}: {error}\n")
    failed = sum(1 for c in result.checks if c.passed is False)
    out.write(
        f"verify: {result.report.status}: {len(result.checks)} check(s), {failed} failed, "
        f"in {result.seconds:.0f}s\n"
    )
