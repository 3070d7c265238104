"""What rendering costs validate: an estate of N kustomize overlays (one per cluster, each a
patch over one base) synced by one ApplicationSet, validated cold (every overlay rendered by
the real kustomize), warm (every render served from the cache) and after one overlay's patch
changed (that overlay alone rendered again).

    .venv/bin/python bench/render/run.py --overlays 200

2026-12-03, the 2-core machine at load 5-10 (other work running), main + issue 37's branch:
200 overlays (200 clusters): cold 68.0 s (49.2 CPU-s), warm 15.7 s (9.8 CPU-s), one overlay's
patch changed 9.9 s (9.8 CPU-s): the warm runs render nothing; what is left is validate over 200
clusters (a worker each, each reading the Applications again).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ESTATE = ROOT / "tests" / "data" / "rendered" / "kustomize"


def estate(root: Path, overlays: int) -> None:
    """The kustomize estate's base and ApplicationSet, with `overlays` clusters."""
    shutil.copytree(ESTATE / "queues" / "base", root / "queues" / "base")
    shutil.copytree(ESTATE / "argo", root / "argo")
    (root / "argo" / "access.yaml").unlink(missing_ok=True)
    profile = (ESTATE / "fleet" / "east.yaml").read_text()
    clusters, tenants = [], ["vision", "speech"]
    for i in range(overlays):
        name = f"site-{i:03d}"
        clusters.append(name)
        (root / "fleet").mkdir(exist_ok=True)
        (root / "fleet" / f"{name}.yaml").write_text(profile.replace("east", name))
        folder = root / "queues" / "overlays" / name
        folder.mkdir(parents=True)
        shutil.copy(ESTATE / "queues/overlays/west/kustomization.yaml", folder)
        patch = (ESTATE / "queues/overlays/west/quotas.yaml").read_text()
        (folder / "quotas.yaml").write_text(patch.replace('"48"', f'"{16 + i % 64}"'))
    for tenant in tenants:
        text = (ESTATE / "teams" / tenant / "profile.yaml").read_text()
        lines = [ln for ln in text.splitlines() if not ln.startswith(("    east:", "    west:"))]
        at = lines.index("  clusters:") + 1
        entry = f"{{namespaces: [{tenant}], clusterQueues: [{tenant}]}}"
        lines[at:at] = [f"    {c}: {entry}" for c in clusters]
        (root / "teams" / tenant).mkdir(parents=True)
        (root / "teams" / tenant / "profile.yaml").write_text("\n".join(lines) + "\n")
    layout = ["apiVersion: kueue-gitops.io/v1alpha1", "kind: Layout", "clusters:"]
    layout += [f"  {c}: fleet/{c}.yaml" for c in clusters]
    layout += ["tenants:", *(f"  {t}: teams/{t}/profile.yaml" for t in tenants)]
    (root / "kueue-gitops.yaml").write_text("\n".join(layout) + "\n")


def timed(root: Path, cache: Path) -> tuple[float, float]:
    env = {**os.environ, "KUEUE_GITOPS_CACHE": str(cache)}
    for sub in ("tools",):  # the renderers the user cache holds, without its other entries
        src = Path.home() / ".cache" / "kueue-gitops" / sub
        if src.is_dir() and not (cache / sub).exists():
            shutil.copytree(src / "kustomize", cache / sub / "kustomize")
    started, cpu = time.monotonic(), os.times()
    subprocess.run(
        [str(ROOT / ".venv/bin/kueue-gitops"), "--repo", str(root), "validate", "-o", "json"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    after = os.times()
    return time.monotonic() - started, after.children_user + after.children_system - (
        cpu.children_user + cpu.children_system
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--overlays", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root, cache = Path(scratch) / "estate", Path(scratch) / "cache"
        estate(root, args.overlays)
        cold = timed(root, cache)
        warm = timed(root, cache)
        patch = root / "queues/overlays/site-000/quotas.yaml"
        patch.write_text(patch.read_text().replace('"16"', '"17"'))
        one = timed(root, cache)
    print(f"{args.overlays} overlays: cold {cold[0]:.1f}s ({cold[1]:.1f} CPU-s), "
          f"warm {warm[0]:.1f}s ({warm[1]:.1f} CPU-s), one overlay changed {one[0]:.1f}s "
          f"({one[1]:.1f} CPU-s)")  # fmt: skip
    sys.stdout.flush()


if __name__ == "__main__":
    main()
