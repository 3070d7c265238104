"""What a person sees when a cluster cannot be reached or a kubeconfig cannot be read: a line or
two naming the cluster (or the file) and what is wrong, not one line per kind or Python's words."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.conftest import run_line


def closed_port() -> int:
    """A loopback port nothing listens on: connecting is refused at once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubeconfig(path: Path, server: str, context: str = "gpu-staging") -> Path:
    path.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: c, cluster: {{server: '{server}'}}}}]\n"
        "users: [{name: u, user: {token: t}}]\n"
        f"contexts: [{{name: {context}, context: {{cluster: c, user: u}}}}]\n"
        f"current-context: {context}\n"
    )
    return path


def test_an_unreachable_cluster_is_two_lines_not_one_per_kind(
    repo_copy: Path, tmp_path: Path
) -> None:
    kc = kubeconfig(tmp_path / "kc", f"https://127.0.0.1:{closed_port()}")
    result = run_line(
        ["kueue-gitops", "--repo", str(repo_copy), "drift", "--cluster", "gpu-staging",
         "--kubeconfig", str(kc)]
    )  # fmt: skip
    assert result.exit_code == 3
    lines = [line for line in result.stdout.splitlines() if line.startswith("INCOMPLETE")]
    assert len(lines) == 2, result.stdout
    assert "gpu-staging" in lines[0] and "unreachable" in lines[0]
    assert lines[1].startswith("INCOMPLETE gpu-staging: LIST not attempted (cluster unreachable): ")
    assert "ClusterQueue" in lines[1]  # every kind left unread is still named
