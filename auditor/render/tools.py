"""The renderers Argo CD's repo-server runs, kustomize and helm, found at their pinned releases.

The pins are the Go modules `testenv/tools/kustomize/` and `testenv/tools/helm/` (the releases
the pinned Argo CD runs); `kueue-gitops sandbox build --tool kustomize --tool helm` builds them
into the user cache. A copy on PATH is taken too, once its `version` names the same release: a
renderer of another release may build other objects, so it is refused rather than trusted.
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

from auditor.repo.cache import user_cache_root
from auditor.repo.tree import MAX_FILE_BYTES

_PACKAGE = Path(__file__).resolve().parents[1]
# In a wheel: auditor/testenv/. In a source checkout: testenv/ beside auditor/ (sandbox/pins.py).
_PINS = (_PACKAGE / "testenv" / "tools", _PACKAGE.parent / "testenv" / "tools")
MODULES = {"kustomize": "sigs.k8s.io/kustomize/kustomize/v5", "helm": "helm.sh/helm/v4"}
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


@functools.cache
def find(tool: str) -> str:
    """The path of `tool` at its pinned release: the user cache's build, else PATH's copy."""
    want = pinned(tool)
    built = sorted((user_cache_root() / "tools" / tool).glob(f"*/{tool}"))
    on_path = shutil.which(tool)
    seen: list[str] = []
    for candidate in [*(str(b) for b in built), *([on_path] if on_path else [])]:
        got = version_of(candidate)
        if got == want:
            return candidate
        seen.append(f"{candidate} is {got or 'of an unknown release'}")
    found = f" ({'; '.join(seen)})" if seen else ""
    raise Unavailable(
        f"{tool} {want} is needed to render this folder as Argo CD does and none was found"
        f"{found}: run `kueue-gitops sandbox build --tool {tool}` (needs Go), or put {tool} "
        f"{want} on PATH"
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
