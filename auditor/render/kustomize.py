"""A kustomize source, built as Argo CD builds it: the overrides of the Application's
`kustomize:` applied with `kustomize edit` (as the repo-server does), then `kustomize build`,
with `buildMetadata: [originAnnotations]` added so each object names the file it came from.
"""

from __future__ import annotations

import posixpath
import typing as t
from pathlib import Path

import yaml

from auditor.model import Resource
from auditor.render import locate, run, tools
from auditor.render.source import KUSTOMIZATIONS, REMOTE_BASE, Rendered, Source, problem
from auditor.repo import pyyaml_reader

ORIGIN = "config.kubernetes.io/origin"
TRANSFORMATIONS = "alpha.config.kubernetes.io/transformations"
_LISTED = ("resources", "bases", "components")
_PATCHES = ("patches", "patchesStrategicMerge", "patchesJson6902")


def render(tree: t.Any, source: Source, kustomization: str) -> Rendered:
    job = run.Job(source, "kustomize", kustomization)
    patches: list[locate.Doc] = []
    _reach(tree, source.path, job, patches, set())
    _own_components(tree, job)
    data = run.read_all(tree, job)
    yamls = [p for p in data if p.endswith((".yaml", ".yml"))]
    run.bounded_all(job, data, yamls)
    out = Rendered(findings=list(job.findings), reads=frozenset(job.files))
    if out.findings:
        return out  # a remote base, a path out of the repository, YAML past the limits
    options = source.options.get("kustomize") or {}
    job.spec_key = (source.spec,)
    job.edits = bool(_edits([], options))
    text, failed = run.execute(
        job, data, lambda binary, root: _commands(binary, root, source, options)
    )
    out.findings.extend(job.notes)
    if failed is not None:
        out.findings.append(failed)
        return out
    assert text is not None
    sources = {p: locate.documents(data[p].decode("utf-8", "replace"), p) for p in yamls}
    for resource in run.objects(text, source, out.findings):
        _place(resource, source, sources, patches)
        out.resources.append(resource)
    return out


def _reach(
    tree: t.Any, folder: str, job: run.Job, patches: list[locate.Doc], seen: set[str]
) -> None:
    """Every file a build of `folder` can read (its folders whole, the files it lists), the
    patches it applies (outermost first); what it names outside the repository (a URL, a
    path out of it) is the job's finding instead."""
    if folder in seen:
        return
    seen.add(folder)
    everything = tree.files(folder, run.EVERY_FILE)
    job.files.update(everything)
    name = next((f"{folder}/{k}" for k in KUSTOMIZATIONS if f"{folder}/{k}" in everything), None)
    if name is None:
        return
    docs = _documents(tree, job, name)
    body = docs[0].body if docs and isinstance(docs[0].body, dict) else {}
    lines = docs[0].lines if docs else {}
    for entry, path in _named_files(body):
        run.within(job, entry, run.inside(folder, entry), name, lines.get(path, 1))
    for key in _PATCHES:
        for i, entry in enumerate(_listed(body, key)):
            _patch(tree, job, folder, name, entry, lines.get((key, i), 1), patches)
    for key in _LISTED:
        for i, entry in enumerate(_listed(body, key)):
            if not isinstance(entry, str):
                continue
            at = lines.get((key, i), 1)
            if run.REMOTE.match(entry) or "?ref=" in entry:
                job.findings.append(
                    problem(
                        REMOTE_BASE,
                        f"{entry} is outside the repository; kueue-gitops reads no network, "
                        f"so {job.source.path}/ is not rendered: vendor the base into the "
                        "repository",
                        job.source,
                        name,
                        at,
                    )
                )
                continue
            target = run.inside(folder, entry)
            if not run.within(job, entry, target, name, at):
                continue
            if tree.is_dir(target):
                _reach(tree, target, job, patches, seen)
            else:
                job.files.add(target)


def _documents(tree: t.Any, job: run.Job, file: str) -> list[locate.Doc]:
    """The documents of a file the build reads, once they keep the readers' limits."""
    try:
        text = tree.read(file).decode("utf-8", "replace")
    except (OSError, KeyError):
        return []  # kustomize names what is missing (read_all, a link out of the repository)
    return locate.documents(text, file) if run.bounded(job, text, file) else []


