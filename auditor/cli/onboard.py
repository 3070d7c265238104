"""`kueue-gitops tenant add` and `kueue-gitops cluster add`: onboarding through the repository."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import click

from auditor import codeowners
from auditor.cli.options import Context, pass_context
from auditor.errors import ConfigError
from auditor.onboard import adopt, files, new_cluster, new_tenant, start
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.repo.profiles import exported_schemas, owner_problem
from auditor.repo.root import CLUSTERS


def _root(ctx: Context) -> tuple[Repository, Path]:
    repo = ctx.repository()
    if repo.root is None:
        raise ConfigError("onboarding writes into a working tree; pass --repo DIR")
    return repo, repo.root


def _regenerate(plan: files.Plan, root: Path, clusters: list[str]) -> list[str]:
    """Add CODEOWNERS and the admission policies of `clusters` to `plan`, made from the
    repository as it will be once the plan is written (before anything is): what they
    regenerate."""
    repo = plan.pending(root)
    plan.replace[codeowners.FILE] = codeowners.render(repo)
    loaded = repo.load(clusters)
    regenerated = [codeowners.FILE]
    for name in clusters:
        made = boundaries.boundaries(repo.cluster(name), repo.tenants, loaded.for_cluster(name))
        plan.replace[boundaries.policy_path(name)] = boundaries.render(name, made)
        regenerated.append(boundaries.policy_path(name))
    return regenerated


def _write(plan: files.Plan, root: Path, clusters: list[str]) -> tuple[list[str], list[str]]:
    """Regenerate, then write everything at once: what was written, and what regenerated."""
    regenerated = _regenerate(plan, root, clusters)
    written = plan.write(root)
    return [p for p in written if p not in regenerated], regenerated


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
    "(at least one, required unless --cluster-queue; repeatable). The queue covers every "
    "resource the flavor's nodes offer (the cluster profile's capacity): one not named gets "
    "the tenant's share of it (4 of 8 GPUs: half the flavor's cpu and memory).",
)
@click.option(
    "--cohort",
    metavar="NAME",
    help="The cohort its ClusterQueue borrows in and lends to (one the cluster has).",
)
@click.option(
    "--cluster-queue",
    "shared",
    metavar="NAME",
    help="Share this existing ClusterQueue (its quota and cohort) instead of one of its own: "
    "the tenant gets a LocalQueue into it (without --quota and --cohort).",
)
@click.option(
    "--role",
    metavar="CLUSTERROLE",
    help="The ClusterRole its group is bound to in its namespace (one the cluster defines). "
    "Default: the one the repository's tenants are bound to, else "
    f"{new_tenant.SUBMITTER_ROLE}.",
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
    shared: str | None,
    role: str | None,
) -> None:
    """Write everything tenant NAME needs on each --cluster, then regenerate CODEOWNERS and the
    clusters' admission policies. Review the result with `kueue-gitops validate` and commit it.

    \b
    Writes tenants/NAME/profile.yaml, tenants/NAME/C/{namespace,localqueues,rbac}.yaml,
    argocd/tenants/NAME.yaml, and appends NAME's ClusterQueue to clusters/C/clusterqueues.yaml.

    It follows the repository's tenants: the ClusterRole they are bound to, how their
    LocalQueues and ClusterQueues are named (NAME-cq and batch in a repository init wrote). A
    flavor, cohort, role or --cluster-queue a cluster lacks, or a ClusterQueue of the new name
    it has already, is refused before anything is written (exit 2).
    """
    repo, root = _root(ctx)
    plan = new_tenant.tenant(
        repo,
        name,
        list(dict.fromkeys(clusters)),
        list(owners),
        group,
        [new_tenant.Quota.parse(q) for q in quotas],
        cohort,
        role,
        shared,
    )
    written, regenerated = _write(plan, root, sorted(set(clusters)))
    _report(
        written,
        regenerated,
        f"tenant {name}: run `kueue-gitops validate`, then commit and open a pull request",
    )


@click.group("cluster")
def cluster_group() -> None:
    """Onboard a cluster: its folder, profile and schemas, made like one the repository has."""


@cluster_group.command("add")
@click.argument("name")
@click.option(
    "--like",
    metavar="C",
    help="The existing cluster whose platform files and schemas to start from (default: "
    "the templates `init` writes).",
)
@click.option(
    "--context",
    "kube_context",
    metavar="CTX",
    help="The kubeconfig context of the new cluster (default: its name).",
)
@click.option(
    "--kueue-version",
    metavar="VERSION",
    help="Without --like: the Kueue release it runs (default: the newest this tool knows).",
)
@click.option(
    "--capacity",
    "capacity",
    multiple=True,
    metavar="FLAVOR.RESOURCE=N",
    help="Without --like: what the nodes behind a flavor hold (repeatable; as `init`).",
)
@pass_context
def cluster_add(
    ctx: Context,
    name: str,
    like: str | None,
    kube_context: str | None,
    kueue_version: str | None,
    capacity: tuple[str, ...],
) -> None:
    """Write clusters/NAME/ as a copy of clusters/C/ without its ClusterQueues and schemas/NAME/
    as a copy of C's (--like C), or from the templates `init` writes; add NAME's destinations
    to argocd/projects.yaml; regenerate CODEOWNERS and NAME's admission policies. Until
    `schemas fetch` reads its real schemas, validate judges it by the package's schemas of its
    Kueue release (or C's committed ones, copied).
    """
    repo, root = _root(ctx)
    if like is not None:
        if kueue_version or capacity:
            raise click.UsageError(
                "--kueue-version and --capacity are for a cluster without --like"
            )
        plan = new_cluster.cluster(repo, name, like, kube_context)
        then = (
            "adjust its profile's capacity and kueue version, run "
            f"`kueue-gitops schemas fetch --cluster {name}` once it is reachable"
        )
    else:
        if name in repo.clusters:
            raise ConfigError(f"cluster {name} exists already ({CLUSTERS}/{name}/)")
        clusters = sorted(repo.clusters)
        owners = next((repo.cluster(c).owners for c in clusters), None)
        version = kueue_version or start.newest_release()
        start.check_release(
            version, [c for c in clusters if repo.cluster(c).kueue_version == version]
        )
        made = start.ClusterStart(
            name,
            tuple(owners or [start.owners_from("")]),
            version,
            context=kube_context,
            capacity=_capacity(capacity),
        )
        plan = files.Plan(start.cluster_files(made), {})
        then = (
            f"validate judges it by the package's schemas of Kueue {version}; run "
            f"`kueue-gitops schemas fetch --cluster {name}` once it is reachable to match it "
            "exactly"
        )
    plan.replace |= new_cluster.with_destinations(root, name, like)
    if files.PROJECTS not in plan.replace:
        ctx.note(
            f"argocd/projects.yaml has no destinations to add {name}'s beside: Argo CD may not "
            f"sync clusters/{name}/ until its AppProject names it (`kueue-gitops init --adopt "
            "--repo-url URL` writes one)"
        )
    written, regenerated = _write(plan, root, [name])
    _report(written, regenerated, f"cluster {name}: {then}, then commit")


def _capacity(given: tuple[str, ...]) -> tuple[new_tenant.Quota, ...]:
    return tuple(new_tenant.Quota.parse(q, "--capacity") for q in given or start.DEFAULT_CAPACITY)


def _released_version(ctx: Context) -> str:
    """The version of this kueue-gitops, which the workflows and hooks init writes install."""
    from importlib.metadata import version

    found = version("kueue-gitops")
    if not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", found):
        ctx.note(
            f"kueue-gitops {found} is not a release: pin a released version in "
            ".github/actions/setup/action.yml and .pre-commit-config.yaml"
        )
    return found


def _label(text: str) -> tuple[str, str]:
    key, eq, value = text.partition("=")
    if not (key and eq and value):
        raise click.BadParameter(
            f"{text!r}: write KEY=VALUE, e.g. kueue-gitops.io/admission=enabled"
        )
    return key, value


@click.command("init")
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    metavar="NAME",
    help="A cluster of the repository (repeatable; required without --adopt); its kubeconfig "
    "context is its name.",
)
@click.option(
    "--repo-url",
    required=True,
    metavar="URL",
    help="The URL Argo CD reads this repository from (the ApplicationSets and AppProjects).",
)
@click.option(
    "--adopt",
    "adopting",
    is_flag=True,
    help="In a repository that has its clusters already (`kueue-gitops import`): write only "
    "what it lacks for the tool's workflows (Argo CD's ApplicationSets and AppProjects, each "
    "cluster's alerts, CI workflows, pre-commit hooks, CODEOWNERS); every file it has is kept.",
)
@click.option(
    "--owner",
    "owners",
    multiple=True,
    metavar="@ORG/TEAM",
    help="The platform team (CODEOWNERS; repeatable). Default: asked on a terminal, else "
    "@ORG/platform for the organisation in --repo-url.",
)
@click.option(
    "--kueue-version",
    metavar="VERSION",
    help="The Kueue release the clusters run (default: the newest this tool knows).",
)
@click.option(
    "--capacity",
    "capacity",
    multiple=True,
    metavar="FLAVOR.RESOURCE=N",
    help="What the nodes behind a flavor hold, e.g. a100.nvidia.com/gpu=8 (repeatable; one "
    "ResourceFlavor per FLAVOR). Default: " + " ".join(start.DEFAULT_CAPACITY) + ".",
)
@click.option(
    "--admission-label",
    default="kueue-gitops.io/admission=enabled",
    show_default=True,
    metavar="KEY=VALUE",
    help="The namespace label that lets a namespace submit work to Kueue.",
)
@click.option(
    "--cohort",
    default="shared",
    show_default=True,
    metavar="NAME",
    help="The cohort the tenants' ClusterQueues borrow in (`tenant add --cohort NAME`).",
)
@click.option("--revision", default="main", show_default=True, help="The branch Argo CD syncs.")
@pass_context
def init(
    ctx: Context,
    clusters: tuple[str, ...],
    repo_url: str,
    adopting: bool,
    owners: tuple[str, ...],
    kueue_version: str | None,
    capacity: tuple[str, ...],
    admission_label: str,
    cohort: str,
    revision: str,
) -> None:
    """Write a kueue-gitops repository into the current folder (or --repo DIR), which may be
    empty: a cluster's profile, ResourceFlavors, a Cohort, priority levels, the platform
    ClusterRoles, alerts and Kueue's Configuration per --cluster, their admission policies,
    Argo CD's ApplicationSets and AppProject for --repo-url, CODEOWNERS and the profiles'
    schemas. Nothing is overwritten. Then validate (by the schemas the package carries for the
    Kueue release, until `schemas fetch` reads a live cluster's) and add tenants.

    With --adopt, in a repository `kueue-gitops import` wrote: only what it lacks, for the
    clusters and tenants it has (their files are never touched).
    """
    root = (ctx.repo_dir or Path.cwd()).resolve()
    if adopting:
        _refuse_with_adopt(clusters, owners, kueue_version, capacity)
        _adopt(ctx, root, repo_url, revision)
        return
    if (root / CLUSTERS).exists():
        raise ConfigError(
            f"{root / CLUSTERS} exists already: add a cluster with `cluster add`, or write what "
            "an imported repository lacks with `kueue-gitops init --adopt --repo-url URL`"
        )
    if not clusters:
        raise click.UsageError("name the repository's clusters: --cluster NAME (repeatable)")
    # Every flag is judged before the first file is written: a typo is retried as typed.
    for owner in owners:
        if problem := owner_problem(owner):
            raise ConfigError(f"--owner {problem}")
    version = kueue_version or start.newest_release()
    start.check_release(version)
    cells = _capacity(capacity)
    label = _label(admission_label)
    if not files.DNS_LABEL.fullmatch(cohort):
        raise ConfigError(f"--cohort {cohort!r} must be a DNS label (it names a Cohort)")
    owners = owners or (_guessed_owner(ctx, repo_url),)
    starts = [
        start.ClusterStart(
            name, tuple(owners), version, admission=label, capacity=cells, cohort=cohort
        )
        for name in dict.fromkeys(clusters)
    ]
    tool = _released_version(ctx)
    plan = start.repository(starts, repo_url, tool, revision)
    plan.create |= exported_schemas()
    names = [s.name for s in starts]
    written, regenerated = _write(plan, root, names)
    _report(written, regenerated, _next_steps(starts[0], version))


def _guessed_owner(ctx: Context, repo_url: str) -> str:
    """The platform team, asked on a terminal (the guess from --repo-url its default)."""
    guess = start.owners_from(repo_url)
    if not sys.stdin.isatty():
        ctx.note(f"the clusters' owner is {guess} (--owner names another)")
        return guess
    guess = click.prompt("The platform team that owns the clusters", default=guess)
    if problem := owner_problem(guess):
        raise ConfigError(f"owner {problem}")
    return guess


def _refuse_with_adopt(clusters: tuple[str, ...], owners: tuple[str, ...],
                       kueue_version: str | None, capacity: tuple[str, ...]) -> None:  # fmt: skip
    """--adopt takes the clusters, their owners and hardware from the repository: a flag that
    would say otherwise is refused, not ignored."""
    given = click.get_current_context()
    defaulted = click.core.ParameterSource.DEFAULT
    named = [
        flag
        for flag, value in (
            ("--cluster", clusters),
            ("--owner", owners),
            ("--kueue-version", kueue_version),
            ("--capacity", capacity),
        )
        if value
    ]
    named += [
        f"--{p.replace('_', '-')}"
        for p in ("admission_label", "cohort")
        if given.get_parameter_source(p) != defaulted
    ]
    if named:
        raise click.UsageError(
            f"--adopt takes the clusters from the repository's profiles; {', '.join(named)} "
            "describe(s) a new cluster (`cluster add` writes one)"
        )


def _adopt(ctx: Context, root: Path, repo_url: str, revision: str) -> None:
    if not (root / CLUSTERS).is_dir():
        raise ConfigError(
            f"{root} has no {CLUSTERS}/: import a cluster first (`kueue-gitops import CLUSTER`), "
            "or write a repository from nothing with `kueue-gitops init --cluster NAME`"
        )
    repo = Repository.open(root)
    found = adopt.adopt(repo, repo_url, revision, _released_version(ctx))
    found.plan.create |= {p: text for p, text in exported_schemas().items()
                          if not (root / p).exists()}  # fmt: skip
    regenerated = _regenerate_owners(found.plan, root)
    written = [p for p in found.plan.write(root) if p not in regenerated]
    for path in found.kept:
        click.echo(f"kept {path} (it exists)")
    _report(written, regenerated, _adopted_next(sorted(repo.clusters), repo_url))


def _regenerate_owners(plan: files.Plan, root: Path) -> list[str]:
    plan.replace[codeowners.FILE] = codeowners.render(plan.pending(root))
    return [codeowners.FILE]


def _adopted_next(clusters: list[str], repo_url: str) -> str:
    """The safe path from an adopted repository to its first sync, in the order it is taken
    (README, "Use it in your repository")."""
    first = clusters[0]
    return (
        "next: the imported files are as they were. Then\n"
        "  kueue-gitops validate   # fix what it names, or accept today's findings with "
        "--baseline FILE --write-baseline\n"
        "  kueue-gitops generate policies   # with spec.admissionPolicies.enforcement: Warn in "
        "each cluster profile until nothing running is refused (docs/boundaries.md)\n"
        f"  kueue-gitops tenant add TEAM --cluster {first} --owner @ORG/TEAM --group GROUP "
        "--quota FLAVOR.RESOURCE=N   # bound and named as the imported tenants are\n"
        "  kueue-gitops plan diff --base origin/main --live   # on the branch, before the pull "
        "request\n"
        f"  kueue-gitops generate argocd --repo-url {repo_url} | kubectl apply --server-side "
        "-n argocd -f -   # once, after the merge: Argo CD syncs the repository"
    )


def _next_steps(first: start.ClusterStart, version: str) -> str:
    """What to do after init, down to a tenant whose queue admits a realistic Job: the quota
    names the flavor's GPUs (or its first resource) at the flavor's whole capacity; the other
    resources of the flavor (cpu, memory) follow in proportion (`tenant add`)."""
    example = next((q for q in first.capacity if "gpu" in q.resource), first.capacity[0])
    others = [q.resource for q in first.capacity if q.flavor == example.flavor and q != example]
    follow = f"   # {' and '.join(others)} of {example.flavor} follow in proportion"
    return (
        "next: label the nodes behind each flavor "
        f"{start.POOL_LABEL}=<flavor> (or edit resourceflavors.yaml and the capacity), then\n"
        "  kueue-gitops validate   # by the package's schemas of Kueue "
        f"{version}; `schemas fetch --cluster {first.name}` matches a live cluster exactly\n"
        f"  kueue-gitops tenant add TEAM --cluster {first.name} --owner @ORG/TEAM --group GROUP "
        f"--quota {example.flavor}.{example.resource}={example.amount}{follow if others else ''}"
    )
