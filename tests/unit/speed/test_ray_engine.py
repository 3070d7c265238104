"""`plan sweep --on ray`: what a user sees before any simulation runs: the extra missing
(exit 2, the install line), a Ray cluster that cannot be reached or does not answer as one
(exit 3, its address, within the deadline), an engine that does not exist (exit 2). The
runs on a real Ray cluster are tests/integration/test_sweep_ray.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from auditor.cli.main import cli


def plan(tmp_path: Path, *on: str) -> Result:
    argv = ["--repo", str(tmp_path), "plan", "sweep", str(tmp_path / "grid.yaml"),
            "--trace", str(tmp_path / "day.json"), *on]  # fmt: skip
    return CliRunner().invoke(cli, argv)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_without_the_extra_the_error_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as when not installed
    result = plan(tmp_path, "--on", "ray=127.0.0.1:6379")
    assert result.exit_code == 2, result.output
    assert "pip install 'kueue-gitops[ray]'" in result.output
    assert "Traceback" not in result.output


def test_a_ray_cluster_that_cannot_be_reached_is_exit_3_naming_it(tmp_path: Path) -> None:
    address = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    result = plan(tmp_path, "--on", f"ray={address}")
    assert result.exit_code == 3, result.output
    assert f"the Ray cluster at {address} cannot be reached" in result.output
    assert time.monotonic() - started < 10


def test_a_port_that_does_not_answer_as_ray_is_exit_3_at_the_deadline(tmp_path: Path) -> None:
    """Ray would retry for minutes: the join is given CONNECT_DEADLINE (3 s here), and the
    process ends at once with its report of why."""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(64)  # accepts, never speaks
    port = silent.getsockname()[1]
    stop = threading.Event()

    def hold() -> None:
        held = []
        silent.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(silent.accept()[0])
            except OSError:
                continue
        for c in held:
            c.close()

    holder = threading.Thread(target=hold)
    holder.start()
    code = (
        "import sys, auditor.speed.ray as r; r.CONNECT_DEADLINE = 3.0\n"
        "from auditor.cli.main import main; sys.argv[0] = 'kueue-gitops'; main()"
    )
    argv = [sys.executable, "-c", code, "--repo", str(tmp_path), "plan", "sweep",
            str(tmp_path / "grid.yaml"), "--trace", str(tmp_path / "day.json"),
            "--on", f"ray=127.0.0.1:{port}"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    try:
        started = time.monotonic()
        done = subprocess.run(
            argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env
        )
        took = time.monotonic() - started
    finally:
        stop.set()
        holder.join()
        silent.close()
    assert done.returncode == 3, done.stderr
    assert (
        f"could not join the Ray cluster at 127.0.0.1:{port}: no answer within 3 s" in done.stderr
    )
    assert took < 20


@pytest.mark.parametrize(
    ("on", "says"),
    [
        (["--on", "dask"], "--on dask: an engine is local, ray or ray=ADDRESS"),
        (["--on", "ray="], "--on ray=: an engine is local, ray or ray=ADDRESS"),
        (["--on", "ray=nowhere"], "a Ray address is HOST:PORT or ray://HOST:PORT"),
    ],
)
def test_an_engine_it_cannot_use_is_refused(tmp_path: Path, on: list[str], says: str) -> None:
    result = plan(tmp_path, *on)
    assert result.exit_code == 2, result.output
    assert says in result.output


def test_on_without_a_sweep_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--repo", str(tmp_path), "plan", "diff", "--base", "HEAD~1", "--on", "ray"]
    )
    assert result.exit_code == 2
    assert "No such option '--on'" in result.output
