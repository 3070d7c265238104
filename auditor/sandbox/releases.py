"""Kueue releases other than the control plane's, each pinned in a module of its own.

`testenv/kueue-<version>/` pins one Kueue release with the Kubernetes libraries and Go its go.mod
asks for (v0.9.1 pins k8s.io v0.31.2, v0.19.2 k8s.io v0.36.2 and Go 1.26: neither may move the
control plane's pins). Each module holds only its go.mod, go.sum and tools.go, so another program
linking that release's packages (testenv/kueueapi) can be built in it. Each is built
into the cache keyed by the hash of that go.mod and go.sum, with its CRDs and upstream's
install manifests beside it, in the layout of the control plane's own Kueue (KueueRelease).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import time
import typing as t
from pathlib import Path

from auditor import cache
from auditor.errors import SandboxError
from auditor.sandbox.build import (
    KUEUE_MODULE,
    KueueRelease,
    Toolchain,
    _copy_kueue_config,
    _copy_kueue_crds,
    _go,
)

_FOLDER = re.compile(r"kueue-(v[0-9]+\.[0-9]+\.[0-9]+)")


def pinned(testenv: Path) -> list[str]:
    """The versions testenv/ pins a module for, besides the control plane's."""
    found = (_FOLDER.fullmatch(p.name) for p in testenv.iterdir() if (p / "go.mod").is_file())
    return sorted(m[1] for m in found if m)


def release(
    toolchain: Toolchain, version: str | None, *, log: t.Callable[[str], None] | None = None
) -> KueueRelease:
    """The Kueue release `version` (None: the control plane's), built when the cache lacks it."""
    own = toolchain.kueue
    if version is None or version == own.version:
        return own
    if version not in pinned(toolchain.testenv):
        raise SandboxError(
            f"Kueue {version} is not pinned: the control plane has {own.version}, and "
            f"testenv/kueue-{version}/go.mod does not exist (pinned: "
            f"{', '.join(pinned(toolchain.testenv)) or 'none'})"
        )
    return ensure_kueue(toolchain.testenv, version, log=log)


def ensure_kueue(
    testenv: Path, version: str, *, log: t.Callable[[str], None] | None = None
) -> KueueRelease:
    module = testenv / f"kueue-{version}"
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update(name.encode() + b"\0" + (module / name).read_bytes())
    digest.update(_go("env", "GOVERSION", cwd=module).encode())
    found = KueueRelease(version, cache.area("kueue") / f"{version}-{digest.hexdigest()[:16]}")
    record = found.root / "build.json"
    if record.is_file():
        return found
    found.root.mkdir(parents=True, exist_ok=True)
    with open(found.root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if record.is_file():
            return found
        say = log or (lambda _m: None)
        pinned_version = _go("list", "-m", "-f", "{{.Version}}", KUEUE_MODULE, cwd=module).strip()
        if pinned_version != version:
            raise SandboxError(
                f"{module}/go.mod pins {KUEUE_MODULE} {pinned_version}, not {version}"
            )
        say(f"building Kueue {version} from {module} (first build takes minutes)")
        started = time.monotonic()
        stamp = f"-s -w -X {KUEUE_MODULE}/pkg/version.GitVersion={version}"
        _go(
            "build",
            "-trimpath",
            "-ldflags",
            stamp,
            "-o",
            str(found.binary),
            f"{KUEUE_MODULE}/cmd/kueue",
            cwd=module,
        )
        _copy_kueue_crds(module, found.root / "crds" / "kueue")
        _copy_kueue_config(module, found.root / "kueue-config")
        took = round(time.monotonic() - started, 1)
        say(f"built Kueue {version} in {took:.0f}s")
        record.write_text(json.dumps({"seconds": took, "version": version}, indent=2) + "\n")
    return found


def build_seconds(found: KueueRelease) -> float:
    return float(json.loads((found.root / "build.json").read_text())["seconds"])


def source(testenv: Path, version: str | None) -> tuple[Path, str]:
    """The Go module cache's copy of Kueue `version`'s module (None: the newest pinned) and its
    version: what a reader of upstream's own files (the performance harness) opens."""
    own = _go("list", "-m", "-f", "{{.Version}}", KUEUE_MODULE, cwd=testenv).strip()
    known = sorted({own, *pinned(testenv)}, key=_numbers)
    chosen = version or known[-1]
    if chosen not in known:
        raise SandboxError(f"Kueue {chosen} is not pinned in testenv/ (pinned: {', '.join(known)})")
    module = testenv if chosen == own else testenv / f"kueue-{chosen}"
    info = json.loads(_go("mod", "download", "-json", KUEUE_MODULE, cwd=module))
    if info.get("Error") or not info.get("Dir"):
        raise SandboxError(f"cannot find {KUEUE_MODULE} {chosen}: {info.get('Error')}")
    return Path(info["Dir"]), chosen


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.lstrip("v").split("."))
