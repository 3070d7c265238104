"""Build the control-plane binaries from `testenv/` into a cache outside the repository.

The cache key is a hash of everything that decides the binaries (the pinned go.mod and go.sum,
our etcd wrapper, the Go version), so a version bump builds anew and an unchanged pin never does.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
import typing as t
from dataclasses import dataclass
from pathlib import Path

import yaml

from auditor import cache
from auditor.errors import SandboxError
from auditor.kueue import release, versions, webhooks

# What each binary is built from, inside the testenv module.
BINARIES = {
    "kube-apiserver": "k8s.io/kubernetes/cmd/kube-apiserver",
    "etcd": "./etcd",
    "kube-controller-manager": "k8s.io/kubernetes/cmd/kube-controller-manager",
    "kube-scheduler": "k8s.io/kubernetes/cmd/kube-scheduler",  # binds Pods to simulated nodes
    "kueue": "sigs.k8s.io/kueue/cmd/kueue",
}
KEY_FILES = ("go.mod", "go.sum", "etcd/main.go")
KUEUE_MODULE = "sigs.k8s.io/kueue"
KUEUE_CRD_DIR = "config/components/crd/bases"
# Upstream's install manifests the sandbox's Kueue is set up from (see sandbox/kueue.py).
KUEUE_CONFIG = (
    "config/components/webhook/manifests.yaml",
    "config/components/rbac/role.yaml",
    "config/components/rbac/manager_secrets_role.yaml",
)


def cache_root() -> Path:
    """The user cache's root (auditor/cache.py); each build keeps its area's path below it."""
    return cache.root()


def _go(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    if shutil.which("go") is None:
        raise SandboxError("the Go toolchain is needed to build the sandbox: `go` is not on PATH")
    proc = subprocess.run(
        ["go", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **env} if env else None,
    )
    if proc.returncode != 0:
        raise SandboxError(f"`go {' '.join(args)}` failed in {cwd}:\n{proc.stderr.strip()[-4000:]}")
    return proc.stdout


@dataclass(frozen=True)
class KueueRelease:
    """One built Kueue: its binary, its CRDs and upstream's install manifests, under `root`."""

    version: str
    root: Path

    @property
    def binary(self) -> Path:
        return self.root / "bin" / "kueue"

    @property
    def crds(self) -> list[Path]:
        return sorted((self.root / "crds" / "kueue").glob("*.yaml"))

    def config(self, name: str) -> Path:
        return self.root / "kueue-config" / name

    @property
    def served(self) -> set[str]:
        """The kueue.x-k8s.io versions its CRDs serve (v1beta1 only before v0.15)."""
        found: set[str] = set()
        for path in self.crds:
            crd = yaml.load(path.read_text(), Loader=_LOADER)
            found |= {v["name"] for v in crd["spec"]["versions"] if v.get("served")}
        return found


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # Kueue's CRDs are megabytes of YAML


@dataclass(frozen=True)
class Toolchain:
    """The built binaries and the Kueue CRDs of one pinned set of versions."""

    root: Path
    testenv: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def binary(self, name: str) -> Path:
        return self.bin / name

    @property
    def versions(self) -> dict[str, str]:
        return dict(json.loads((self.root / "build.json").read_text())["versions"])

    @property
    def build_seconds(self) -> float:
        return float(json.loads((self.root / "build.json").read_text())["seconds"])

    @property
    def binary_seconds(self) -> dict[str, float]:
        """How long each binary took to build (binaries added to a cached build included)."""
        return dict(json.loads((self.root / "build.json").read_text()).get("binaries", {}))

    def is_complete(self) -> bool:
        """Built, with every binary of BINARIES (one added later is built on its own)."""
        return (self.root / "build.json").is_file() and all(
            self.binary(name).is_file() for name in BINARIES
        )

    @property
    def kueue(self) -> KueueRelease:
        """The Kueue release built with the control plane."""
        return KueueRelease(self.versions[KUEUE_MODULE], self.root)


def cache_key(testenv: Path) -> str:
    digest = hashlib.sha256()
    for name in KEY_FILES:
        digest.update(name.encode() + b"\0" + (testenv / name).read_bytes())
    digest.update(_go("env", "GOVERSION", cwd=testenv).encode())
    return digest.hexdigest()[:16]


def _module_version(testenv: Path, module: str) -> str:
    return _go("list", "-m", "-f", "{{.Version}}", module, cwd=testenv).strip()


