"""Where a kueue-gitops repository is: the nearest folder at or above the current one that holds
clusters/ or the root file (kueue-gitops.yaml, auditor/repo/sources.py). Apart from the layout
so that finding it loads nothing else: a run the resident validate answers needs only this."""

from __future__ import annotations

from pathlib import Path

from auditor.errors import ConfigError

CLUSTERS = "clusters"
ROOT_FILE = "kueue-gitops.yaml"


def find_root(start: Path) -> Path:
    """The nearest folder at or above `start` that holds a clusters/ folder or the root file
    that says where the profiles are."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / CLUSTERS).is_dir() or (folder / ROOT_FILE).is_file():
            return folder
    raise ConfigError(
        f"no kueue-gitops repository (a folder with clusters/ or {ROOT_FILE}) at or "
        f"above {start}; run inside one or pass --repo DIR"
    )
