"""Build testenv/kueuesim, the replay simulator, in the module of the Kueue release it links.

The simulator links a release's own scheduler, caches and workload handlers, so it is built in
the Go module that pins that release: testenv/ for the control plane's Kueue, and
testenv/kueue-<version>/ for another (as testenv/kueueapi is). The binary is cached by the hash
of that module's go.mod and go.sum, the simulator's source and the Go version. A release without
the kueue.x-k8s.io/v1beta2 API the simulator is written against (v0.9.1) cannot be simulated:
SimulationUnavailable says so, and `plan replay` falls back to `--engine kueue`.

Without Go, the simulator comes compiled: the companion distribution kueue-gitops-sim (the extra
`kueue-gitops[sim]`, packages/kueue-gitops-sim/) carries one binary per supported release,
built by `ship` below, with a manifest of the sources each was built from. It is looked for
first, and used only when built from this package's own sources (`source_key`); Go is the
fallback, and without either the user is told to install one (a configuration error, exit 2).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.resources
import json
import shutil
import sys
import typing as t
from pathlib import Path

from auditor import cache
from auditor.errors import ConfigError, SandboxError
from auditor.sandbox.build import (
    KUEUE_MODULE,
    _go,
    _kueue_dir,
    build_once,
    module_key,
)
from auditor.sandbox.releases import pinned

SOURCE = "kueuesim"  # testenv/kueuesim/
# `schedule`, the scheduler's cycle, is reached by go:linkname (one cycle per call, as Kueue's
# own unit tests drive it): Go 1.23+ wants the linker's check off for that.
LDFLAGS = "-s -w -checklinkname=0"
COMPANION = "kueue-gitops-sim"  # the distribution carrying the compiled simulator
COMPANION_PACKAGE = "kueue_gitops_sim"  # what it installs
EXTRA = "kueue-gitops[sim]"
MANIFEST = "manifest.json"  # in the companion package: release -> binary and its sources' key


class SimulationUnavailable(SandboxError):
    """This Kueue release cannot be simulated. The message says why, not what to do instead:
    `plan replay` falls back to the real engine itself; `replay --live`, `job`, `sweep` cannot."""


def module_for(testenv: Path, version: str | None) -> Path:
    """The Go module pinning `version` (None: the control plane's)."""
    if version is None:
        return testenv
    own = release_of(testenv)
    if version == own:
        return testenv
    if version not in pinned(testenv):
        raise SimulationUnavailable(
            f"Kueue {version} is not pinned in testenv/ (pinned: {own}, "
            f"{', '.join(pinned(testenv)) or 'no other'}): it cannot be simulated"
        )
    return testenv / f"kueue-{version}"


def release_of(module: Path) -> str:
    """The Kueue release a module's go.mod requires, read without Go (a single `require` line
    or one inside a `require (...)` block)."""
    for line in (module / "go.mod").read_text().splitlines():
        words = line.split("//")[0].split()
        if words[:1] == ["require"]:
            words = words[1:]
        if len(words) == 2 and words[0] == KUEUE_MODULE:
            return words[1]
    raise SandboxError(f"{module / 'go.mod'} requires no {KUEUE_MODULE}")


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


def source_key(module: Path, files: t.Sequence[Path]) -> str:
    """What a simulator binary is built from: the module's go.mod and go.sum and the program's
    files. The companion records it per binary; a binary is used only where it matches."""
    digest = hashlib.sha256()
    for path in (module / "go.mod", module / "go.sum", *files):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def ensure_sim(
    testenv: Path, version: str | None, *, log: t.Callable[[str], None] | None = None
) -> tuple[Path, str]:
    """The simulator binary for `version` and the release it links: the installed companion's,
    else built with Go when not cached."""
    module = module_for(testenv, version)
    release = release_of(module)
    files = sources((testenv / SOURCE).resolve(), release)
    shipped, why_not = installed(release, source_key(module, files))
    if shipped is not None:
        return shipped, release
    if shutil.which("go") is None:
        raise ConfigError(
            f"the replay simulator for Kueue {release} is needed: {why_not}. Install it with "
            f"`pip install '{EXTRA}'` (the package {COMPANION}, the simulator compiled), "
            "or put the Go toolchain on PATH to build it"
        )
    return _built(module, release, files, log), release


def installed(release: str, key: str) -> tuple[Path | None, str]:
    """The companion's binary for `release` when it was built from the sources keyed `key`;
    else None and why not."""
    try:
        folder = importlib.resources.files(COMPANION_PACKAGE)
    except ModuleNotFoundError:
        return None, f"{COMPANION} is not installed"
    manifest = json.loads((folder / MANIFEST).read_text())
    shipped = manifest["releases"].get(release)
    made = f"{COMPANION} {importlib.metadata.version(COMPANION)}"
    if shipped is None:
        return None, f"{made} has no simulator for Kueue {release}"
    if shipped["sources"] != key:
        own = importlib.metadata.version("kueue-gitops")
        return None, (
            f"{made} was built from other sources than kueue-gitops {own}'s "
            f"(its own is kueue-gitops-sim=={own})"
        )
    return Path(str(folder / shipped["binary"])), ""


def _built(
    module: Path, release: str, files: list[Path], log: t.Callable[[str], None] | None
) -> Path:
    """The simulator built with Go into the cache, keyed by its sources and Go's version."""
    if not (_kueue_dir(module) / "apis/kueue/v1beta2").is_dir():
        raise SimulationUnavailable(
            f"Kueue {release} has no kueue.x-k8s.io/v1beta2 API, which the simulator drives"
        )
    binary = cache.area("kueuesim") / f"{release}-{module_key(module, *files)}" / "kueuesim"

    def build(partial: Path) -> None:
        listed = [str(p) for p in files]
        _go("build", "-trimpath", "-ldflags", LDFLAGS, "-o", str(partial), *listed, cwd=module)

    took = build_once(binary, f"the replay simulator against Kueue {release}", build, log)
    if took is not None:
        (binary.parent / "build.json").write_text(
            json.dumps({"release": release, "seconds": took}, indent=2) + "\n"
        )
    return binary


def simulable(testenv: Path) -> list[str]:
    """The pinned releases the simulator has an adapter for: what the companion carries."""
    found = []
    for release in (release_of(testenv), *pinned(testenv)):
        try:
            sources(testenv / SOURCE, release)
        except SimulationUnavailable:
            continue
        found.append(release)
    return found


def ship(testenv: Path, dest: Path, releases: t.Sequence[str] = ()) -> dict[str, t.Any]:
    """Compile the simulator for `releases` (default: every one it supports) into `dest`, the
    companion package's folder, with the manifest `installed` reads. Static (no cgo), for the
    platform Go targets (GOOS/GOARCH): a wheel's binary must not depend on the builder's libc."""
    dest = dest.resolve()  # Go builds in the module's folder
    shutil.rmtree(dest / "bin", ignore_errors=True)  # a binary of an earlier build is not shipped
    shipped = {}
    for release in releases or simulable(testenv):
        module = module_for(testenv, release)
        files = sources((testenv / SOURCE).resolve(), release)
        name = f"bin/{release}/kueuesim"
        print(f"building the replay simulator against Kueue {release}", file=sys.stderr)
        _go("build", "-trimpath", "-ldflags", LDFLAGS, "-o", str(dest / name),
            *map(str, files), cwd=module, env={"CGO_ENABLED": "0"})  # fmt: skip
        shipped[release] = {"binary": name, "sources": source_key(module, files)}
    goos, goarch = _go("env", "GOOS", "GOARCH", cwd=testenv).split()
    manifest = {"goos": goos, "goarch": goarch, "releases": shipped}
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


if __name__ == "__main__":  # the companion's build hook: python -m ... TESTENV DEST [RELEASE...]
    ship(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3:])