def cached_toolchain(testenv: Path) -> Toolchain:
    """Where the toolchain for these pins lives in the cache (built or not)."""
    return Toolchain(cache.area("testenv") / cache_key(testenv), testenv)


def ensure_built(testenv: Path, *, log: t.Callable[[str], None] | None = None) -> Toolchain:
    """Return the toolchain for `testenv`, building it first when the cache lacks it."""
    say = log or (lambda _msg: None)
    toolchain = cached_toolchain(testenv)
    if toolchain.is_complete():
        return toolchain
    toolchain.root.mkdir(parents=True, exist_ok=True)
    with open(toolchain.root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second builder waits, then finds the cache filled
        if toolchain.is_complete():
            return toolchain
        record = _record(toolchain.root)
        k8s = _module_version(testenv, "k8s.io/kubernetes")
        kueue = _module_version(testenv, KUEUE_MODULE)
        times: dict[str, float] = record.setdefault("binaries", {})
        new = 0.0
        for name, package in BINARIES.items():
            if toolchain.binary(name).is_file():
                continue
            say(f"building {name} from {package} (first build takes minutes)")
            started = time.monotonic()
            _go(
                "build",
                "-trimpath",
                "-ldflags",
                _version_ldflags(k8s, kueue),
                "-o",
                str(toolchain.binary(name)),
                package,
                cwd=testenv,
            )
            times[name] = round(time.monotonic() - started, 1)
            new += times[name]
            say(f"built {name} in {times[name]:.0f}s")
        if "versions" not in record:
            _copy_kueue_crds(testenv, toolchain.root / "crds" / "kueue")
            _copy_kueue_config(testenv, toolchain.root / "kueue-config")
        record["versions"] = {
            m: _module_version(testenv, m)
            for m in ("k8s.io/kubernetes", "go.etcd.io/etcd/server/v3", KUEUE_MODULE)
        }
        record["seconds"] = round(record.get("seconds", 0.0) + new, 1)
        (toolchain.root / "build.json").write_text(json.dumps(record, indent=2) + "\n")
    return toolchain


def _record(root: Path) -> dict[str, t.Any]:
    path = root / "build.json"
    return dict(json.loads(path.read_text())) if path.is_file() else {}


def _version_ldflags(k8s: str, kueue: str) -> str:
    """Stamp the releases into the binaries, as upstream's builds do, so clients see v1.X.Y."""
    major, minor = k8s.lstrip("v").split(".")[:2]
    pkg = "k8s.io/component-base/version"
    return " ".join(
        [
            f"-X {pkg}.gitVersion={k8s}",
            f"-X {pkg}.gitMajor={major}",
            f"-X {pkg}.gitMinor={minor}",
            f"-X {pkg}.gitTreeState=clean",
            f"-X sigs.k8s.io/kueue/pkg/version.GitVersion={kueue}",
            "-s",
            "-w",
        ]
    )


def derive_kueue_api(testenv: Path, version: str | None = None) -> dict[str, t.Any]:
    """Everything this tool knows of one pinned Kueue release, derived from the release
    (auditor/kueue/release.py says what), as stored in auditor/kueue/api/<release>.json.

    `version`: a release pinned in testenv/kueue-<version>/ (default: the control plane's).
    testenv/kueueapi is built in that release's module, with the API file of the Kueue API its
    CRDs serve (config_v1beta1.go before v0.15), so it links that release's own packages."""
    module = testenv if version is None else testenv / f"kueue-{version}"
    source = _kueue_dir(module)
    crds = release.crds_of(_yaml_docs(source / KUEUE_CRD_DIR, "*.yaml"), _crd_patches(source))
    served = {c["kind"]: versions.preferred(c["served"]) for c in crds.values() if c["served"]}
    api = "v1beta1" if served.get("ClusterQueue") == "v1beta1" else "v1beta2"
    program = testenv / "kueueapi"
    files = [str(program / f) for f in ("main.go", "webhooks.go", f"config_{api}.go")]
    with tempfile.NamedTemporaryFile("w", suffix=".json") as probes:
        json.dump(webhooks.probes(served), probes)
        probes.flush()
        # -trimpath, as the control plane is built: the packages come from the build cache.
        derived = json.loads(_go("run", "-trimpath", *files, "-probes", probes.name, cwd=module))
    hooks = derived["webhooks"]
    derived["webhooks"] = {
        "kinds": release.webhook_kinds(
            _yaml_docs(source / "config/components/webhook", "manifests.yaml"), crds
        ),
        "rules": webhooks.fold(hooks["probes"]),
        "limits": hooks["limits"],
        "immutable": hooks["immutable"],
    }
    derived["crds"] = crds
    derived["defaultNames"] = release.default_names(
        (source / "pkg/controller/constants/constants.go").read_text()
    )
    return t.cast(dict[str, t.Any], derived)


def _yaml_docs(folder: Path, pattern: str) -> list[dict[str, t.Any]]:
    return [
        doc
        for path in sorted(folder.glob(pattern))
        for doc in yaml.load_all(path.read_text(), Loader=_LOADER)
        if isinstance(doc, dict)
    ]


def _crd_patches(source: Path) -> list[dict[str, t.Any]]:
    """The patches the release's CRD kustomization applies (a commented-out one is not)."""
    folder = source / "config/components/crd"
    kustomization = yaml.safe_load((folder / "kustomization.yaml").read_text()) or {}
    listed = [p["path"] if isinstance(p, dict) else p for p in kustomization.get("patches") or []]
    listed += list(kustomization.get("patchesStrategicMerge") or [])
    return [d for name in listed for d in _yaml_docs(folder, str(name))]


def _kueue_dir(testenv: Path) -> Path:
    return Path(json.loads(_go("mod", "download", "-json", KUEUE_MODULE, cwd=testenv))["Dir"])


def _copy_kueue_config(testenv: Path, dest: Path) -> None:
    source = _kueue_dir(testenv)
    dest.mkdir(parents=True, exist_ok=True)
    for name in KUEUE_CONFIG:
        if (source / name).is_file():  # older releases keep the secrets rules in role.yaml
            shutil.copyfile(source / name, dest / Path(name).name)


def _copy_kueue_crds(testenv: Path, dest: Path) -> None:
    source = _kueue_dir(testenv) / KUEUE_CRD_DIR
    crds = sorted(source.glob("*.yaml"))
    if not crds:
        raise SandboxError(f"no Kueue CRDs found in the module at {source}")
    dest.mkdir(parents=True, exist_ok=True)
    for crd in crds:
        shutil.copyfile(crd, dest / crd.name)


@dataclass(frozen=True)
class CrdSet:
    """CRDs a sandbox installs, from a Go module pinned under testenv/ (when asked, or always)."""

    module_dir: str  # the pinning module, relative to testenv/
    module: str
    folder: str  # where the CRDs sit inside that module
    files: str = "*.yaml"
    always: bool = False  # installed into every sandbox at `up`


# Every CRD set a sandbox can add to Kueue's (which ships with the build itself).
CRD_SETS: dict[str, CrdSet] = {
    "argocd": CrdSet("tools/argocd", "github.com/argoproj/argo-cd/v3", "manifests/crds"),
    # clusters/<c>/alerts.yaml holds PrometheusRules, so every synced sandbox needs their CRD.
    "prometheus-operator": CrdSet(
        "tools/prometheus-operator",
        "github.com/prometheus-operator/prometheus-operator",
        "example/prometheus-operator-crd",
        files="monitoring.coreos.com_prometheusrules.yaml",
        always=True,
    ),
}
ALWAYS_CRD_SETS = tuple(name for name, found in CRD_SETS.items() if found.always)


def crd_set_files(testenv: Path, name: str) -> list[Path]:
    """The CRD files of one set, read in place from the Go module cache."""
    found = CRD_SETS.get(name)
    if found is None:
        raise SandboxError(f"no CRD set {name!r}; known: {', '.join(sorted(CRD_SETS))}")
    info = json.loads(_go("mod", "download", "-json", found.module, cwd=testenv / found.module_dir))
    if info.get("Error"):
        raise SandboxError(f"cannot download {found.module}: {info['Error']}")
    files = sorted((Path(info["Dir"]) / found.folder).glob(found.files))
    if not files:
        raise SandboxError(f"no CRDs in {found.module} at {found.folder}")
    return files


# Peer and helper tools, each built from its own module under testenv/tools/<tool>/.
TOOLS = {
    "promtool": "github.com/prometheus/prometheus/cmd/promtool",
    "kubeconform": "github.com/yannh/kubeconform/cmd/kubeconform",
    "kubectl": "k8s.io/kubernetes/cmd/kubectl",
    "argocd": "github.com/argoproj/argo-cd/v3/cmd",  # one binary for every Argo CD daemon
    "kwok": "sigs.k8s.io/kwok/cmd/kwok",  # plays the kubelet of the sandbox's simulated nodes
    # a fault-injecting TCP proxy: slow, cut and stalled answers from a real kube-apiserver
    "toxiproxy": "github.com/Shopify/toxiproxy/v2/cmd/server",
    # the renderers Argo CD's repo-server runs, at the releases it runs (auditor/render/)
    "kustomize": "sigs.k8s.io/kustomize/kustomize/v5",
    "helm": "helm.sh/helm/v4/cmd/helm",
}
SANDBOX_TOOLS = ("kwok",)  # built with the control plane: `sandbox up --with-kueue` needs it
ARGOCD_MODULE = "github.com/argoproj/argo-cd/v3"


HELM_MODULE = "helm.sh/helm/v4"


def _tool_build(tool: str, module: Path) -> tuple[list[str], dict[str, str]]:
    """Extra `go build` flags and environment of one tool: Argo CD is built as upstream
    releases it (static, its version stamped so `argocd-* version` and its User-Agent say it),
    and helm with its version stamped as its Makefile does, so `helm version` names the pin
    the renderer checks (kustomize reads its own from the module's build information)."""
    if tool == "helm":
        version = _go("list", "-m", "-f", "{{.Version}}", HELM_MODULE, cwd=module).strip()
        stamp = f"-s -w -X {HELM_MODULE}/internal/version.version={version}"
        stamp += f" -X {HELM_MODULE}/internal/version.metadata="
        return ["-ldflags", stamp], {"CGO_ENABLED": "0"}
    if tool != "argocd":
        return [], {}
    version = _go("list", "-m", "-f", "{{.Version}}", ARGOCD_MODULE, cwd=module).strip()
    stamp = f"-s -w -X {ARGOCD_MODULE}/common.version={version.lstrip('v')}"
    return ["-ldflags", stamp], {"CGO_ENABLED": "0"}


def ensure_tool(
    testenv: Path, tool: str, package: str, *, log: t.Callable[[str], None] | None = None
) -> Path:
    """Build one peer or helper binary from its own pinned module, `testenv/tools/<tool>/`.

    Each tool has a go.mod of its own so its dependencies never move the control plane's.
    The binary is cached by the hash of that go.mod and go.sum, like the control plane.
    """
    module = testenv / "tools" / tool
    binary = cache.area("tools") / tool / module_key(module) / tool

    def build(partial: Path) -> None:
        flags, env = _tool_build(tool, module)
        _go("build", "-trimpath", *flags, "-o", str(partial), package, cwd=module, env=env)

    build_once(binary, f"{tool} from {package}", build, log)
    return binary


def module_key(module: Path, *files: Path) -> str:
    """The cache key of a binary built in `module`: its go.mod and go.sum, the `files` it
    compiles beside them, and the Go toolchain's version."""
    digest = hashlib.sha256()
    for path in (module / "go.mod", module / "go.sum", *files):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    digest.update(_go("env", "GOVERSION", cwd=module).encode())
    return digest.hexdigest()[:16]


def build_once(
    binary: Path,
    what: str,
    build: t.Callable[[Path], None],
    log: t.Callable[[str], None] | None = None,
) -> float | None:
    """Make `binary` with `build(partial)` unless it is cached. One builder at a time (a lock
    beside it) and never half a binary (the partial file is renamed once built). The seconds
    the build took; None when it was already there."""
    if binary.is_file():
        return None
    binary.parent.mkdir(parents=True, exist_ok=True)
    with open(binary.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if binary.is_file():  # another process built it while this one waited
            return None
        say = log or (lambda _m: None)
        say(f"building {what} (first build takes minutes)")
        started = time.monotonic()
        partial = binary.with_suffix(".partial")
        build(partial)
        partial.rename(binary)
        took = round(time.monotonic() - started, 1)
        say(f"built {what} in {took:.0f}s")
        return took


def module_dir(testenv: Path, module_dir: str, module: str) -> Path:
    """Where a module pinned by testenv/<module_dir> sits in the Go module cache."""
    info = json.loads(_go("mod", "download", "-json", module, cwd=testenv / module_dir))
    if info.get("Error"):
        raise SandboxError(f"cannot download {module}: {info['Error']}")
    return Path(info["Dir"])
