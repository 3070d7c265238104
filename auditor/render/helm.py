"""A Helm source, rendered as Argo CD renders it: `helm template` with the Application's
release name, namespace, value files, values and parameters, and the cluster's kube version.
A dependency is vendored in the chart's charts/, or a `file://` chart inside the repository, which
is built as Argo CD builds it (`helm dependency build`, offline, in the render's copy);
kueue-gitops reads no chart repository, so a remote one not vendored is a finding.
"""

from __future__ import annotations

import posixpath
import re
import typing as t
from pathlib import Path

import yaml

from auditor.model import Resource
from auditor.render import locate, run, tools
from auditor.render.source import CHART, CHART_DEPENDENCY, OUTSIDE, Rendered, Source, problem
from auditor.repo import pyyaml_reader

_SOURCE = re.compile(r"^# Source: (\S+)", re.M)
BOUNDED = (CHART, "values.yaml")  # a local dependency's YAML its render reads
VALUES_FILE = ".kueue-gitops-values.yaml"  # the Application's inline values, as Argo CD writes them


def render(tree: t.Any, source: Source, chart_file: str) -> Rendered:
    options = source.options.get("helm") or {}
    job = run.Job(source, "helm", chart_file)
    data, value_files, local = _gather(tree, job, options)
    out = Rendered(findings=list(job.findings), reads=frozenset(job.files))
    if out.findings:
        return out  # a link or a value file out of the repository, YAML past the limits
    release = str(
        options.get("releaseName") or source.application or posixpath.basename(source.path)
    )
    namespace = str(options.get("namespace") or source.namespace or "default")
    kube = str(options.get("kubeVersion") or tools.kube_version())
    inline = _inline(options)
    job.spec_key = (source.spec, release, namespace, kube)

    def commands(binary: str, root: Path) -> list[tuple[list[str], Path]]:
        argv = [
            binary,
            "template",
            source.path,
            "--name-template",
            release,
            "--namespace",
            namespace,
        ]
        if kube:
            argv += ["--kube-version", kube]
        for file in value_files:
            argv += ["--values", file]
        if inline:
            (root / VALUES_FILE).write_text(yaml.safe_dump(inline))
            argv += ["--values", VALUES_FILE]
        for parameter in options.get("parameters") or []:
            if isinstance(parameter, dict) and "name" in parameter:
                flag = "--set-string" if parameter.get("forceString") else "--set"
                argv += [flag, f"{parameter['name']}={parameter.get('value', '')}"]
        for api in options.get("apiVersions") or []:
            argv += ["--api-versions", str(api)]
        if not options.get("skipCrds"):
            argv.append("--include-crds")
        build = [binary, "dependency", "build", source.path, "--skip-refresh"]
        # as Argo CD's repo-server builds them; --skip-refresh: no chart repository is read
        return [(build, root), (argv, root)] if local else [(argv, root)]

    text, failed = run.execute(job, data, commands)
    out.findings.extend(job.notes)
    if failed is not None:
        out.findings.append(failed)
        return out
    assert text is not None
    files = [*reversed(value_files), f"{source.path}/values.yaml"]
    texts = [(f, data.get(f, b"").decode("utf-8", "replace")) for f in files]
    values = locate.helm_values(options, source.app or source.path, dict(source.lines), texts)
    for resource, template in _split(text, source, out.findings, local):
        body = data.get(template, b"").decode("utf-8", "replace")
        resource.file = template
        resource.line = locate.kind_line(body, resource.kind, resource.name)
        resource.sources = locate.trace_helm(resource.body, template, body, values)
        out.resources.append(resource)
    return out


def _gather(
    tree: t.Any, job: run.Job, options: dict[str, t.Any]
) -> tuple[dict[str, bytes], list[str], dict[str, str]]:
    """The bytes of every file the render reads (the chart, its value files, its local
    dependencies), the value files, and the local dependencies by name (their folders)."""
    source, chart_file = job.source, job.marker
    job.files.update(tree.files(source.path, run.EVERY_FILE))
    value_files = _value_files(tree, job, options)
    job.files.update(value_files)
    data = run.read_all(tree, job)
    run.bounded_all(job, data, [chart_file, f"{source.path}/values.yaml", *value_files])
    local = {} if job.findings else _dependencies(tree, job, data, chart_file)
    if local:
        data = run.read_all(tree, job)  # with the local dependencies' files
        run.bounded_all(job, data, [f"{d}/{f}" for d in local.values() for f in BOUNDED])
    return data, value_files, local


