"""Each cluster's pack in the user cache (auditor/repo/cache.py), opened one way for every
pipeline: validate and drift read and fill the same packs, so a scheduled drift after a
validate (or the other way round) parses only the files that changed.

A pack is keyed by the tool (its version and source: `tool`) and by what validate's verdicts
kept in it depend on beside the files: the cluster's schemas (their fingerprint) and its Kueue
release (which kinds Kueue's webhooks decode and rewrite).
"""

from __future__ import annotations

import typing as t
from pathlib import Path

from auditor.errors import ConfigError
from auditor.kueue import release
from auditor.repo import cache as repo_cache
from auditor.schemas import catalog

if t.TYPE_CHECKING:
    from auditor.repo.layout import Repository


def tool(repo: Repository, on: bool) -> str | None:
    """The cache's tool key when the cache is `on` and the repository a working tree (a git
    revision is read whole, never cached); None otherwise."""
    return repo_cache.tool_key() if on and repo.root is not None else None


def of_cluster(
    repo: Repository, schemas_root: Path | None, name: str, tool: str | None
) -> repo_cache.FileCache | None:
    """Cluster `name`'s pack; None when the cache is off (no `tool`), or the cluster's profile
    or schemas cannot be read (reported where they are next read; the run goes uncached)."""
    if tool is None or repo.root is None:
        return None
    try:
        kueue = repo.cluster(name).kueue_version
        found = catalog.find(schemas_root, name, kueue)
        if found is None:
            return None
        key = f"{found.fingerprint()}+{release.nearest_release(kueue).version}"
        return repo_cache.FileCache(repo.root, name, tool, key)
    except (OSError, ConfigError):
        return None


def of_clusters(
    repo: Repository, schemas_root: Path | None, names: t.Iterable[str], tool: str | None
) -> dict[str, repo_cache.FileCache]:
    """The packs of `names` that `of_cluster` opens."""
    packs = {name: of_cluster(repo, schemas_root, name, tool) for name in names}
    return {name: pack for name, pack in packs.items() if pack is not None}
