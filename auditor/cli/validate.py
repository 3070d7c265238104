"""`kueue-gitops validate` and `kueue-gitops schemas fetch`."""

from __future__ import annotations

import importlib
import time
import typing as t
from pathlib import Path

import click

from auditor.cli.options import (
    Adoption,
    Context,
    baseline_options,
    cluster_access,
    cluster_deadline,
    emit,
    exit_for,
    metrics_output,
    one_cluster_context,
    output_format,
    pass_context,
    renderers_mode,
)
from auditor.errors import ConfigError
from auditor.lsp import ask
from auditor.model import Report
from auditor.repo.root import find_root
from auditor.rules import VALIDATE_STAGES

if t.TYPE_CHECKING:  # `schemas fetch` alone needs fetch (and the client's errors it imports)
    from types import ModuleType

    from auditor.schemas import fetch as schemas_fetch


def _schemas_dir(ctx: Context, given: Path | None) -> Path:
    if given is not None:
        return given
    root = ctx.repository().root
    return (root or Path.cwd()) / "schemas"


schemas_option = click.option(
    "--schemas",
    "schemas_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The schemas folder (default: schemas/ of the repository).",
)


@click.group()
def schemas() -> None:
    """The JSON Schemas under schemas/, fetched from the clusters' live CRDs and OpenAPI.

    A cluster without schemas/CLUSTER/ is judged by the schemas the package carries for its
    profile's Kueue release (on the pinned Kubernetes): nothing to fetch or build first."""


@schemas.command()
@click.option("--cluster", "cluster", required=True, help="Repo cluster to fetch for.")
@click.option(
    "--release",
    metavar="VERSION",
    help="Fetch from a sandbox of this pinned Kueue release (e.g. v0.17.0) instead of the live "
    "cluster: no cluster needed, only Go and the [sandbox] extra.",
)
@cluster_access
@cluster_deadline
@schemas_option
@pass_context
def fetch(
    ctx: Context,
    cluster: str,
    release: str | None,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    schemas_dir: Path | None,
) -> None:
    """Write schemas/CLUSTER/ from the cluster's served CRD versions and core OpenAPI.

    Committed schemas/CLUSTER/ win over the schemas the package carries for the cluster's Kueue
    release: fetch from the live cluster (without --release) to match what it really serves
    (another Kubernetes, other CRDs installed). With --release, from a sandbox running that
    Kueue release's CRDs on the pinned Kubernetes, started for the fetch and stopped after it
    (the package's own set, written into the repository).
    """
    from auditor.schemas import fetch as schemas_fetch

    profile = ctx.repository().cluster(cluster)
    if release is None:
        from auditor.live.access import connect  # the Kubernetes client only when it is read

        live = connect(profile, kubeconfig=kubeconfig, context=context, deadline=timeout)
        fetched = schemas_fetch.fetch(live)
    else:
        if profile.kueue_version and release != profile.kueue_version:
            ctx.note(
                f"{profile.file} says {cluster} runs Kueue {profile.kueue_version}, and these "
                f"schemas are {release}'s: validate judges the manifests by them"
            )
        fetched = _from_release(ctx, release)
        fetched.cluster = cluster
    root = _schemas_dir(ctx, schemas_dir)
    changed = schemas_fetch.write(fetched, root)
    click.echo(
        f"{cluster}: {len(fetched.schemas)} schemas of {len(fetched.kinds)} kinds in "
        f"{root / cluster}; {len(changed)} file(s) changed"
    )


def _from_release(ctx: Context, version: str) -> schemas_fetch.Fetched:
    """What a sandbox of Kueue `version` serves; the sandbox is gone afterwards."""
    from auditor.sandbox import pins, served

    return served.schemas(pins.testenv(ctx.repo_dir or Path.cwd()), version, log=ctx.note).fetched


@schemas.command("profiles")
@pass_context
def profile_schemas(ctx: Context) -> None:
    """Write the profiles' JSON Schemas to schemas/_profiles/, where the `yaml-language-server`
    line atop each profile.yaml points editors for completion and checks as you type."""
    from auditor.repo.profiles import export_schemas

    root = ctx.repository().root
    if root is None:
        raise ConfigError("schemas profiles writes into a working tree; pass --repo DIR")
    for path, changed in export_schemas(root):
        click.echo(f"{path}: {'written' if changed else 'unchanged'}")


