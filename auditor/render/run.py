"""One render: the files it reaches copied out of the tree, the renderer run on them under a
deadline (or its output taken from the cache), and its objects made Resources placed where a
person edits them. The kustomize and Helm specifics are in kustomize.py and helm.py.

The repository is the sandbox of every render (a pull request is untrusted): the copy holds
the repository's regular files only, and a path that leaves the repository (which, climbing
past the copy's root, would reach the runner's files) or a link that does stops the render
with a finding naming it, as does YAML past the readers' limits (pyyaml_reader.Budget) in what
the placing reads, before anything expands it."""

from __future__ import annotations

import posixpath
import re
import tempfile
import typing as t
from dataclasses import dataclass, field
from pathlib import Path

from auditor.k8s.objects import CLUSTER_SCOPED_KINDS
from auditor.model import Finding, Resource
from auditor.render import cache, mode, tools
from auditor.render.source import (
    OUTSIDE,
    RENDER_FAILED,
    RENDER_TIMEOUT,
    RENDERER_DIFFERS,
    RENDERER_UNAVAILABLE,
    Source,
    problem,
)
from auditor.repo import manifests, pyyaml_reader
from auditor.repo.tree import SymlinkOutside, Tree

EVERY_FILE = ("",)


@dataclass
class Job:
    """What one render needs: the files it reads, how to prepare and run the renderer."""

    source: Source
    tool: str
    marker: str  # the kustomization or Chart.yaml: where a failure is reported
    files: set[str] = field(default_factory=set)
    spec_key: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)  # what stops it before it runs
    notes: list[Finding] = field(default_factory=list)  # what it ran with, rendered or not
    edits: bool = False  # it applies the Application's overrides (`kustomize edit`)


def read_all(tree: Tree, job: Job) -> dict[str, bytes]:
    """The bytes of the files `job` reaches, which are all its render sees. A link among them
    that leads out of the repository stops it (a finding naming the link, never reading it:
    Argo CD refuses such a repository, and without the file the render would be another,
    `.Files.Get` reading it as empty)."""
    out: dict[str, bytes] = {}
    for path in sorted(job.files):
        try:
            data = tree.read(path)  # a refused folder ("x/") raises why it was refused
        except SymlinkOutside as exc:
            job.findings.append(
                problem(
                    OUTSIDE,
                    f"{exc}; {job.tool} reads the repository's files only, so "
                    f"{job.source.path}/ is not rendered",
                    job.source,
                    job.marker,
                )
            )
        except (OSError, KeyError):
            continue  # missing or refused otherwise: the renderer names what it lacks
        else:
            out[path] = data
    return out


def within(job: Job, entry: str, target: str, file: str, line: int) -> bool:
    """Whether `target` (`entry` as written in `file`, made relative to the repository's root)
    is inside the repository; if not, the job's finding at `line` names the entry (never
    what is there: nothing outside is read)."""
    if not (target == ".." or target.startswith(("../", "/"))):
        return True
    job.findings.append(
        problem(
            OUTSIDE,
            f"{entry} leads outside the repository; a render reads the repository's files "
            f"only, so {job.source.path}/ is not rendered: vendor what it needs into the "
            "repository",
            job.source,
            file,
            line,
        )
    )
    return False


def written(tree: Tree, job: Job, entry: str) -> tuple[str, int]:
    """Where the Application wrote `entry` (a value file, a component): its file, and the first
    line holding it (1 when a template made it)."""
    file = job.source.app or job.marker
    try:
        lines = tree.read(file).decode("utf-8", "replace").splitlines()
    except (OSError, KeyError):
        return file, 1
    return file, next((i for i, text in enumerate(lines, 1) if entry in text), 1)


def bounded(job: Job, text: str, file: str, line: int | None = None) -> bool:
    """Whether `text` (YAML the render's placing reads) keeps the limits the manifests keep
    (pyyaml_reader.Budget); if not, the job's finding at the file (at `line`, for YAML held
    in a string there) stops the render before anything expands it."""
    found = pyyaml_reader.over_budget(text, file)
    if found is None:
        return True
    found.cluster = job.source.cluster
    found.line = line or found.line
    found.message += f"; {job.source.path}/ is not rendered"
    job.findings.append(found)
    return False


def bounded_all(job: Job, data: dict[str, bytes], paths: t.Iterable[str]) -> None:
    """`bounded` for each of `paths` among `data` not judged yet (each overrun a finding)."""
    judged = {f.file for f in job.findings}
    for path in paths:
        if path in data and path not in judged:
            bounded(job, data[path].decode("utf-8", "replace"), path)


