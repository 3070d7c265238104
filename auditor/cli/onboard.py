"""`kueue-gitops tenant add` and `kueue-gitops cluster add`: onboarding through the repository."""

from __future__ import annotations

from pathlib import Path

import click

from auditor import codeowners, onboard
from auditor.cli.options import Context, pass_context
from auditor.errors import ConfigError
from auditor.repo import boundaries
from auditor.repo.layout import Repository


def _root(ctx: Context) -> tuple[Repository, Path]:
    repo = ctx.repository()
    if repo.root is None:
        raise ConfigError("onboarding writes into a working tree; pass --repo DIR")
    return repo, repo.root


def _regenerate(root: Path, clusters: list[str]) -> list[str]:
    """CODEOWNERS and the clusters' admission policies, from the repository as it is now."""
    repo = Repository.open(root)  # read afresh: the profiles just written are part of it
    (root / codeowners.FILE).write_text(codeowners.render(repo))
    loaded = repo.load(clusters)
    written = [codeowners.FILE]
    for name in clusters:
        made = boundaries.boundaries(repo.cluster(name), repo.tenants, loaded.for_cluster(name))
        (root / boundaries.policy_path(name)).write_text(boundaries.render(name, made))
        written.append(boundaries.policy_path(name))
    return written


def _report(written: list[str], regenerated: list[str], then: str) -> None:
    for path in written:
        click.echo(f"wrote {path}")
    for path in regenerated:
        click.echo(f"regenerated {path}")
    click.echo(then)


@click.group()
def tenant() -> None:
    """Onboard a tenant team: its profile, namespaces, queues, RBAC and Argo CD project."""


@tenant.command("add")
@click.argument("name")
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    required=True,
    metavar="C",
    help="A cluster the tenant gets a namespace and a ClusterQueue on (repeatable).",
)
@click.option(
    "--owner",
    "owners",
    multiple=True,
    required=True,
    metavar="@ORG/TEAM",
    help="Who approves its LocalQueues (CODEOWNERS; repeatable).",
)
@click.option(
    "--group",
    required=True,
    metavar="GROUP",
    help="The identity-provider group its members log in with (bound to submit Jobs).",
)
@click.option(
    "--quota",
    "quotas",
    multiple=True,
    metavar="FLAVOR.RESOURCE=N",
    help="Nominal quota of its ClusterQueue on each cluster, e.g. a100.nvidia.com/gpu=8 "
    "(repeatable; a flavor's other resources get 0).",
)
@click.option(
    "--cohort", metavar="NAME", help="The cohort its ClusterQueue borrows in and lends to."
)
@pass_context
def tenant_add(
    ctx: Context,
    name: str,
    clusters: tuple[str, ...],
    owners: tuple[str, ...],
    group: str,
    quotas: tuple[str, ...],
    cohort: str | None,
) -> None:
    """Write everything tenant NAME needs on each --cluster, then regenerate CODEOWNERS and the
    clusters' admission policies. Review the result with `kueue-gitops validate` and commit it.

    \b
    Writes tenants/NAME/profile.yaml, tenants/NAME/C/{namespace,localqueues,rbac}.yaml,
    argocd/tenants/NAME.yaml, and appends NAME-cq to clusters/C/clusterqueues.yaml.
    """
    repo, root = _root(ctx)
    plan = onboard.tenant(
        repo,
        name,
        list(dict.fromkeys(clusters)),
        list(owners),
        group,
        [onboard.Quota.parse(q) for q in quotas],
        cohort,
    )
    written = plan.write(root)
    _report(
        written,
        _regenerate(root, sorted(set(clusters))),
        f"tenant {name}: run `kueue-gitops validate`, then commit and open a pull request",
    )


@click.group("cluster")
def cluster_group() -> None:
    """Onboard a cluster: its folder, profile and schemas, made like one the repository has."""


@cluster_group.command("add")
@click.argument("name")
@click.option(
    "--like",
    required=True,
    metavar="C",
    help="The existing cluster whose platform files and schemas to start from.",
)
@click.option(
    "--context",
    "kube_context",
    metavar="CTX",
    help="The kubeconfig context of the new cluster (default: its name).",
)
@pass_context
def cluster_add(ctx: Context, name: str, like: str, kube_context: str | None) -> None:
    """Write clusters/NAME/ as a copy of clusters/C/ without its ClusterQueues, schemas/NAME/
    as a copy of C's, and NAME's destinations in argocd/projects.yaml; regenerate CODEOWNERS
    and NAME's admission policies. Then fetch its real schemas with `schemas fetch`.
    """
    repo, root = _root(ctx)
    plan = onboard.cluster(repo, name, like, kube_context)
    written = plan.write(root)
    written.append(onboard.copy_schemas(root, like, name))
    project = onboard.add_destinations(root, like, name)
    if project:
        written.append(project)
    _report(
        written,
        _regenerate(root, [name]),
        f"cluster {name}: adjust its profile's capacity and kueue version, run "
        f"`kueue-gitops schemas fetch --cluster {name}` once it is reachable, then commit",
    )
