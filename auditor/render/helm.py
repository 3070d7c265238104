"""A Helm source, rendered as Argo CD renders it: `helm template` with the Application's
release name, namespace, value files, values and parameters, and the cluster's kube version.
A dependency must be vendored in the chart's charts/ (kueue-gitops reads no chart repository).
"""

from __future__ import annotations

import posixpath
import re
import typing as t
from pathlib import Path

import yaml

from auditor.model import Resource
from auditor.render import CHART, CHART_DEPENDENCY, Rendered, Source, locate, problem, run, tools

_SOURCE = re.compile(r"^# Source: (\S+)", re.M)
VALUES_FILE = ".kueue-gitops-values.yaml"  # the Application's inline values, as Argo CD writes them


def render(tree: t.Any, source: Source, chart_file: str) -> Rendered:
    options = source.options.get("helm") or {}
    job = run.Job(source, "helm", chart_file)
    job.files.update(tree.files(source.path, run.EVERY_FILE))
    value_files = _value_files(tree, job, options)
    job.files.update(value_files)
    data = run.read_all(tree, job)
    run.bounded_all(job, data, [chart_file, f"{source.path}/values.yaml", *value_files])
    found = job.findings or _unvendored(data, source, chart_file)
    out = Rendered(findings=list(found), reads=frozenset(job.files))
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
        return [(argv, root)]

    text, failed = run.execute(job, data, commands)
    out.findings.extend(job.notes)
    if failed is not None:
        out.findings.append(failed)
        return out
    assert text is not None
    files = [*reversed(value_files), f"{source.path}/values.yaml"]
    texts = [(f, data.get(f, b"").decode("utf-8", "replace")) for f in files]
    values = locate.helm_values(options, source.app or source.path, dict(source.lines), texts)
    for resource, template in _split(text, source, out.findings):
        body = data.get(template, b"").decode("utf-8", "replace")
        resource.file = template
        resource.line = locate.kind_line(body, resource.kind, resource.name)
        resource.sources = locate.trace_helm(resource.body, template, body, values)
        out.resources.append(resource)
    return out


def _inline(options: dict[str, t.Any]) -> dict[str, t.Any]:
    """The Application's own values: `valuesObject`, else `values` (YAML text)."""
    if isinstance(options.get("valuesObject"), dict):
        return dict(options["valuesObject"])
    try:
        found = yaml.safe_load(str(options.get("values") or "")) or {}
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


def _unvendored(data: dict[str, bytes], source: Source, chart_file: str) -> list[t.Any]:
    docs = locate.documents(data.get(chart_file, b"").decode("utf-8", "replace"), chart_file)
    chart = docs[0].body if docs and isinstance(docs[0].body, dict) else {}
    lines = docs[0].lines if docs else {}
    out = []
    charts = f"{source.path}/charts/"
    for i, dependency in enumerate(chart.get("dependencies") or []):
        name = str((dependency or {}).get("name", "")) if isinstance(dependency, dict) else ""
        if not name:
            continue
        vendored = f"{charts}{name}/{CHART}" in data or any(
            p.startswith(f"{charts}{name}-") and p.endswith(".tgz") for p in data
        )
        if not vendored:
            out.append(
                problem(
                    CHART_DEPENDENCY,
                    f"the chart depends on {name!r} "
                    f"({dependency.get('repository', 'no repository')}), which is not vendored "
                    f"in {charts}; kueue-gitops reads no chart repository, "
                    "so the chart is not rendered: run `helm dependency build` and commit charts/",
                    source,
                    chart_file,
                    lines.get(("dependencies", i), 1),
                )
            )
    return out


def _split(text: str, source: Source, problems: list[t.Any]) -> t.Iterator[tuple[Resource, str]]:
    """Each rendered object with the template it came from (its `# Source:`, the chart's name
    replaced by the chart's folder)."""
    for chunk in re.split(r"^---\s*$", text, flags=re.M):
        named = _SOURCE.search(chunk)
        if named is None:
            continue
        template = posixpath.join(source.path, named.group(1).split("/", 1)[1])
        for resource in run.objects(chunk, source, problems):
            yield resource, template
