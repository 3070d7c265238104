"""Build testenv/kueuesim, the replay simulator, in the module of the Kueue release it links.

The simulator links a release's own scheduler, caches and workload handlers, so it is built in
the Go module that pins that release: testenv/ for the control plane's Kueue, and
testenv/kueue-<version>/ for another (as testenv/kueueapi is). The binary is cached by the hash
of that module's go.mod and go.sum, the simulator's source and the Go version. A release without
the kueue.x-k8s.io/v1beta2 API the simulator is written against (v0.9.1) cannot be simulated:
SimulationUnavailable says so, and `plan --replay` falls back to `--engine kueue`.
"""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

from auditor.errors import SandboxError
from auditor.sandbox.build import (
    KUEUE_MODULE,
    _go,
    _kueue_dir,
    build_once,
    cache_root,
    module_key,
)
from auditor.sandbox.releases import pinned

SOURCE = "kueuesim"  # testenv/kueuesim/
# `schedule`, the scheduler's cycle, is reached by go:linkname (one cycle per call, as Kueue's
# own unit tests drive it): Go 1.23+ wants the linker's check off for that.
LDFLAGS = "-s -w -checklinkname=0"


class SimulationUnavailable(SandboxError):
    """This Kueue release cannot be simulated. The message says why, not what to do instead:
    `plan --replay` falls back to the real engine itself; --live, --job and --sweep cannot."""


def module_for(testenv: Path, version: str | None) -> Path:
    """The Go module pinning `version` (None: the control plane's)."""
    if version is None:
        return testenv
    own = _go("list", "-m", "-f", "{{.Version}}", KUEUE_MODULE, cwd=testenv).strip()
    if version == own:
        return testenv
    if version not in pinned(testenv):
        raise SimulationUnavailable(
            f"Kueue {version} is not pinned in testenv/ (pinned: {own}, "
            f"{', '.join(pinned(testenv)) or 'no other'}): it cannot be simulated"
        )
    return testenv / f"kueue-{version}"


def sources(source: Path, release: str) -> list[Path]:
    """The program's files (main.go and one file per job) and the file of the release's minor
    version (release_v0_17.go for v0.17.x): what differs between releases' APIs, as
    testenv/kueueapi keeps its config_<api>.go."""
    major, minor = release.lstrip("v").split(".")[:2]
    own = source / f"release_v{major}_{minor}.go"
    if not own.is_file():
        known = sorted(p.stem.removeprefix("release_") for p in source.glob("release_*.go"))
        raise SimulationUnavailable(
            f"the replay simulator has no adapter for Kueue {release} ({own.name}; it has "
            f"{', '.join(known)})"
        )
    shared = sorted(p for p in source.glob("*.go") if not p.name.startswith("release_"))
    return [*shared, own]


def ensure_sim(
    testenv: Path, version: str | None, *, log: t.Callable[[str], None] | None = None
) -> tuple[Path, str]:
    """The simulator binary for `version` and the release it links, built when not cached."""
    module = module_for(testenv, version)
    release = _go("list", "-m", "-f", "{{.Version}}", KUEUE_MODULE, cwd=module).strip()
    if not (_kueue_dir(module) / "apis/kueue/v1beta2").is_dir():
        raise SimulationUnavailable(
            f"Kueue {release} has no kueue.x-k8s.io/v1beta2 API, which the simulator drives"
        )
    files = sources((testenv / SOURCE).resolve(), release)
    binary = cache_root() / "kueuesim" / f"{release}-{module_key(module, *files)}" / "kueuesim"

    def build(partial: Path) -> None:
        listed = [str(p) for p in files]
        _go("build", "-trimpath", "-ldflags", LDFLAGS, "-o", str(partial), *listed, cwd=module)

    took = build_once(binary, f"the replay simulator against Kueue {release}", build, log)
    if took is not None:
        (binary.parent / "build.json").write_text(
            json.dumps({"release": release, "seconds": took}, indent=2) + "\n"
        )
    return binary, release
