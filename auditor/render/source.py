"""What a render is about: a `Source` (a folder Argo CD syncs, and how it renders it), what a
render gives (`Rendered`), which tool renders a folder (`marker`, `tool_of`), and render's rules.
"""

from __future__ import annotations

import json
import posixpath
import typing as t
from dataclasses import dataclass, field

from auditor import rules
from auditor.model import Finding, Resource
from auditor.repo import pyyaml_reader

_RULES = rules.of(__name__)
RENDER_FAILED = _RULES["render-failed"]
RENDER_TIMEOUT = _RULES["render-timeout"]
RENDERER_UNAVAILABLE = _RULES["renderer-unavailable"]
RENDERER_DIFFERS = _RULES["renderer-version-differs"]
REMOTE_BASE = _RULES["render-remote-base"]
CHART_DEPENDENCY = _RULES["render-chart-dependency"]
OUTSIDE = _RULES["render-outside-repository"]
# A cluster with one of these holds only part of its objects: what is absent may be unrendered.
# (The YAML limits' too: a file that overruns them, a render's input or a manifest, is not read.)
UNRENDERED = frozenset(
    r.id
    for r in (
        RENDER_FAILED,
        RENDER_TIMEOUT,
        RENDERER_UNAVAILABLE,
        REMOTE_BASE,
        CHART_DEPENDENCY,
        OUTSIDE,
        pyyaml_reader.YAML_TOO_LARGE,
        pyyaml_reader.YAML_RECURSIVE_ALIAS,
        pyyaml_reader.YAML_TOO_DEEP,
    )
)

KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
CHART = "Chart.yaml"


@dataclass(frozen=True)
class Source:
    """A folder Argo CD syncs to a cluster (and namespace), and how it renders it."""

    path: str  # relative to the repository's root
    cluster: str
    namespace: str | None = None
    spec: str = "{}"  # the Application's source, as JSON (kustomize:, helm:, directory:)
    app: str = ""  # the file that says so (an Application's), for messages
    tenant: str | None = None
    application: str = ""  # the Application's name: Helm's release name unless it names one
    # The lines of `spec` in `app`, by path within it (("helm", "parameters", 0)): where a
    # value the Application sets was written (auditor/render/locate.py).
    lines: tuple[tuple[tuple[str | int, ...], int], ...] = ()
    argocd: str | None = None  # the Argo CD release the cluster runs (its profile's), if known
    exact_renderers: bool = False  # its profile asks for that release's renderers only

    @property
    def options(self) -> dict[str, t.Any]:
        value = json.loads(self.spec)
        return value if isinstance(value, dict) else {}


@dataclass
class Rendered:
    resources: list[Resource] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    reads: frozenset[str] = frozenset()  # the files the render reached (an editor's server)


def marker(files: t.Iterable[str], folder: str) -> str | None:
    """The file in `folder` (itself, not below) that makes Argo CD render it, if any."""
    inside = {posixpath.basename(f) for f in files if posixpath.dirname(f) == folder}
    return next((posixpath.join(folder, m) for m in (*KUSTOMIZATIONS, CHART) if m in inside), None)


def tool_of(source: Source, found: str | None) -> str:
    """How Argo CD renders a source: its spec's `helm:` or `kustomize:`, else by the folder's
    marker file, else a directory."""
    if "helm" in source.options or (found or "").endswith(CHART):
        return "helm"
    if "kustomize" in source.options or found is not None:
        return "kustomize"
    return "directory"


def problem(rule: rules.Rule, message: str, source: Source, file: str, line: int = 1) -> Finding:
    return Finding(rule, message, cluster=source.cluster, file=file, line=line)