def _listed(body: dict[str, t.Any], key: str) -> list[t.Any]:
    found = body.get(key)
    return found if isinstance(found, list) else []


def _patch(
    tree: t.Any,
    job: run.Job,
    folder: str,
    name: str,
    entry: t.Any,
    at: int,
    patches: list[locate.Doc],
) -> None:
    """One entry of a kustomization's patches: its file's documents, or its inline text's
    (placed at its entry in the kustomization)."""
    path = entry.get("path") if isinstance(entry, dict) else entry
    inline = entry.get("patch") if isinstance(entry, dict) else None
    if isinstance(path, str) and not path.lstrip().startswith(("apiVersion", "-", "{")):
        file = run.inside(folder, path)
        if run.within(job, path, file, name, at):
            job.files.add(file)
            patches += _documents(tree, job, file)
        return
    text = inline if isinstance(inline, str) else path if isinstance(path, str) else ""
    if not run.bounded(job, text, name, at):
        return
    for doc in locate.documents(text, name):
        doc.lines = {p: at for p in doc.lines}
        doc.line = at
        patches.append(doc)


# The other fields of a kustomization that name a file, each relative to its folder: kustomize
# reads none outside the folder (its load restrictor), but one out of the repository is named
# where it is written. (A `files:` entry may be `key=path`.)
_FILE_LISTS = ("crds", "configurations", "generators", "transformers", "validators")
_GENERATORS = ("configMapGenerator", "secretGenerator", "helmCharts")


def _named_files(body: dict[str, t.Any]) -> t.Iterator[tuple[str, tuple[str | int, ...]]]:
    """(path as written, where it is written) of each file a kustomization names besides its
    resources and patches."""
    for key in _FILE_LISTS:
        for i, entry in enumerate(_listed(body, key)):
            if isinstance(entry, str) and "\n" not in entry:  # else an inline configuration
                yield entry, (key, i)
    for key in _GENERATORS:
        for i, gen in enumerate(_listed(body, key)):
            gen = gen if isinstance(gen, dict) else {}
            for field in ("files", "envs", "additionalValuesFiles"):
                for j, entry in enumerate(_listed(gen, field)):
                    if isinstance(entry, str):
                        yield entry.split("=", 1)[-1], (key, i, field, j)
            for field in ("env", "valuesFile"):
                if isinstance(gen.get(field), str):
                    yield gen[field], (key, i, field)
    for i, entry in enumerate(_listed(body, "replacements")):
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            yield entry["path"], ("replacements", i, "path")
    for key in ("openapi", "helmGlobals"):
        inner = body.get(key)
        inner = inner if isinstance(inner, dict) else {}
        for field in ("path", "chartHome", "configHome"):
            if isinstance(inner.get(field), str):
                yield inner[field], (key, field)


def _own_components(tree: t.Any, job: run.Job) -> None:
    """The components the Application adds (`kustomize edit add component`, relative to its
    folder) must be in the repository too."""
    options = job.source.options.get("kustomize") or {}
    listed = options.get("components") if isinstance(options, dict) else None
    for entry in listed if isinstance(listed, list) else []:
        target = run.inside(job.source.path, str(entry))
        run.within(job, str(entry), target, *run.written(tree, job, str(entry)))


def _commands(
    binary: str, root: Path, source: Source, options: dict[str, t.Any]
) -> list[tuple[list[str], Path]]:
    """Argo CD's edits of the Application's overrides (run in the folder, as `kustomize edit`
    wants), then the build with origins (`kubectl kustomize`, when kubectl renders: it is
    chosen only for a folder without overrides, tools.find)."""
    folder = root / source.path
    _with_origins(folder)
    if Path(binary).name == tools.KUBECTL:
        return [([binary, "kustomize", str(folder)], root)]
    edits = _edits([binary, "edit"], options)
    return [*((e, folder) for e in edits), ([binary, "build", str(folder)], root)]


def _edits(edit: list[str], options: dict[str, t.Any]) -> list[list[str]]:
    """The `kustomize edit` commands that apply the Application's kustomize overrides."""
    edits: list[list[str]] = []
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
    return edits


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
    try:  # kustomize's, unless a base wrote its own: read within the readers' limits
        origin = pyyaml_reader.load_one(str(notes.pop(ORIGIN, "") or "")) or {}
    except yaml.YAMLError:
        origin = {}
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
