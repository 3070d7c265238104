"""The renderers Argo CD's repo-server runs, kustomize and helm, and the releases it runs.

The pins are the Go modules `testenv/tools/kustomize/` and `testenv/tools/helm/` (the releases
the pinned Argo CD runs); `kueue-gitops sandbox build --tool kustomize --tool helm` builds them
into the user cache. A copy of that release is taken first (the cache's build, else PATH's);
else a copy of another release on PATH is used, and each folder it renders carries a
`renderer-version-differs` warning (another release may build other objects): a team's CI
image or distribution ships the kustomize and helm it ships. With KUEUE_GITOPS_RENDERERS=exact
only the pinned release is used, and without it a folder is `renderer-unavailable`.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import typing as t
from dataclasses import dataclass
from pathlib import Path

import yaml

from auditor import cache
from auditor.repo.tree import MAX_FILE_BYTES

_PACKAGE = Path(__file__).resolve().parents[1]
# In a wheel: auditor/testenv/. In a source checkout: testenv/ beside auditor/ (sandbox/pins.py).
_PINS = (_PACKAGE / "testenv" / "tools", _PACKAGE.parent / "testenv" / "tools")
MODULES = {
    "kustomize": "sigs.k8s.io/kustomize/kustomize/v5",
    "helm": "helm.sh/helm/v4",
    "argocd": "github.com/argoproj/argo-cd/v3",  # the release whose renderers those are
}
VERSION_ARGS = {"kustomize": ("version",), "helm": ("version", "--short")}
DEADLINE = 60.0  # seconds one render may take; a real one takes well under a second
# bytes a render may print: as much as Argo CD syncs of a folder of plain manifests (and a file
# the tree reads, auditor/repo/tree.py); a chart looping without end is stopped at it
MAX_OUTPUT = MAX_FILE_BYTES


class Unavailable(Exception):
    """No renderer of the pinned release can be run here; the message says what to do."""


@dataclass(frozen=True)
class Ran:
    """What a renderer printed, and how it ended (None: killed at the deadline; `overflow`:
    it printed more than MAX_OUTPUT, and what it printed is not kept)."""

    returncode: int | None
    stdout: str
    stderr: str
    overflow: bool = False


def pinned(tool: str) -> str:
    """The release of `tool` this kueue-gitops renders with, read from its pinning go.mod."""
    for folder in _PINS:
        gomod = folder / tool / "go.mod"
        if gomod.is_file():
            found = re.search(
                rf"^\s*(?:require\s+)?{re.escape(MODULES[tool])}\s+(v\S+)", gomod.read_text(), re.M
            )
            if found:
                return found.group(1)
    raise Unavailable(f"this installation of kueue-gitops pins no {tool} (testenv/tools/{tool})")


def argocd_release() -> str:
    """The Argo CD release whose kustomize and helm are pinned (testenv/tools/argocd)."""
    try:
        return pinned("argocd")
    except Unavailable:
        return "(the pinned release)"


def version_of(binary: str) -> str | None:
    """The release a renderer binary says it is (`v5.8.1`), or None when it says nothing."""
    tool = Path(binary).name
    try:
        ran = subprocess.run(
            [binary, *VERSION_ARGS.get(tool, ("version",))],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"v\d+\.\d+\.\d+", ran.stdout)
    return found.group(0) if found else None


EXACT_ENV = "KUEUE_GITOPS_RENDERERS"  # "exact": only the release Argo CD runs renders


@dataclass(frozen=True)
class Renderer:
    """A renderer binary found, the release it says it is, and the release Argo CD runs (the
    Argo CD release `argocd`)."""

    binary: str
    version: str
    wanted: str
    argocd: str = ""

    @property
    def differs(self) -> bool:
        return self.version != self.wanted


def exact() -> bool:
    """Whether only the release Argo CD runs may render (KUEUE_GITOPS_RENDERERS=exact)."""
    return os.environ.get(EXACT_ENV, "").strip().lower() == "exact"


@functools.cache
def find(tool: str, only_pinned: bool = False, argocd: str | None = None) -> Renderer:
    """`tool` at the release Argo CD `argocd` runs (None: the pinned Argo CD), the user cache's
    build else PATH's copy; else, unless `only_pinned` (`exact()`), PATH's copy of another
    release, else a cached build of another."""
    want, by = wanted(tool, argocd)
    built = [str(b) for b in sorted((cache.area("tools") / tool).glob(f"*/{tool}"))]
    on_path = shutil.which(tool)
    seen: dict[str, str | None] = {}
    for candidate in [*built, *([on_path] if on_path else [])]:
        seen[candidate] = version_of(candidate)
        if seen[candidate] == want:
            return Renderer(candidate, want, want, by)
    others = [c for c in sorted(seen, key=lambda c: c != on_path) if seen[c] is not None]
    if others and not only_pinned:
        return Renderer(others[0], str(seen[others[0]]), want, by)
    found = "; ".join(f"{c} is {v or 'of an unknown release'}" for c, v in seen.items())
    refused = ", and exact renderers are asked for" if others else ""
    build = f"run `kueue-gitops sandbox build --tool {tool}` (needs Go), or " * (
        want == pinned(tool)
    )
    raise Unavailable(
        f"{tool} {want} (Argo CD {by}'s) is needed to render this folder as Argo CD does and "
        f"none was found{f' ({found})' if found else ''}{refused}: {build}put {tool} {want} "
        "on PATH"
    )


def wanted(tool: str, argocd: str | None) -> tuple[str, str]:
    """The release of `tool` Argo CD `argocd` runs (None: the pinned Argo CD), and which Argo
    CD release says so: `argocd` itself when argocd.yaml lists it, else the nearest listed
    release of its minor below it ("v3.4.7, as v3.4.0"), else the pinned one."""
    if argocd:
        got = _release(argocd)
        major_minor = [r for r in _TABLE if _release(r)[:2] == got[:2] and _release(r) <= got]
        if major_minor:
            row = max(major_minor, key=_release)
            return _TABLE[row][tool], argocd if row == argocd else f"{argocd}, as {row}"
    return pinned(tool), argocd_release()


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version)[:3])


# Argo CD release -> the kustomize and helm its repo-server runs (argocd.yaml says whence)
_TABLE: dict[str, dict[str, str]] = yaml.safe_load(
    (Path(__file__).with_name("argocd.yaml")).read_text()
)


def run(argv: t.Sequence[str], cwd: Path, deadline: float = DEADLINE) -> Ran:
    """Run a renderer in its own process group, killed whole when `deadline` seconds pass.
    Network-free by design: no proxy variables reach it, and helm's caches are kept in `cwd`.
    Its output goes to files the kernel holds to MAX_OUTPUT (RLIMIT_FSIZE), never to memory
    unbounded."""
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(
        HELM_CACHE_HOME=str(cwd / ".helm" / "cache"),
        HELM_CONFIG_HOME=str(cwd / ".helm" / "config"),
        HELM_DATA_HOME=str(cwd / ".helm" / "data"),
    )
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=env, stdout=out, stderr=err, start_new_session=True,
            preexec_fn=_bounded,
        )  # fmt: skip
        try:
            code: int | None = proc.wait(timeout=deadline)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        printed, said = _read(out), _read(err)
    if len(printed) > MAX_OUTPUT:
        return Ran(code, "", said.decode("utf-8", "replace"), overflow=True)
    return Ran(code, printed.decode("utf-8", "replace"), said.decode("utf-8", "replace"))


def _bounded() -> None:
    """In the renderer's process, before it runs: no file it writes (its output, helm's cache)
    past MAX_OUTPUT + 1 bytes (a write past it fails, or the signal ends it), no core file."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT + 1, MAX_OUTPUT + 1))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _read(file: t.IO[bytes]) -> bytes:
    file.seek(0)
    return file.read(MAX_OUTPUT + 1)


def kube_version() -> str:
    """The Kubernetes release of the pinned control plane (testenv/go.mod): the version Helm's
    Capabilities report when the Application names none, as the sandbox's clusters run it."""
    for folder in _PINS:
        gomod = folder.parent / "go.mod"
        if gomod.is_file():
            found = re.search(r"^\s*k8s\.io/kubernetes\s+v(\S+)", gomod.read_text(), re.M)
            if found:
                return found.group(1)
    return ""
