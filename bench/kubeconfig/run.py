"""How long a kubeconfig of many contexts takes to load: the Kubernetes client's loader against
ours (auditor/live/kubeconfigs.py), which kueue-gitops uses.

Each file has N contexts, N clusters and N users (token credentials); the context asked for is
the last one. Each load runs in a fresh process, stopped at its cap (the client's is quadratic:
its merge looks each name up in a list). Usage:

    .venv/bin/python bench/kubeconfig/run.py --sizes 1000,2000,4000,8000,40000 --cap 300
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

CLIENT = """
import sys
from kubernetes import client, config
cfg = type.__call__(client.Configuration)
config.load_kube_config(config_file=sys.argv[1], context=sys.argv[2], client_configuration=cfg)
assert cfg.host.endswith(sys.argv[3])
"""
OURS = """
import sys
from auditor.live.kube import KubeCluster
cluster = KubeCluster.connect("c", kubeconfig=sys.argv[1], context=sys.argv[2])
assert cluster.server.endswith(sys.argv[3])
"""


def kubeconfig(path: Path, size: int) -> None:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": f"c{i}", "cluster": {"server": f"https://127.0.0.1:{6443 + i}"}}
            for i in range(size)  # never contacted: only loaded
        ],
        "users": [{"name": f"u{i}", "user": {"token": f"token-{i}"}} for i in range(size)],
        "contexts": [
            {"name": f"ctx{i}", "context": {"cluster": f"c{i}", "user": f"u{i}"}}
            for i in range(size)
        ],
        "current-context": "ctx0",
    }
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def timed(code: str, path: Path, size: int, cap: float) -> str:
    started = time.monotonic()
    try:
        subprocess.run(
            [sys.executable, "-c", code, str(path), f"ctx{size - 1}", str(6443 + size - 1)],
            check=True,
            timeout=cap,
        )
    except subprocess.TimeoutExpired:
        return f"> {cap:g} s (stopped)"
    return f"{time.monotonic() - started:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,2000,4000,8000,40000")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds per load at most")
    args = parser.parse_args()
    print("| contexts | file | Kubernetes client's loader | ours (kueue-gitops) |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"kc-{size}"
            kubeconfig(path, size)
            mib = path.stat().st_size / 2**20
            ours = timed(OURS, path, size, args.cap)
            theirs = timed(CLIENT, path, size, args.cap)
            print(f"| {size:,} | {mib:.1f} MiB | {theirs} | {ours} |", flush=True)


if __name__ == "__main__":
    main()