def _inline(options: dict[str, t.Any]) -> dict[str, t.Any]:
    """The Application's own values: `valuesObject`, else `values` (YAML text)."""
    if isinstance(options.get("valuesObject"), dict):
        return dict(options["valuesObject"])
    try:
        found = pyyaml_reader.load_one(str(options.get("values") or "")) or {}  # within budget
    except yaml.YAMLError:
        return {}
    return found if isinstance(found, dict) else {}


def _value_files(tree: t.Any, job: run.Job, options: dict[str, t.Any]) -> list[str]:
    """The Application's value files, relative to the repository's root; one out of it is the
    job's finding (Argo CD refuses it too), never read."""
    out = []
    for entry in options.get("valueFiles") or []:
        if isinstance(entry, str):
            file = run.inside(job.source.path, entry)
            if run.within(job, entry, file, *run.written(tree, job, entry)):
                out.append(file)
    return out


def _dependencies(
    tree: t.Any, job: run.Job, data: dict[str, bytes], chart_file: str
) -> dict[str, str]:
    """The chart's `file://` dependencies not vendored, by name, each with its folder in the
    repository (its files added to the job's). One not vendored from a chart repository is the
    job's finding (kueue-gitops reads none), as is a `file://` one out of the repository."""
    source = job.source
    docs = locate.documents(data.get(chart_file, b"").decode("utf-8", "replace"), chart_file)
    chart = docs[0].body if docs and isinstance(docs[0].body, dict) else {}
    lines = docs[0].lines if docs else {}
    charts = f"{source.path}/charts/"
    local: dict[str, str] = {}
    for i, dependency in enumerate(chart.get("dependencies") or []):
        name = str((dependency or {}).get("name", "")) if isinstance(dependency, dict) else ""
        if (
            not name
            or f"{charts}{name}/{CHART}" in data
            or any(p.startswith(f"{charts}{name}-") and p.endswith(".tgz") for p in data)
        ):
            continue  # vendored (or no dependency helm would build)
        repository = str(dependency.get("repository") or "no repository")
        line = lines.get(("dependencies", i), 1)
        if repository.startswith("file://"):
            folder = run.inside(source.path, repository.removeprefix("file://"))
            if folder == ".." or folder.startswith(("../", "/")):
                job.findings.append(_outside(source, name, repository, chart_file, line))
            else:
                local[name] = folder
                job.files.update(tree.files(folder, run.EVERY_FILE))
            continue
        job.findings.append(
            problem(
                CHART_DEPENDENCY,
                f"the chart depends on {name!r} ({repository}), which is not vendored in "
                f"{charts}; kueue-gitops reads no chart repository, so the chart is not "
                "rendered: run `helm dependency build` and commit charts/, or keep the chart "
                "in the repository and name it by `file://`",
                source,
                chart_file,
                line,
            )
        )
    return local


def _outside(source: Source, name: str, repository: str, chart_file: str, line: int) -> t.Any:
    return problem(
        OUTSIDE,
        f"the chart's dependency {name!r} ({repository}) leads outside the repository; a "
        f"render reads the repository's files only, so {source.path}/ is not rendered: "
        "vendor the chart into the repository",
        source,
        chart_file,
        line,
    )


def _split(
    text: str, source: Source, problems: list[t.Any], local: dict[str, str]
) -> t.Iterator[tuple[Resource, str]]:
    """Each rendered object with the template it came from (its `# Source:`, the chart's name
    replaced by the chart's folder; a local dependency's, by the folder it was built from)."""
    built = {f"{source.path}/charts/{name}/": f"{folder}/" for name, folder in local.items()}
    for chunk in re.split(r"^---\s*$", text, flags=re.M):
        named = _SOURCE.search(chunk)
        if named is None:
            continue
        template = posixpath.join(source.path, named.group(1).split("/", 1)[1])
        for inside, folder in built.items():
            if template.startswith(inside):
                template = folder + template.removeprefix(inside)
        for resource in run.objects(chunk, source, problems):
            yield resource, template
