"""`kueue-gitops upgrade-check`: may a cluster's Kueue move to a release (up or back)?"""

from __future__ import annotations

import re
from pathlib import Path

import click

from auditor.cli.options import (
    Context,
    cluster_access,
    cluster_deadline,
    finish,
    output_format,
    pass_context,
)
from auditor.live.access import connect
from auditor.sandbox import ensure_built, pins, releases
from auditor.upgrade import bundle, readiness

_RELEASE = re.compile(r"v[0-9]+\.[0-9]+\.[0-9]+")


def _target(ctx: Context, to: str) -> bundle.Bundle:
    """A folder or file of CRDs, or a release pinned under testenv/ (built when missing)."""
    if not _RELEASE.fullmatch(to):
        return bundle.read(Path(to))
    testenv = pins.testenv(ctx.repo_dir or Path.cwd())
    say = lambda m: click.echo(m, err=True)  # noqa: E731
    found = releases.release(ensure_built(testenv, log=say), to, log=say)
    return bundle.read(found.root / "crds", version=found.version)


@click.command(name="upgrade-check")
@click.option("--cluster", "cluster", required=True, metavar="NAME", help="Repo cluster to check.")
@click.option(
    "--to",
    "to",
    required=True,
    metavar="TARGET",
    help="The release to move to: a folder or file of its CRDs (e.g. its manifests.yaml), or "
    "a version pinned under testenv/ (v0.17.0, v0.9.1).",
)
@output_format  # json adds the `upgrade` block: stored versions, admitted Workloads
@cluster_access
@cluster_deadline
@pass_context
def upgrade_check(
    ctx: Context,
    cluster: str,
    to: str,
    output: str,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> None:
    """Check that CLUSTER's Kueue may be upgraded or rolled back to TARGET.

    Now: the controller has reconciled every ClusterQueue; each Kueue webhook answers a
    server-side dry-run create; every converted kind reads back in every served version.
    Compatibility: TARGET serves every version in each Kueue CRD's status.storedVersions (a
    rollback to a release that cannot read what etcd stores is refused); objects to migrate;
    the repository's manifests for CLUSTER are served by TARGET and validate against its
    schemas. Running work: the admitted Workloads, and on a rollback those without recovery
    evidence (a checkpoint on the Job, or the tenant's checkpointing evidence).
    Exit 0 ready, 1 findings, 3 the cluster could not be read.
    """
    repo = ctx.repository()
    profile = repo.cluster(cluster)
    target = _target(ctx, to)
    loaded = repo.load([cluster])
    live = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
    tenants = [repo.tenants[name] for name in sorted(repo.tenants)]
    checked = readiness.check(live, profile, loaded.for_cluster(cluster), tenants, target)
    finish(checked.report, output)
