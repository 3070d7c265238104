"""A kustomize source, built as Argo CD builds it: the overrides of the Application's
`kustomize:` applied with `kustomize edit` (as the repo-server does), then `kustomize build`,
with `buildMetadata: [originAnnotations]` added so each object names the file it came from.
"""

from __future__ import annotations

import contextlib
import posixpath
import typing as t
from pathlib import Path

import yaml

from auditor.model import Resource
from auditor.render import KUSTOMIZATIONS, REMOTE_BASE, Rendered, Source, locate, problem, run

ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "alpha.config.kubernetes.io/transformations"
_LISTED = ("resources", "bases", "components")
_PATCHES = ("patches", "patchesStrategicMerge", "patchesJson6902")


def render(tree: t.Any, source: Source, kustomization: str) -> Rendered:
    job = run.Job(source, "kustomize", kustomization)
    patches: list[locate.Doc] = []
    _reach(tree, source.path, job, patches, set())
    data = run.read_all(tree, job.files)
    out = Rendered(findings=list(job.findings), reads=frozenset(job.files))
    if out.findings:
        return out  # a remote base: kustomize would reach for the network
    options = source.options.get("kustomize") or {}
    job.spec_key = (source.spec,)
    text, failed = run.execute(
        job, data, lambda binary, root: _commands(binary, root, source, options)
    )
    if failed is not None:
        out.findings.append(failed)
        return out
    assert text is not None
    sources = {path: locate.documents(body.decode("utf-8", "replace"), path)
               for path, body in data.items() if path.endswith((".yaml", ".yml"))}  # fmt: skip
    for resource in run.objects(text, source, out.findings):
        _place(resource, source, sources, patches)
        out.resources.append(resource)
    return out


def _reach(
    tree: t.Any, folder: str, job: run.Job, patches: list[locate.Doc], seen: set[str]
) -> None:
    """Every file a build of `folder` can read (its folders whole, the files it lists), the
    patches it applies (outermost first) and the remote bases it names."""
    if folder in seen:
        return
    seen.add(folder)
    everything = tree.files(folder, run.EVERY_FILE)
    job.files.update(everything)
    name = next((f"{folder}/{k}" for k in KUSTOMIZATIONS if f"{folder}/{k}" in everything), None)
    if name is None:
        return
    try:
        docs = locate.documents(tree.read(name).decode("utf-8", "replace"), name)
    except (OSError, KeyError):
        return
    body = docs[0].body if docs and isinstance(docs[0].body, dict) else {}
    lines = docs[0].lines if docs else {}
    for key in _PATCHES:
        for i, entry in enumerate(body.get(key) or []):
            path = entry.get("path") if isinstance(entry, dict) else entry
            inline = entry.get("patch") if isinstance(entry, dict) else None
            if isinstance(path, str) and not path.lstrip().startswith(("apiVersion", "-", "{")):
                file = run.inside(folder, path)
                job.files.add(file)
                with contextlib.suppress(OSError, KeyError):  # kustomize names what is missing
                    patches += locate.documents(tree.read(file).decode("utf-8", "replace"), file)
            else:  # an inline patch: its fields are placed at its entry in the kustomization
                text = inline if isinstance(inline, str) else path if isinstance(path, str) else ""
                at = lines.get((key, i), 1)
                for doc in locate.documents(text, name):
                    doc.lines = {p: at for p in doc.lines}
                    doc.line = at
                    patches.append(doc)
    for key in _LISTED:
        for i, entry in enumerate(body.get(key) or []):
            if not isinstance(entry, str):
                continue
            if run.REMOTE.match(entry) or "?ref=" in entry:
                job.findings.append(
                    problem(
                        REMOTE_BASE,
                        f"{entry} is outside the repository; kueue-gitops reads no network, "
                        f"so {job.source.path}/ is not rendered: vendor the base into the "
                        "repository",
                        job.source,
                        name,
                        lines.get((key, i), 1),
                    )
                )
                continue
            target = run.inside(folder, entry)
            if tree.is_dir(target):
                _reach(tree, target, job, patches, seen)
            else:
                job.files.add(target)


def _commands(
    binary: str, root: Path, source: Source, options: dict[str, t.Any]
) -> list[tuple[list[str], Path]]:
    """Argo CD's edits of the Application's overrides (run in the folder, as `kustomize edit`
    wants), then the build with origins."""
    folder = root / source.path
    edits: list[list[str]] = []
    edit = [binary, "edit"]
    if options.get("namePrefix"):
        edits.append([*edit, "set", "nameprefix", "--", str(options["namePrefix"])])
    if options.get("nameSuffix"):
        edits.append([*edit, "set", "namesuffix", "--", str(options["nameSuffix"])])
    if options.get("images"):
        edits.append([*edit, "set", "image", *(str(i) for i in options["images"])])
    labels = options.get("commonLabels")
    if isinstance(labels, dict) and labels:
        flags = ["--force"] if options.get("forceCommonLabels") else []
        if options.get("labelWithoutSelector"):
            flags.append("--without-selector")
        pairs = [f"{k}:{v}" for k, v in labels.items()]
        edits.append([*edit, "add", "label", *flags, *pairs])
    notes = options.get("commonAnnotations")
    if isinstance(notes, dict) and notes:
        flags = ["--force"] if options.get("forceCommonAnnotations") else []
        edits.append([*edit, "add", "annotation", *flags, *(f"{k}:{v}" for k, v in notes.items())])
    if options.get("namespace"):
        edits.append([*edit, "set", "namespace", "--", str(options["namespace"])])
    if options.get("components"):
        edits.append([*edit, "add", "component", *(str(c) for c in options["components"])])
    _with_origins(folder)
    return [*((e, folder) for e in edits), ([binary, "build", str(folder)], root)]


def _with_origins(folder: Path) -> None:
    """Ask the build to annotate each object with the file it came from (read, then removed)."""
    for name in KUSTOMIZATIONS:
        path = folder / name
        if path.is_file():
            try:
                body = yaml.safe_load(path.read_text()) or {}
            except yaml.YAMLError:
                return  # kustomize says what is wrong with it, at its line
            if not isinstance(body, dict):
                return
            wanted = list(body.get("buildMetadata") or [])
            if "originAnnotations" not in wanted:
                body["buildMetadata"] = [*wanted, "originAnnotations"]
                path.write_text(yaml.safe_dump(body, sort_keys=False))
            return


def _place(
    resource: Resource,
    source: Source,
    sources: dict[str, list[locate.Doc]],
    patches: list[locate.Doc],
) -> None:
    """The object's own place (the base document it came from) and each field's."""
    meta = resource.body.get("metadata") or {}
    notes = meta.get("annotations") or {}
    origin = yaml.safe_load(notes.pop(ORIGIN, "") or "") or {}
    notes.pop(TRANSFORMATIONS, None)
    if not notes:
        meta.pop("annotations", None)
    path = origin.get("path") if isinstance(origin, dict) else None
    if not isinstance(path, str):
        return  # generated (a ConfigMapGenerator's): placed at the folder it was rendered from
    file = posixpath.normpath(posixpath.join(source.path, path))
    base = locate.base_of(sources.get(file, []), resource.body)
    resource.file, resource.line = file, base.line if base else 1
    resource.sources = locate.trace_kustomize(resource.body, base, patches)
