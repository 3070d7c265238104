"""`kueue-gitops cache clean`: free the user cache (auditor/cache.py); builds only when asked."""

from __future__ import annotations

import click

from auditor import cache


@click.group()
def cache_group() -> None:
    """The user cache ($KUEUE_GITOPS_CACHE, $XDG_CACHE_HOME/kueue-gitops, ~/.cache/kueue-gitops)."""


@cache_group.command()
@click.option(
    "--builds",
    is_flag=True,
    help="Remove the builds too (Kubernetes, Kueue, the simulator, the pinned tools: about "
    "twenty minutes to build again). The sandboxes' state is `sandbox down`'s, never removed.",
)
@click.option("--dry-run", is_flag=True, help="List what would be removed; remove nothing.")
def clean(builds: bool, dry_run: bool) -> None:
    """Remove what the cache holds, an area at a time, listing each area and what it freed.

    Only the cache's own areas directly under its root are removed; the builds stay unless
    --builds names them. Every cached result is made again on the next run that needs it.
    """
    freed = cache.clean(builds=builds, dry_run=dry_run)
    verb = "would free" if dry_run else "freed"
    for entry in freed:
        click.echo(f"{_mib(entry.size):>10}  {entry.path}  ({entry.area.what})")
    total = sum(entry.size for entry in freed)
    click.echo(f"{verb} {_mib(total)} under {cache.root()}")
    kept = [a.name for a in cache.AREAS.values() if a.build and (cache.root() / a.name).is_dir()]
    if kept and not builds:
        click.echo(f"kept the builds ({', '.join(kept)}); --builds removes them")


def _mib(size: int) -> str:
    return f"{size / cache.MiB:.1f} MiB"
