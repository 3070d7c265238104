"""`kueue-gitops sandbox ...`: the local control plane, for the demo, tests and dry runs."""

from __future__ import annotations

import json
import os
import time
import typing as t
from importlib import resources
from pathlib import Path

import click

from auditor.cli.options import Context, finish, output_format, pass_context
from auditor.errors import ConfigError, SandboxError
from auditor.live import apply as live_apply
from auditor.model import ClusterResult, Report
from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.repo.outfile import write_whole
from auditor.repo.profiles import ClusterProfile
from auditor.sandbox import (
    Sandbox,
    argocd,
    argocd_control,
    ensure_built,
    nodes,
    pins,
    pki,
    releases,
)
from auditor.sandbox.build import (
    KUEUE_MODULE,
    SANDBOX_TOOLS,
    TOOLS,
    cached_toolchain,
    derive_kueue_api,
    ensure_tool,
)
from auditor.sandbox.controlplane import sandboxes_root


def _testenv(ctx: Context) -> Path:
    """The repository's own testenv/, else the pins shipped in the package (sandbox/pins.py)."""
    return pins.testenv(ctx.repo_dir or Path.cwd())


def _repository(ctx: Context) -> Repository | None:
    """The repository, or None in a folder that is none yet: a team rehearses on a sandbox
    before its first import, and a sandbox needs no repository to run."""
    try:
        return ctx.repository()
    except ConfigError:
        if ctx.repo_dir is not None and not ctx.repo_dir.is_dir():
            raise  # --repo names no folder at all: a typo, not an empty repository
        return None


def _clusters(ctx: Context) -> dict[str, ClusterProfile]:
    repo = _repository(ctx)
    return repo.clusters if repo is not None else {}


def _names(ctx: Context, names: tuple[str, ...]) -> list[str]:
    if names:
        return list(names)
    return sorted(_clusters(ctx)) or ["default"]


@click.group()
def sandbox() -> None:
    """Local etcd + kube-apiserver with Kueue's CRDs, one per cluster name."""


@sandbox.command()
@click.option(
    "--tool",
    "tools",
    multiple=True,
    type=click.Choice(sorted(TOOLS)),
    help="Build only this peer tool from testenv/tools/ (repeatable), nothing else.",
)
@pass_context
def build(ctx: Context, tools: tuple[str, ...]) -> None:
    """Build into the cache, unless already there: the pinned control plane, every pinned
    Kueue release (testenv/kueue-*/) and kwok; with --tool, only the tools named (the
    renderers need no control plane, which takes many minutes to build)."""
    testenv = _testenv(ctx)
    if not tools:
        _build_control_plane(testenv)
    for tool in tools or SANDBOX_TOOLS:
        started = time.monotonic()
        binary = ensure_tool(testenv, tool, TOOLS[tool], log=lambda m: click.echo(m, err=True))
        took = time.monotonic() - started
        click.echo(f"{tool}: ready in {took:.0f}s (cached unless just built); {binary}")


def _build_control_plane(testenv: Path) -> None:
    """The control plane and every pinned Kueue release, each line saying what it took."""
    was_cached = cached_toolchain(testenv).is_complete()
    started = time.monotonic()
    toolchain = ensure_built(testenv, log=lambda m: click.echo(m, err=True))
    took = time.monotonic() - started
    how = (
        f"cached (checked in {took:.1f}s; built earlier in {toolchain.build_seconds:.0f}s)"
        if was_cached
        else f"built now in {took:.0f}s"
    )
    versions = ", ".join(f"{m} {v}" for m, v in toolchain.versions.items())
    click.echo(f"control-plane build: {how}; {versions}; cache {toolchain.root}")
    each = ", ".join(f"{n} {s:.0f}s" for n, s in toolchain.binary_seconds.items())
    if each:
        click.echo(f"control-plane binaries built in: {each}")
    for version in releases.pinned(testenv):
        started = time.monotonic()
        found = releases.ensure_kueue(testenv, version, log=lambda m: click.echo(m, err=True))
        took = time.monotonic() - started
        click.echo(
            f"Kueue {version}: ready in {took:.0f}s (built in "
            f"{releases.build_seconds(found):.0f}s); {found.root}"
        )