def execute(
    job: Job,
    data: dict[str, bytes],
    argv: t.Callable[[str, Path], list[tuple[list[str], Path]]],
) -> tuple[str | None, Finding | None]:
    """The renderer's output for `job` (from the cache, else run on a copy of `data`), or the
    finding that says why there is none. `argv(binary, root)` gives the commands to run in the
    copy (each with the folder it runs in), the last of which prints the objects."""
    source = job.source
    try:
        exact = mode.exact(source.exact_renderers)
        argocd = tools.argocd_of(source.cluster, source.argocd)
        renderer = tools.find(job.tool, exact, argocd, job.edits)
    except tools.Unavailable as exc:
        return None, problem(RENDERER_UNAVAILABLE, str(exc), source, job.marker)
    if renderer.differs:
        job.notes.append(_differs(job, renderer))
    binary = renderer.binary
    digest = cache.key((job.tool, renderer.version, source.path, *job.spec_key), data.items())
    cached = cache.get(digest)
    if cached is not None:
        return cached, None
    with tempfile.TemporaryDirectory(prefix="kueue-gitops-render-") as scratch:
        root = Path(scratch) / "tree"
        for path, body in data.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)
        (root / source.path).mkdir(parents=True, exist_ok=True)
        ran = tools.Ran(0, "", "")
        for command, cwd in argv(binary, root):
            ran = tools.run(command, cwd=cwd, deadline=tools.DEADLINE)
            if ran.overflow:
                return None, problem(
                    RENDER_FAILED,
                    f"{job.tool} printed more than {tools.MAX_OUTPUT // 2**20} MiB rendering "
                    f"{source.path}/ and was stopped, more than Argo CD syncs of a folder; "
                    "nothing it would make is checked",
                    source,
                    job.marker,
                )
            if ran.returncode is None:
                return None, problem(
                    RENDER_TIMEOUT,
                    f"{job.tool} did not finish rendering {source.path}/ within "
                    f"{tools.DEADLINE:.0f}s and was stopped; nothing it would make is checked",
                    source,
                    job.marker,
                )
            if ran.returncode != 0:
                said = _said(ran.stderr or ran.stdout, scratch)
                return None, problem(
                    RENDER_FAILED,
                    f"{job.tool} cannot render {source.path}/ as Argo CD would for "
                    f"{source.cluster}: {said}",
                    source,
                    job.marker,
                )
        cache.put(digest, ran.stdout)
        return ran.stdout, None


def _differs(job: Job, renderer: tools.Renderer) -> Finding:
    argocd = renderer.argocd or tools.argocd_release()
    by = "the kustomize of kubectl" if renderer.kubectl else job.tool
    return problem(
        RENDERER_DIFFERS,
        f"{job.source.path}/ was rendered by {by} {renderer.version} ({renderer.binary}), "
        f"where Argo CD {argocd} runs {job.tool} {renderer.wanted}: another release may build "
        f"other objects. Run `kueue-gitops sandbox build --tool {job.tool}` (needs Go) or put "
        f"{job.tool} {renderer.wanted} on PATH; --renderers exact renders with it only",
        job.source,
        job.marker,
    )


def _said(text: str, scratch: str) -> str:
    """The renderer's error, shortened, with the scratch copy's paths made the repository's."""
    lines = [ln.strip() for ln in text.replace(f"{scratch}/tree/", "").splitlines() if ln.strip()]
    said = "; ".join(lines[-3:]) or "no message"
    return said if len(said) <= 600 else said[:600] + "..."


def objects(text: str, source: Source, problems: list[Finding]) -> list[Resource]:
    """The rendered objects, each placed on the source's cluster, namespaced objects without a
    namespace put in the Application's (as Argo CD applies them); a rendered document that is
    no object is added to `problems`, at the folder it was rendered from."""
    found, unread = manifests.load_text(text, f"{source.path}/")
    for bad in unread:
        bad.cluster = source.cluster
        bad.message = f"{bad.message} (in what {source.path}/ renders to)"
        problems.append(bad)
    out = []
    for resource in found:
        if (
            source.namespace
            and resource.kind not in CLUSTER_SCOPED_KINDS
            and not resource.namespace
        ):
            resource.body.setdefault("metadata", {})["namespace"] = source.namespace
        fresh = Resource(resource.body, resource.file, resource.line)
        fresh.cluster, fresh.tenant = source.cluster, source.tenant
        fresh.rendered_from = f"{source.path}/"
        out.append(fresh)
    return out


REMOTE = re.compile(
    r"^(?:[a-z][a-z0-9+.-]*://|git::|git@|github\.com/|gitlab\.com/|bitbucket\.org/)"
)


def inside(folder: str, entry: str) -> str:
    return posixpath.normpath(posixpath.join(folder, entry))
