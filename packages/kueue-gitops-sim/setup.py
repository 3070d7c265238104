"""The build hook: the simulator compiled into the package, and the wheel tagged for the platform
it was compiled for.

The binaries are built by kueue-gitops's own build code (`auditor.sandbox.kueuesim.ship`) from
this checkout's pinned modules (testenv/), with the Go on PATH, for the platform Go targets
(GOOS/GOARCH; the native one unless set). That code needs kueue-gitops's dependencies, which the
isolated build environment lacks, so it runs in the interpreter KUEUE_GITOPS_PYTHON names (the
development virtualenv: `make dist`), else this one. KUEUE_GITOPS_SIM_RELEASES (space-separated)
limits the releases built (the tests build one); a release builds them all.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parents[2]  # the kueue-gitops checkout
# Go's target -> the wheel's platform tag. The binaries are static (no cgo): any glibc will do,
# hence the oldest manylinux; Go 1.26 runs on macOS 12 and later.
PLATFORMS = {
    ("linux", "amd64"): "manylinux_2_17_x86_64.manylinux2014_x86_64",
    ("linux", "arm64"): "manylinux_2_17_aarch64.manylinux2014_aarch64",
    ("darwin", "amd64"): "macosx_12_0_x86_64",
    ("darwin", "arm64"): "macosx_12_0_arm64",
}


def target() -> tuple[str, str]:
    out = subprocess.run(["go", "env", "GOOS", "GOARCH"], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"kueue-gitops-sim is compiled with Go: `go env` failed: {out.stderr}")
    goos, goarch = out.stdout.split()
    return goos, goarch


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        python = os.environ.get("KUEUE_GITOPS_PYTHON") or sys.executable
        releases = os.environ.get("KUEUE_GITOPS_SIM_RELEASES", "").split()
        dest = Path(self.build_lib).resolve() / "kueue_gitops_sim"
        argv = [python, "-m", "auditor.sandbox.kueuesim", str(ROOT / "testenv"), str(dest)]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's build code
        subprocess.run([*argv, *releases], cwd=ROOT, env=env, check=True)


class Binary(Distribution):
    """Binaries inside: a platform wheel, the package in platlib."""

    def has_ext_modules(self) -> bool:
        return True


class Wheel(bdist_wheel):
    def get_tag(self) -> tuple[str, str, str]:
        found = target()
        if found not in PLATFORMS:
            raise SystemExit(f"kueue-gitops-sim is not released for {'/'.join(found)}")
        return "py3", "none", PLATFORMS[found]


setup(distclass=Binary, cmdclass={"build_py": BuildPy, "bdist_wheel": Wheel})