@sandbox.command("kueue-api")
@click.option(
    "--write",
    is_flag=True,
    help="Store it, and the schemas the release serves, where validate reads them (a source tree).",
)
@click.option(
    "--kueue",
    "version",
    metavar="VERSION",
    help="A release pinned in testenv/kueue-VERSION/ (default: the control plane's).",
)
@click.option("--all", "every", is_flag=True, help="Every pinned release (with --write).")
@pass_context
def kueue_api(ctx: Context, write: bool, version: str | None, every: bool) -> None:
    """Derive what this tool knows of a pinned Kueue release, from the release itself.

    testenv/kueueapi, built in the release's own module, states its Configuration API (from
    the Go types Kueue decodes it into), its job frameworks, and what its validating webhooks
    refuse (each webhook rule's examples, and the caps on counts, judged by its own code); its
    CRDs and install manifests state what each kind serves and stores, which convert through
    Kueue's webhook, and which its webhooks judge. Prints the JSON, or with --write stores it
    as auditor/kueue/api/<release>.json, which validate, the sandbox and upgrade-check read,
    and stores the JSON Schemas the pinned Kubernetes serves with the release's CRDs (read
    from a sandbox, as `schemas fetch` reads a cluster) in auditor/schemas/packaged/: what
    validate judges a cluster of that release by when the repository has no schemas/CLUSTER/.

    Adding a Kueue release is a module testenv/kueue-VERSION/ (go.mod and tools.go, as the
    others) and `kueue-gitops sandbox kueue-api --kueue VERSION --write`.
    """
    testenv = _testenv(ctx)
    if every and (version or not write):
        raise click.UsageError("--all re-derives every pinned release: it takes --write only")
    chosen: list[str | None] = [None, *releases.pinned(testenv)] if every else [version]
    for each in chosen:
        derived = derive_kueue_api(testenv, each)
        text = json.dumps(derived, indent=2, sort_keys=True) + "\n"
        if not write:
            click.echo(text, nl=False)
            continue
        target = Path(str(resources.files("auditor.kueue").joinpath("api"))) / (
            f"{derived['kueue']}.json"
        )
        unchanged = target.is_file() and target.read_text() == text
        if not unchanged:
            write_whole(target, text, what="the release's knowledge")
        click.echo(f"{target}: Kueue {derived['kueue']}, {'unchanged' if unchanged else 'written'}")
        _write_packaged_schemas(testenv, each)


def _write_packaged_schemas(testenv: Path, version: str | None) -> None:
    """The schemas a sandbox of Kueue `version` serves, stored as the package's set of it."""
    from auditor.sandbox import served
    from auditor.schemas import fetch
    from auditor.schemas.catalog import PACKAGED

    got = served.schemas(testenv, version, log=lambda m: click.echo(m, err=True))
    folder = Path(str(resources.files("auditor.schemas").joinpath(PACKAGED)))
    changed = fetch.write_packaged(got.fetched, got.kueue, got.kubernetes, folder)
    click.echo(
        f"{folder}: schemas of Kueue {got.kueue} on Kubernetes {got.kubernetes}, "
        f"{len(got.fetched.schemas)} schemas of {len(got.fetched.kinds)} kinds; "
        f"{len(changed)} file(s) changed"
    )


