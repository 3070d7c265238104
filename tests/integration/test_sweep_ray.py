"""`plan sweep --on ray`: the sweep's simulations as tasks on a real Ray cluster, which this
module starts (`ray start --head` on loopback, two CPUs, no dashboard, token authentication)
and stops. The report must be the local run's, byte for byte, on the constructed case of
tests/integration/test_plan_sweep.py (whose known answer is a quota of 3).

The commands are the user's: the released wheel installed with [ray] in a fresh virtualenv
(tests/installed.py), in a shell of its own; without the extra, the plain install says which to
install. The cluster's Python sees Ray and nothing of kueue-gitops (a virtualenv of its own that
reads the development environment's site-packages as a plain path, so this checkout's editable
install is not loaded): as on a real RayCluster, only Ray and Python are on the workers, and
the simulator reaches them through Ray's object store.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
import typing as t
import venv
from pathlib import Path

import pytest

from auditor.sandbox.services import free_port
from tests.conftest import ROOT
from tests.installed import run

TOKEN = secrets.token_hex(32)
AUTH = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": TOKEN}


class Head(t.NamedTuple):
    address: str
    kept: Path  # where the workers keep what the object store brought them


@pytest.fixture(scope="module")
def kg(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install 'kueue-gitops[ray]'` into a fresh virtualenv, within the development
    lock's pins (so its Ray is the test cluster's, as Ray requires); its kueue-gitops."""
    env = tmp_path_factory.mktemp("venv-ray")
    venv.create(env, with_pip=True)
    lock = str(ROOT / "requirements-dev.lock")
    installed = run([str(env / "bin/pip"), "install", "--quiet", "-c", lock, f"{wheel}[ray]"], env)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return env / "bin/kueue-gitops"


def ray_python(home: Path) -> str:
    """A Python that imports Ray and not kueue-gitops: a virtualenv reading the development
    environment's site-packages as a plain path (its .pth files, the editable install's among
    them, unread)."""
    own = home / "py"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(own)], check=True)
    site = own / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    (site / "site-packages" / "dev.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    python = str(own / "bin" / "python")
    alone = subprocess.run(
        [python, "-c", "import ray, auditor"], cwd=home, capture_output=True, text=True
    )
    assert "No module named 'auditor'" in alone.stderr  # Ray there, kueue-gitops not
    return python


@pytest.fixture(scope="module")
def ray_head() -> t.Iterator[Head]:
    home = Path(tempfile.mkdtemp(prefix="kgray-", dir="/tmp"))  # short: Ray's sockets live here
    try:
        yield from _head(home)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _head(home: Path) -> t.Iterator[Head]:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env |= AUTH | {"TMPDIR": str(home), "RAY_USAGE_STATS_ENABLED": "0"}
    argv = [ray_python(home), "-m", "ray.scripts.scripts", "start", "--head", "--block",
            "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", "2",
            "--include-dashboard", "false", "--temp-dir", str(home / "r")]  # fmt: skip
    with (home / "head.log").open("w") as log:
        head = subprocess.Popen(
            argv, cwd=home, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            deadline = time.monotonic() + 120
            while "Ray runtime started" not in (home / "head.log").read_text():
                assert head.poll() is None, (home / "head.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "the Ray head did not start within 120 s"
                time.sleep(0.2)
            yield Head(f"127.0.0.1:{port}", home / "kueue-gitops-programs")
        finally:
            head.send_signal(signal.SIGTERM)  # `ray start --block` stops what it started
            try:
                head.wait(60)
            finally:
                left = _in_group(head.pid)
                if left:
                    os.killpg(head.pid, signal.SIGKILL)
            assert not left, f"Ray left processes behind: {left}"


def _in_group(pgid: int) -> list[str]:
    """The processes still in the head's process group (ps, as a user would look)."""
    ps = subprocess.run(["ps", "-eo", "pgid=,pid=,args="], capture_output=True, text=True)
    return [line.strip() for line in ps.stdout.splitlines() if line.split()[0] == str(pgid)]


def sweep(kg: Path, root: Path, fmt: str, *on: str, env: dict[str, str] | None = None) -> str:
    """The user's command, in a session of its own (its processes, and any it leaves, in its
    process group); its report (stdout)."""
    argv = [str(kg), "--repo", str(root), "plan", "sweep",
            str(root / "grid.yaml"), "--trace", str(root / "day.json"), "--cluster", "lab",
            "-o", fmt, *on]  # fmt: skip
    base = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    base.pop("RAY_ADDRESS", None)
    command = subprocess.Popen(
        argv, cwd=root.parent, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=base | (env or {}), start_new_session=True,
    )  # fmt: skip
    try:
        stdout, stderr = command.communicate(timeout=600)
    finally:
        left = _in_group(command.pid)
        if left:
            os.killpg(command.pid, signal.SIGKILL)
    assert command.returncode == 0, stderr[-3000:]
    assert not left, f"the command left processes behind: {left}"
    return stdout


def test_without_the_extra_the_command_says_which_to_install(base_install: Path) -> None:
    done = run([str(base_install), "plan", "sweep", "g.yaml", "--trace", "t.json", "--on",
                "ray"], base_install.parent)  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "--on ray needs the 'ray' extra (Ray's client): pip install 'kueue-gitops[ray]'" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr


def test_bare_ray_starts_a_local_instance_for_the_run_and_stops_it(
    kg: Path, sweep_case: Path
) -> None:
    """Before the module starts its Ray head: no Ray cluster runs, so `ray.init()` starts one."""
    home = Path(tempfile.mkdtemp(prefix="kgray-", dir="/tmp"))
    try:
        env = AUTH | {"TMPDIR": str(home), "RAY_USAGE_STATS_ENABLED": "0"}
        assert sweep(kg, sweep_case, "json", "--on", "ray", env=env) == sweep(
            kg, sweep_case, "json"
        )
        assert list((home / "kueue-gitops-programs").glob("*/kueuesim"))  # ran on Ray
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_the_sweep_on_ray_is_the_local_run_byte_for_byte(
    kg: Path,
    sweep_case: Path,
    ray_head: Head,
) -> None:
    local = sweep(kg, sweep_case, "json")
    started = time.monotonic()
    on_ray = sweep(kg, sweep_case, "json", "--on", f"ray={ray_head.address}", env=AUTH)
    took = time.monotonic() - started
    assert on_ray == local
    best = json.loads(on_ray)["sweep"]["best"]
    assert best["values"]["team-a-cq a100/nvidia.com/gpu nominalQuota"] == "3"
    # the simulator reached the workers through the object store, kept under its SHA-256
    [kept] = ray_head.kept.glob("*/kueuesim")
    assert kept.parent.name == hashlib.sha256(kept.read_bytes()).hexdigest()
    assert took < 120, f"ten simulations on Ray took {took:.0f} s"


def test_bare_ray_joins_the_cluster_RAY_ADDRESS_names(
    kg: Path,
    sweep_case: Path,
    ray_head: Head,
) -> None:
    local = sweep(kg, sweep_case, "text")
    on_ray = sweep(
        kg, sweep_case, "text", "--on", "ray", env=AUTH | {"RAY_ADDRESS": ray_head.address}
    )
    assert on_ray == local
    assert "nominalQuota 2 -> 3" in on_ray
