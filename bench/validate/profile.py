"""Where a `validate` run's CPU goes, phase by phase, in one process (the `--jobs 1` path).

    python bench/validate/profile.py REPO cold|warm

`cold` caches nothing; `warm` uses the cache in $KUEUE_GITOPS_CACHE (run it once to fill the
cache, change a file, run it again). Prints a markdown table of CPU seconds per phase; the
interpreter's own start (~0.05 s) comes before it. For detail, run the command under cProfile.
"""

from __future__ import annotations

import functools
import gc
import sys
import time

gc.set_threshold(200_000, 30, 30)  # as `kueue-gitops validate` sets it
STARTED = time.process_time()

from pathlib import Path  # noqa: E402

import auditor.cli.main  # noqa: E402 - what the command imports
import auditor.cli.validate  # noqa: E402, F401
from auditor.repo import cache as repo_cache  # noqa: E402
from auditor.repo import cached  # noqa: E402
from auditor.repo.layout import Repository  # noqa: E402
from auditor.schemas.catalog import SchemaCatalog  # noqa: E402
from auditor.schemas.validator import ClusterValidator  # noqa: E402
from auditor.validate import checks, engine, kept  # noqa: E402

PHASES: dict[str, float] = {}


def spent(phase: str, since: float) -> float:
    now = time.process_time()
    PHASES[phase] = PHASES.get(phase, 0.0) + now - since
    return now


def main() -> None:
    root, warm = Path(sys.argv[1]).resolve(), sys.argv[2] == "warm"
    now = spent("imports", STARTED)
    repo = Repository.open(root)
    repo.clusters  # noqa: B018
    tool = repo_cache.tool_key() if warm else None
    if tool is not None:
        cached.tenants(repo, tool)
    now = spent("cluster profiles (warm: and the tool key)", now)
    repo.tenants  # noqa: B018
    now = spent("tenant profiles", now)
    names = sorted(repo.clusters)
    caches = {
        name: repo_cache.FileCache(
            root, name, tool, repo_cache.fingerprint(root / "schemas" / name)
        )
        for name in names
        if tool is not None
    }
    now = spent("schema fingerprints", now)
    loaded = cached.load(repo, names, caches)
    now = spent("the manifests (walk, read, YAML; warm: lstat, unpickle)", now)
    for name in names:
        validator = ClusterValidator(SchemaCatalog(root / "schemas", name))
        resources = loaded.for_cluster(name)
        judge = functools.partial(engine.judge, validator, cluster=name)
        verdicts = kept.verdicts(resources, judge, caches.get(name))
        sound = tuple(r for r, v in zip(resources, verdicts, strict=True) if v.sound)
        now = spent("version contract, JSON Schema, CEL", now)
        checks.run(checks.CheckContext(repo, repo.cluster(name), sound, repo.tenants))
        now = spent("policy checks", now)
    for cache in caches.values():
        cache.save()
    spent("writing the cache", now)
    print("| phase | CPU s |\n|---|---|")
    for phase, seconds in PHASES.items():
        print(f"| {phase} | {seconds:.2f} |")
    print(f"| total | {sum(PHASES.values()):.2f} |")


if __name__ == "__main__":
    main()
