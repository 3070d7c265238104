"""The renderers Argo CD's repo-server runs, kustomize and helm, and the releases it runs.

The pins are the Go modules `testenv/tools/kustomize/` and `testenv/tools/helm/` (the releases
the pinned Argo CD runs); `kueue-gitops sandbox build --tool kustomize --tool helm` builds them
into the user cache. A copy of that release is taken first (PATH's, else the cache's build);
else a copy of another release on PATH is used, and each folder it renders carries a
`renderer-version-differs` warning (another release may build other objects): a team's CI
image or distribution ships the kustomize and helm it ships. Where no kustomize binary is found,
`kubectl kustomize` builds (the kustomize kubectl embeds, its release read from `kubectl version
--client -o json`), except for a folder whose Application sets kustomize overrides, which need
`kustomize edit`. With exact renderers (`exact`: --renderers, else KUEUE_GITOPS_RENDERERS, else
the profile's argocd.renderers) only the release Argo CD runs is used, and without it a folder
is `renderer-unavailable`.
"""

from __future__ import annotations

import functools
import json
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
KUBECTL = "kubectl"  # `kubectl kustomize` builds as `kustomize build` does
VERSION_ARGS = {
    "kustomize": ("version",),
    "helm": ("version", "--short"),
    KUBECTL: ("version", "--client", "-o", "json"),
}
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
    """The release a renderer binary says it is (`v5.8.1`), or None when it says nothing; for
    kubectl, the release of the kustomize it embeds."""
    tool = Path(binary).name
    try:
        ran = subprocess.run(
            [binary, *VERSION_ARGS.get(tool, ("version",))],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    said = ran.stdout
    if tool == KUBECTL:
        said = embedded_kustomize(said) or ""
    found = re.search(r"v\d+\.\d+\.\d+", said)
    return found.group(0) if found else None


def embedded_kustomize(version_json: str) -> str | None:
    """The kustomize release `kubectl version --client -o json` names (kustomizeVersion)."""
    try:
        said = json.loads(version_json)
    except ValueError:
        return None
    found = said.get("kustomizeVersion") if isinstance(said, dict) else None
    return found if isinstance(found, str) and found else None


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

    @property
    def kubectl(self) -> bool:
        """Whether this is `kubectl kustomize` (no `kustomize edit`)."""
        return Path(self.binary).name == KUBECTL


@functools.cache
def find(
    tool: str, only_pinned: bool = False, argocd: str | None = None, edits: bool = False
) -> Renderer:
    """`tool` at the release Argo CD `argocd` runs (None: the pinned Argo CD), the user cache's
    build else PATH's copy (else, for kustomize, PATH's kubectl embedding it, unless the render
    `edits` the kustomization); else, unless `only_pinned` (`exact()`), another release in that
    order of preference."""
    want, by = wanted(tool, argocd)
    seen = {c: version_of(c) for c in _candidates(tool, edits)}
    for candidate, version in seen.items():
        if version == want:
            return Renderer(candidate, want, want, by)
    others = [c for c, v in seen.items() if v is not None]
    if others and not only_pinned:
        return Renderer(others[0], str(seen[others[0]]), want, by)
    found = "; ".join(f"{c} is {v or 'of an unknown release'}" for c, v in seen.items())
    refused = ", and exact renderers are asked for" if others else ""
    build = f"run `kueue-gitops sandbox build --tool {tool}` (needs Go), or " * (
        want == pinned(tool)
    )
    edit = (
        " (kubectl kustomize cannot apply the Application's kustomize overrides: it has no "
        "`kustomize edit`)" * (edits and tool == "kustomize" and bool(shutil.which(KUBECTL)))
    )
    raise Unavailable(
        f"{tool} {want} (Argo CD {by}'s) is needed to render this folder as Argo CD does and "
        f"none was found{f' ({found})' if found else ''}{refused}{edit}: {build}put {tool} "
        f"{want} on PATH"
    )


def _candidates(tool: str, edits: bool) -> list[str]:
    """The binaries that may render with `tool`, most preferred first among one release: PATH's
    copy, the cache's builds, then (kustomize, without edits) PATH's kubectl."""
    built = [str(b) for b in sorted((cache.area("tools") / tool).glob(f"*/{tool}"))]
    on_path = shutil.which(tool)
    kubectl = shutil.which(KUBECTL) if tool == "kustomize" and not edits else None
    return [*([on_path] if on_path else []), *built, *([kubectl] if kubectl else [])]


_running: dict[str, str] = {}  # cluster -> the Argo CD release read running there


def running_on(cluster: str, release: str | None) -> None:
    """The Argo CD release read live on `cluster` (auditor/live/argocd.py; None: not known):
    its renders follow it over the profile's argocd.version."""
    if release:
        _running[cluster] = release
    else:
        _running.pop(cluster, None)


def argocd_of(cluster: str, profile: str | None) -> str | None:
    """The Argo CD release whose renderers render `cluster`'s folders: the one read running
    there, else its profile's (`profile`), else None (the pinned one, `wanted`)."""
    return _running.get(cluster) or profile


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