@sandbox.command()
@click.argument("names", nargs=-1)
@click.option("--timeout", default=120.0, show_default=True, help="Seconds to wait for /readyz.")
@click.option(
    "--with-kueue",
    is_flag=True,
    help="Also run Kueue (webhooks, conversion), kube-controller-manager, kube-scheduler and "
    "kwok's simulated node pools (the profile's capacity), e.g. for verify.",
)
@click.option(
    "--with-argocd",
    is_flag=True,
    help="Also run Argo CD in the first NAME, syncing this repository into every sandbox.",
)
@pass_context
def up(
    ctx: Context, names: tuple[str, ...], timeout: float, with_kueue: bool, with_argocd: bool
) -> None:
    """Build what is missing, then start a sandbox per NAME (default: every repo cluster;
    `default` in a folder that is no repository yet, where a team rehearses before its first
    import).

    Each sandbox's kubeconfig context is its name, so a cluster profile's context reaches the
    sandbox of the same name once `eval "$(kueue-gitops sandbox env)"` has run. With
    --with-kueue, Kueue starts from the Configuration in clusters/NAME/kueue/ when NAME is a
    repository cluster (Kueue's defaults otherwise). With --with-argocd, Argo CD runs in the
    first NAME's sandbox (namespace argocd), every running sandbox named after a repository
    cluster is registered with it, and it syncs the working tree's current state (served
    from a local clone) through the ApplicationSets of argocd/.

    A repository cluster's sandbox runs the Kueue release its profile names (spec.kueue.version,
    pinned under testenv/). With --with-kueue it also gets a node per ResourceFlavor with the
    capacity the profile declares, simulated by kwok: Pods are scheduled, run and complete,
    but no container runs.
    """
    say = lambda m: click.echo(m, err=True)  # noqa: E731
    pki.require_extra()  # before minutes of building, not after
    toolchain = ensure_built(_testenv(ctx), log=say)
    if with_argocd and _repository(ctx) is None:
        raise ConfigError(
            "--with-argocd syncs this repository, and there is none here (no clusters/): "
            "start the sandbox without it, or `kueue-gitops import` a cluster first"
        )
    for name in _names(ctx, names):
        box = Sandbox(name)
        config, pools, release = None, [], None
        if name in _clusters(ctx):
            profile = ctx.repository().cluster(name)
            release = releases.release(toolchain, profile.kueue_version, log=say)
            if with_kueue:
                config = boundaries.kueue_configuration(ctx.repository(), name)
                pools = nodes.pools_for(ctx.repository(), name)
        state = box.up(
            toolchain,
            timeout=timeout,
            log=say,
            with_kueue=with_kueue,
            kueue_config=config,
            node_pools=pools,
            kueue_release=release,
        )
        kueue = state.versions.get(KUEUE_MODULE, "")
        click.echo(
            f"{name}: up at https://127.0.0.1:{state.api_port} "
            f"(ready in {state.ready_seconds}s{f' with Kueue {kueue}' if with_kueue else ''}"
            f"{f', {len(pools)} simulated node(s)' if pools else ''}), "
            f"kubeconfig {box.kubeconfig}"
        )
    if with_argocd:
        _start_argocd(ctx, Sandbox(_names(ctx, names)[0]), timeout)


def _start_argocd(ctx: Context, host: Sandbox, timeout: float) -> None:
    repo = ctx.repository()
    clusters = {c: Sandbox(c) for c in sorted(repo.clusters) if Sandbox(c).running()}
    say = lambda m: click.echo(m, err=True)  # noqa: E731
    argocd.start(host, clusters, repo, _testenv(ctx), log=say)
    wanted = set(clusters)

    def synced(apps: dict[str, t.Any]) -> bool:
        mine = [a for a in apps.values() if argocd_control.destination(a) in wanted]
        return bool(mine) and all(
            argocd_control.sync_status(a) == ("Synced", "Healthy") for a in mine
        )

    apps = argocd_control.wait_for(host, synced, timeout=timeout, what="every Application synced")
    for name, app in sorted(apps.items()):
        click.echo(f"argocd: Application {name} -> {argocd_control.destination(app)}: "
                   + "/".join(argocd_control.sync_status(app)))  # fmt: skip
    memory = ", ".join(f"{n} {m:.0f} MiB" for n, m in argocd_control.memory_mib(host).items())
    click.echo(f"argocd: peak memory {memory}")