@click.command()
@click.option(
    "--cluster",
    "clusters",
    multiple=True,
    help="Validate only for this cluster (repeatable; default: every cluster).",
)
@output_format
@click.option("--strict", is_flag=True, help="Warnings fail the run too.")
@click.option(
    "--only",
    "only",
    multiple=True,
    type=click.Choice(VALIDATE_STAGES),
    help="Report only this stage (repeatable): schema (API versions, schemas and CEL rules, "
    "kubeconform's scope: no policy check runs) or policy (the policy checks' findings). "
    "What reading the repository finds is always reported.",
)
@baseline_options
@click.option(
    "--server-side",
    is_flag=True,
    help="Also dry-run apply every object against the cluster (or a sandbox).",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Worker processes, one cluster each (default: the number of cores).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Neither read nor write the cache of per-file results (in the user cache directory).",
)
@click.option(
    "--clear-cache",
    is_flag=True,
    help="Remove every cached validate result first (this run fills the cache again).",
)
@click.option(
    "--resident/--no-resident",
    default=None,
    help="Ask this repository's resident validate, starting one if none runs (it exits after "
    "15 idle minutes); --no-resident: never ask one. Default: ask one that runs.",
)
@cluster_access
@cluster_deadline
@schemas_option
@metrics_output
@renderers_mode
@pass_context
def validate(
    ctx: Context,
    clusters: tuple[str, ...],
    output: str,
    strict: bool,
    only: tuple[str, ...],
    baseline_file: Path | None,
    write_baseline: bool,
    server_side: bool,
    jobs: int | None,
    no_cache: bool,
    clear_cache: bool,
    kubeconfig: str | None,
    context: str | None,
    timeout: float,
    schemas_dir: Path | None,
    metrics_file: Path | None,
    pushgateway: str | None,
    resident: bool | None,
) -> None:
    """Schemas, CEL rules, the API version contract and the policy checks, offline.

    With --server-side every object is also sent to its cluster as a server-side apply with
    dryRun=All (through the profile's context, or --kubeconfig/--context), so the real API
    server judges it too; rejections are findings.

    What each unchanged file was found to be is cached (keyed by its content, its cluster's
    schemas and the tool version) under $KUEUE_GITOPS_CACHE, $XDG_CACHE_HOME/kueue-gitops or
    ~/.cache/kueue-gitops, in validate/, and so is each policy check's findings, run again only
    when what the check read changed.

    With --baseline FILE, the findings recorded in FILE (by --write-baseline) fail nothing:
    the way to adopt the tool on a repository that has findings already (docs/usage.md).

    A resident validate (--resident starts one) keeps the repository loaded and answers with
    the report a cold run makes, after looking at what changed; a plain run asks one that
    runs, and says so (docs/usage.md).
    """
    adoption = Adoption.given(baseline_file, write_baseline, "validate")
    if clear_cache:
        from auditor.repo.cache import clear

        clear()
    if server_side:
        one_cluster_context(context, clusters)
        from auditor.live.access import connect  # offline validation never loads the client

    answered = _from_resident(ctx, find_root(ctx.repo_dir or Path.cwd()), resident, strict=strict)
    report = answered or _engine().validate(
        ctx.repository(),
        _schemas_dir(ctx, schemas_dir),
        clusters=list(clusters) or None,
        strict=strict,
        server_side=(
            (
                lambda profile: connect(
                    profile, kubeconfig=kubeconfig, context=context, deadline=timeout
                )
            )
            if server_side
            else None
        ),
        note=ctx.note,
        detail=ctx.detail,
        jobs=jobs,
        cache=not no_cache,
        only=only,
    )
    adoption.apply(ctx, report, partial=bool(clusters))
    emit(report, output)
    if metrics_file is not None or pushgateway:  # prometheus_client only when asked for
        from auditor.report import metrics as report_metrics

        report_metrics.export(
            report, metrics_file=metrics_file, pushgateway=pushgateway, partial=bool(clusters)
        )
    exit_for(report)


def _engine() -> ModuleType:
    """The validate pipeline, imported for a cold run only (a resident's answer needs none)."""
    return importlib.import_module("auditor.validate.engine")


# The options a resident's answer holds to (kubeconfig, context, timeout: for --server-side);
# any other given, one added later too, makes the run cold.
ANSWERED = frozenset(
    ("output", "strict", "baseline_file", "jobs", "resident", "kubeconfig", "context", "timeout")
)


def _from_resident(
    ctx: Context, root: Path, resident: bool | None, *, strict: bool
) -> Report | None:
    """The resident's report (auditor/lsp/ask.py), its notes said; None: a cold run (noted
    when a resident was there or asked for, and not used)."""
    if resident is False:
        return None
    given = click.get_current_context()
    default = click.core.ParameterSource.DEFAULT
    if any(given.get_parameter_source(n) != default for n in set(given.params) - ANSWERED):
        if resident:
            ctx.note("the resident answers a plain run of every cluster: a cold run")
        return None
    try:
        answer = ask.answer(root, start_one=bool(resident))
    except ask.Refused as exc:
        ctx.note(f"{exc}; a cold run")
        return None
    if answer is None:
        return None
    for message, minor in answer.notes:
        (ctx.detail if minor else ctx.note)(message)
    age = max(time.time() - answer.started, 0.0)
    ctx.note(f"answered by the resident validate (pid {answer.pid}, up {age / 60:.0f} min)")
    answer.report.strict = strict
    return answer.report
