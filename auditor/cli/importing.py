"""`kueue-gitops import`: bring a running Kueue estate into the repository."""

from __future__ import annotations

import re
import sys
import typing as t
from pathlib import Path

import click

from auditor import kueue
from auditor.cli.options import Context, cluster_access, cluster_deadline, pass_context
from auditor.errors import AuditorError, ConfigError
from auditor.kueue import admission
from auditor.onboard import estate as onboard_estate
from auditor.onboard import rendered
from auditor.onboard.files import DNS_LABEL
from auditor.render import tools
from auditor.repo.layout import UNOWNED
from auditor.repo.profiles import export_schemas
from auditor.repo.root import find_root

if t.TYPE_CHECKING:
    from auditor.onboard.importing import Written

# What CODEOWNERS accepts, as the profiles' schemas say (auditor/repo/profile_schemas/).
OWNER = re.compile(r"@[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)?|[^@\s]+@[^@\s]+")


def _root(ctx: Context) -> Path:
    """The repository at or above --repo (or here); a folder without one becomes one."""
    start = (ctx.repo_dir or Path.cwd()).resolve()
    try:
        return find_root(start)
    except ConfigError:
        return start


def _label(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    key, eq, value = text.partition("=")
    if not (key and eq and value):
        raise click.BadParameter(f"{text!r}: write KEY=VALUE", param_hint="--admission-label")
    return key, value


def _owners(ctx: Context, owners: tuple[str, ...]) -> tuple[str, ...]:
    for owner in owners:
        if not OWNER.fullmatch(owner):
            raise click.BadParameter(
                f"{owner!r}: write @ORG/TEAM, @USER or an e-mail address", param_hint="--owner"
            )
    if not owners:
        ctx.note("the cluster's and tenants' owner is @platform (--owner names the real team)")
    return owners or ("@platform",)


@click.command("import")
@click.option(
    "--cluster",
    "cluster",
    required=True,
    metavar="NAME",
    help="The repository's name for the cluster (clusters/NAME/; its context unless --context).",
)
@click.option(
    "--tenants-by",
    "tenants_by",
    required=True,
    metavar="RULE",
    help="How namespaces make tenants: label=KEY (the value of a namespace label), queue (the "
    "ClusterQueue its LocalQueues feed), or name=REGEX (its first group names the tenant).",
)
@click.option(
    "--owner",
    "owners",
    multiple=True,
    metavar="@ORG/TEAM",
    help="The platform team, owner of the cluster and, until you name theirs, of the tenants "
    "(CODEOWNERS; repeatable). Default: @platform.",
)
@click.option(
    "--admission-label",
    metavar="KEY=VALUE",
    help="The namespace label that lets a namespace submit work (default: the one most "
    "ClusterQueues' namespaceSelectors require, else kueue-gitops.io/admission=enabled).",
)
@click.option(
    "--kueue-version",
    metavar="VERSION",
    help=f"The Kueue release the cluster runs, when no Deployment {kueue.NAMESPACE}/"
    f"{kueue.CONTROLLER} names it in its image tag.",
)
@click.option(
    "--exclude",
    "exclude",
    multiple=True,
    metavar="NAMESPACE",
    help="Leave a namespace out (repeatable): nothing in it is written. A namespace "
    "--tenants-by cannot place is otherwise written unowned, in clusters/NAME/unowned/.",
)
@click.option(
    "--force", is_flag=True, help="Overwrite files edited since the last import (shown first)."
)
@cluster_access
@cluster_deadline
@pass_context
def import_command(
    ctx: Context,
    cluster: str,
    tenants_by: str,
    owners: tuple[str, ...],
    admission_label: str | None,
    kueue_version: str | None,
    exclude: tuple[str, ...],
    force: bool,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
) -> None:
    """Read one live cluster and write it into the repository: clusters/NAME/ (its profile with
    the Kueue release it runs, ResourceFlavors, Cohorts, ClusterQueues, priority classes,
    AdmissionChecks, Topologies, MultiKueue objects, the RBAC that reaches Kueue's objects or
    the tenants' namespaces, Kueue's Configuration), tenants/T/ (a profile derived from what
    is live; per cluster its Namespaces, LocalQueues and RoleBindings) and schemas/NAME/.

    \b
    Objects are written as a person writes them: no status or server metadata, no field at
    the server's default. Import again to take in what changed: unchanged files stay as they
    are, and a file edited since the last import is shown and left alone (exit 2) unless
    --force. A second cluster joins the tenants it shares with the first. Everything is
    written aside and moved in whole, or nothing is (exit 2 for what the command cannot
    place, 3 for what it cannot read). Then `kueue-gitops validate` and `drift --cluster NAME`.
    """
    from auditor.live.kube import KubeCluster, Limits  # the Kubernetes client only when it runs
    from auditor.onboard import importing

    if not DNS_LABEL.fullmatch(cluster):
        raise ConfigError(f"cluster name {cluster!r} must be a DNS label (its folder, Argo CD)")
    rule = onboard_estate.TenantRule.parse(tenants_by)
    admission = _label(admission_label)
    owners = _owners(ctx, owners)
    root = _root(ctx)
    live = KubeCluster.connect(
        cluster, kubeconfig=kubeconfig, context=context or cluster, limits=Limits(deadline=timeout)
    )
    estate = importing.read_estate(live, kueue_version)
    tools.running_on(cluster, estate.argocd_version)  # its folders render as that Argo CD does
    fetched = importing.fetched_schemas(live)
    fetched.cluster = cluster
    options = onboard_estate.Options(
        rule, tuple(owners), context or cluster, admission, frozenset(exclude)
    )
    made = onboard_estate.files(estate, options, importing.tenant_profiles(root))
    plain, folders = rendered.split(root, cluster, made.files)
    try:
        written = importing.write_whole(
            root, cluster, plain, fetched, force=force, rendered=[f.path for f in folders]
        )
    except importing.EditedByHand as exc:
        for conflict in exc.conflicts:
            sys.stderr.write(conflict.diff)
        raise
    exported = [path for path, changed in export_schemas(root) if changed]
    for path in [*written.changed, *exported]:
        click.echo(f"wrote {path}")
    click.echo(f"wrote schemas/{cluster}/ ({len(fetched.schemas)} schemas of the cluster)")
    if not estate.nodes:
        ctx.note(
            f"cluster {cluster} has no Node: each flavor's capacity in clusters/{cluster}/"
            "profile.yaml is what its queues promise; write what its nodes hold"
        )
    _summary(cluster, estate, made, written, options, root)
    _rendered(folders)


def _rendered(folders: list[rendered.Folder]) -> None:
    """Each rendered folder import did not write into, with how the cluster differs from what
    it renders; exit 1 when one differs, 3 when one could not be rendered (docs/usage.md)."""
    for folder in folders:
        head = f"rendered: {folder.path}/ is built by {folder.tool}: not written as plain files"
        if folder.why_not:
            click.echo(f"{head}; how the cluster differs cannot be shown: {folder.why_not}")
        elif folder.diff:
            click.echo(f"{head}; the cluster differs from what it renders (edit its source):")
            click.echo(folder.diff, nl=False)
        else:
            click.echo(f"{head}; it renders what the cluster has")
    if any(f.why_not for f in folders):
        raise AuditorError(
            "a rendered folder could not be compared with the cluster (above); the rest was written"
        )
    if any(f.diff for f in folders):
        click.get_current_context().exit(1)


def _summary(
    cluster: str,
    estate: onboard_estate.Estate,
    made: onboard_estate.Imported,
    written: Written,
    options: onboard_estate.Options,
    root: Path,
) -> None:
    """What was imported, what was left for a person to decide, and what was not found."""
    tenants = "; ".join(f"{t} ({', '.join(ns)})" for t, ns in sorted(made.tenants.items()))
    click.echo(
        f"cluster {cluster}: Kueue {estate.kueue_version}, {len(written.changed)} file(s) "
        f"written, {written.unchanged} unchanged; tenants: {tenants or 'none'}"
    )
    for ns, why in sorted(made.unowned.items()):
        click.echo(
            f"unowned: namespace {ns} (--tenants-by {options.rule} cannot place it: {why}) is "
            f"written to clusters/{cluster}/{UNOWNED}/{ns}.yaml; validate names it until a "
            f"tenant has it (or import again with --exclude {ns} to leave it out)"
        )
    if made.excluded:
        click.echo(f"left out (--exclude): namespace(s) {', '.join(made.excluded)}")
    missing = sorted(set(options.exclude) - set(made.excluded))
    if missing:
        click.echo(f"--exclude: cluster {cluster} has no namespace {', '.join(missing)}")
    _identities(cluster, made.identities)
    for line in estate.unread:
        click.echo(f"not found: {line}")
    click.echo(
        f"next: kueue-gitops validate; kueue-gitops drift --cluster {cluster}; review the "
        "profiles' owners and groups and the proposed platformIdentities, then commit (with "
        ".kueue-gitops/imported.json); then kueue-gitops validate --baseline "
        ".kueue-gitops/validate-baseline.yaml --write-baseline"
    )
    if not (root / "argocd").is_dir():  # the tool's own workflows need what import cannot read
        click.echo(
            "next: kueue-gitops init --adopt --repo-url URL (Argo CD, alerts, CODEOWNERS, the "
            "workflows; docs/usage.md, 'init --adopt')"
        )


def _identities(cluster: str, identities: dict[str, str]) -> None:
    proposed = "; ".join(f"{who} ({why})" for who, why in identities.items())
    click.echo(
        f"review: platformIdentities proposed in clusters/{cluster}/profile.yaml from what is "
        f"live: {proposed or 'none'}. They alone may relabel namespaces once the admission "
        "policies are generated: keep Argo CD's identity and your administrators"
    )
    if not any(admission.is_sync_identity(who) for who in identities):
        click.echo(
            "review: no identity of Argo CD's is bound on the cluster: add the one Argo CD "
            "syncs with to platformIdentities before the policies deny, or its syncs are refused"
        )