@sandbox.command()
@click.argument("names", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Stop every sandbox, whatever its name.")
@pass_context
def down(ctx: Context, names: tuple[str, ...], every: bool) -> None:
    """Stop the sandboxes NAME (default: every repo cluster) and every process they started."""
    chosen = _all_names() if every else _names(ctx, names)
    for name in chosen:
        stopped = Sandbox(name).down()
        click.echo(f"{name}: " + (f"stopped {', '.join(stopped)}" if stopped else "not running"))


def _shown(ctx: Context, every: bool) -> list[str]:
    """The sandboxes status and env speak of: this repository's clusters' (all of them with
    --all, or outside a repository), saying on stderr how many others were left out."""
    names = _all_names()
    if every:
        return names
    try:
        mine = set(ctx.repository().clusters)
    except ConfigError:
        return names
    others = [n for n in names if n not in mine and Sandbox(n).state() is not None]
    if others:
        ctx.note(
            f"{len(others)} sandbox(es) of no cluster of this repository ({', '.join(others)}): "
            "--all shows them"
        )
    return [n for n in names if n in mine]


_ALL = click.option(
    "--all", "every", is_flag=True, help="Every sandbox, not only this repository's clusters'."
)


@sandbox.command()
@_ALL
@pass_context
def status(ctx: Context, every: bool) -> None:
    """List this repository's sandboxes and whether they run. A listing, not a report: a
    stale sandbox (a process died) is an error after the list (exit 3)."""
    stale = []
    for name in _shown(ctx, every):
        box = Sandbox(name)
        state = box.state()
        if state is None:
            continue
        running = box.running()
        if not running:
            stale.append(name)
        click.echo(
            f"{name}: {'running' if running else 'STALE (a process died)'} "
            f"at https://127.0.0.1:{state.api_port} kubeconfig {box.kubeconfig}"
        )
    if stale:
        names = " ".join(stale)
        raise SandboxError(
            f"sandbox(es) {', '.join(stale)} stale (a process died): "
            f"`kueue-gitops sandbox down {names}` then `kueue-gitops sandbox up {names}`"
        )


@sandbox.command()
@_ALL
@pass_context
def env(ctx: Context, every: bool) -> None:
    """Print `export KUBECONFIG=...` covering this repository's running sandboxes."""
    files = [str(Sandbox(n).kubeconfig) for n in _shown(ctx, every) if Sandbox(n).running()]
    if not files:
        raise SandboxError("no sandbox is running; start one with `kueue-gitops sandbox up`")
    click.echo(f"export KUBECONFIG={os.pathsep.join(files)}")


@sandbox.command()
@click.option("--cluster", "cluster", required=True, help="Repo cluster whose manifests to apply.")
@click.option("--name", help="Sandbox to apply to (default: the one named like the cluster).")
@output_format
@pass_context
def apply(ctx: Context, cluster: str, name: str | None, output: str) -> None:
    """Apply clusters/C and tenants/*/C with server-side apply, as Argo CD would. Each object's
    outcome goes to stderr; the report holds the manifests' findings (exit 1) and, as the
    cluster's errors, the objects the API server rejected (the sync incomplete: exit 3)."""
    repo = ctx.repository()
    loaded = repo.load([cluster])
    box = Sandbox(name or cluster)
    if not box.running():
        raise SandboxError(
            f"sandbox {box.name} is not running; `kueue-gitops sandbox up {box.name}`"
        )
    results = live_apply.apply_all(box.connect(), loaded.for_cluster(cluster))
    errors = []
    for r in results:
        mark = "FAILED" if r.error else "applied"
        click.echo(f"{mark:>8} {r.resource.key}  ({r.resource.file}:{r.resource.line})", err=True)
        if r.error:
            errors.append(f"{r.resource.key} ({r.resource.file}:{r.resource.line}): {r.error}")
    click.echo(f"{len(results) - len(errors)} applied, {len(errors)} rejected", err=True)
    result = ClusterResult(cluster, status="incomplete" if errors else "ok", errors=errors)
    finish(Report("sandbox apply", findings=list(loaded.findings), clusters=[result]), output)


def _all_names() -> list[str]:
    root = sandboxes_root()
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
