"""Which folder syncs to which cluster and namespace, as the repository's own Argo CD
Applications and ApplicationSets say.

Generators read: git directories and git files (their paths matched in the repository), list,
clusters (every cluster of the layout, by name) and a matrix of two of those. A template is
filled with its parameters as Argo CD fills it (`goTemplate: true`: `{{.path.basename}}`,
`{{index .path.segments 1}}`; else `{{path.basename}}`, `{{path[1]}}`); anything else is a
finding on the Application, never a folder silently left out.
"""

from __future__ import annotations

import copy
import fnmatch
import json
import posixpath
import re
import typing as t

from auditor import rules
from auditor.k8s.objects import FieldPath
from auditor.model import Finding
from auditor.render import locate
from auditor.render.source import Source
from auditor.repo import pyyaml_reader

_RULES = rules.of("auditor.render")
UNREAD = _RULES["argocd-application-unread"]
API = b"argoproj.io/"
_EXPR = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
Params = dict[str, t.Any]
_WHERE = "\0where"  # in a generator's parameters: the line of each list element's value


class _Unread(Exception):
    pass


def sources(tree: t.Any, clusters: t.Collection[str]) -> tuple[list[Source], list[Finding]] | None:
    """The folders the repository's Applications and ApplicationSets sync, each with its
    cluster and namespace; None when the repository holds neither."""
    found: list[Source] = []
    findings: list[Finding] = []
    seen = False
    for path in tree.files(""):
        try:
            data = tree.read(path)
        except (OSError, KeyError):
            continue
        if API not in data or b"kind: Application" not in data:
            continue
        text = data.decode("utf-8", "replace")
        over = pyyaml_reader.over_budget(text, path)  # a bomb is never expanded
        if over is not None:
            seen = True
            findings.append(over)
            continue
        for doc in locate.documents(text, path):
            body = doc.body if isinstance(doc.body, dict) else {}
            kind = body.get("kind")
            if kind not in ("Application", "ApplicationSet"):
                continue
            seen = True
            try:
                apps: list[tuple[Params, dict[FieldPath, int]]] = [(body, {})]
                root: FieldPath = ("spec",)
                if kind == "ApplicationSet":
                    apps = _generated(tree, body, clusters, doc.lines)
                    root = ("spec", "template", "spec")
                for app, filled in apps:  # a value filled in from a list element: its line
                    lines = {**_spec_lines(doc, root), **{p[1:]: n for p, n in filled.items()}}
                    found += _of(tree, app, path, clusters, lines)
            except _Unread as why:
                findings.append(Finding(UNREAD, f"{kind} {_name(body)}: {why}", file=path,
                                        line=doc.line))  # fmt: skip
    return (found, findings) if seen else None


def _name(body: dict[str, t.Any]) -> str:
    return str((body.get("metadata") or {}).get("name", "?"))


def _spec_lines(doc: locate.Doc, root: FieldPath) -> dict[FieldPath, int]:
    """The lines of an Application's spec (an ApplicationSet's template's), by path within it;
    a literal block's text (`values: |`) from the line after its key (locate.BLOCK)."""
    out = {p[len(root) :]: n for p, n in doc.lines.items() if p[: len(root)] == root}
    for p, n in doc.blocks.items():
        if p[: len(root)] == root:
            out[(*p[len(root) :], locate.BLOCK)] = n
    return out


def _source_lines(spec_lines: dict[FieldPath, int], at: FieldPath) -> tuple[t.Any, ...]:
    """The lines of one source of the spec (`source` or `sources[i]`), by path within it."""
    return tuple(sorted(((p[len(at) :], n) for p, n in spec_lines.items()
                         if p[: len(at)] == at and len(p) > len(at)), key=str))  # fmt: skip


def _of(
    tree: t.Any,
    app: dict[str, t.Any],
    file: str,
    clusters: t.Collection[str],
    spec_lines: dict[FieldPath, int] | None = None,
) -> list[Source]:
    spec = app.get("spec") or {}
    destination = spec.get("destination") or {}
    cluster = destination.get("name")
    many = bool(spec.get("sources"))
    listed = spec.get("sources") or ([spec["source"]] if spec.get("source") else [])
    paths = [
        (("sources", i) if many else ("source",), s)
        for i, s in enumerate(listed)
        if isinstance(s, dict) and isinstance(s.get("path"), str)
    ]
    if not paths:
        return []  # a chart from a chart repository: nothing of this repository
    if cluster not in clusters:
        raise _Unread(
            f"its destination {cluster or destination.get('server') or 'none'!r} is no cluster "
            f"of the layout ({', '.join(sorted(clusters)) or 'none'}), so "
            f"{', '.join(str(s['path']) for _, s in paths)} is not checked"
        )
    for _, s in paths:  # Argo CD fails such an Application: never a silent "nothing to check"
        folder = posixpath.normpath(str(s["path"])).strip("/") or "."
        if folder != "." and not tree.is_dir(folder):
            raise _Unread(f"its path {folder!r} is no folder of this repository")
    return [
        Source(
            posixpath.normpath(str(s["path"])).strip("/") or ".",
            str(cluster),
            destination.get("namespace") or None,
            json.dumps({k: v for k, v in s.items() if k in ("kustomize", "helm", "directory")}),
            file,
            application=_name(app),
            lines=_source_lines(spec_lines or {}, at),
        )
        for at, s in paths
    ]


def _generated(
    tree: t.Any, appset: dict[str, t.Any], clusters: t.Collection[str], lines: locate.Lines
) -> list[tuple[Params, dict[FieldPath, int]]]:
    """The Applications an ApplicationSet makes, each with the lines of the list elements
    that filled its template's fields (by path within the template)."""
    spec = appset.get("spec") or {}
    go = bool(spec.get("goTemplate"))
    template = spec.get("template") or {}
    apps = []
    for g, generator in enumerate(spec.get("generators") or []):
        for params in _params(tree, generator, clusters, go, ("spec", "generators", g), lines):
            apps.append((_fill(copy.deepcopy(template), params, go), _filled_at(template, params)))
    return apps


def _params(
    tree: t.Any,
    generator: dict[str, t.Any],
    clusters: t.Collection[str],
    go: bool,
    at: FieldPath = (),
    lines: locate.Lines | None = None,
) -> list[Params]:
    """A generator's parameter sets; a list element's keep the line of each of their values
    (under _WHERE) and a matrix's both halves'."""
    if "list" in generator:
        return _elements(generator["list"] or {}, (*at, "list", "elements"), lines or {})
    if "clusters" in generator:
        return [{"name": c, "nameNormalized": c, "server": ""} for c in sorted(clusters)]
    if "matrix" in generator:
        parts = (generator["matrix"] or {}).get("generators") or []
        if len(parts) != 2:
            raise _Unread("a matrix generator of other than two generators is not read")
        inner = [(*at, "matrix", "generators", i) for i in range(2)]
        return [
            {**a, **b, _WHERE: {**a.get(_WHERE, {}), **b.get(_WHERE, {})}}
            for a in _params(tree, parts[0], clusters, go, inner[0], lines)
            for b in _params(
                tree, _fill(copy.deepcopy(parts[1]), a, go), clusters, go, inner[1], lines
            )
        ]
    git = generator.get("git")
    if isinstance(git, dict):
        if git.get("directories"):
            return [_path_params(d, go) for d in _directories(tree, git["directories"])]
        if git.get("files"):
            return _files(tree, git["files"], go)
    raise _Unread(f"its generator {sorted(generator)} is not read")


def _elements(generator: dict[str, t.Any], at: FieldPath, lines: locate.Lines) -> list[Params]:
    """A list generator's elements, each value's line under _WHERE (by its dotted name)."""
    out = []
    for i, element in enumerate(generator.get("elements") or []):
        if isinstance(element, dict):
            where = {
                ".".join(map(str, p)): lines.get((*at, i, *p), 0) for p, _ in locate.leaves(element)
            }
            out.append({**element, _WHERE: where})
    return out


def _filled_at(template: t.Any, params: Params) -> dict[FieldPath, int]:
    """The template's fields that are one parameter of a list element, at that value's line."""
    where = params.get(_WHERE) or {}
    out: dict[FieldPath, int] = {}
    for path, value in locate.leaves(template):
        found = _EXPR.fullmatch(value) if isinstance(value, str) else None
        line = where.get(found.group(1).lstrip(".")) if found else None
        if line:
            out[path] = line
    return out


def _match(path: str, pattern: str) -> bool:
    """Go's path.Match as the git generators use it: `*` never crosses `/`."""
    regex = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, path) is not None


def _directories(tree: t.Any, entries: list[t.Any]) -> list[str]:
    folders = sorted({posixpath.dirname(f) for f in tree.files("")} - {""})
    every = sorted(
        {"/".join(f.split("/")[:i]) for f in folders for i in range(1, f.count("/") + 2)}
    )
    include = [str(e.get("path")) for e in entries if isinstance(e, dict) and not e.get("exclude")]
    exclude = [str(e.get("path")) for e in entries if isinstance(e, dict) and e.get("exclude")]
    return [
        d
        for d in every
        if any(_match(d, p) for p in include) and not any(_match(d, p) for p in exclude)
    ]


def _path_params(folder: str, go: bool, extra: Params | None = None) -> Params:
    segments = folder.split("/")
    path = {
        "path": folder,
        "basename": segments[-1],
        "basenameNormalized": re.sub(r"[^a-z0-9-]", "-", segments[-1].lower()),
        "segments": segments,
    }
    if go:
        return {**(extra or {}), "path": path}
    flat: Params = {**(extra or {}), "path": folder}
    flat.update({f"path.{k}": v for k, v in path.items() if k != "path"})
    flat.update({f"path[{i}]": s for i, s in enumerate(segments)})
    return flat


def _files(tree: t.Any, entries: list[t.Any], go: bool) -> list[Params]:
    out = []
    for entry in entries:
        pattern = str((entry or {}).get("path", ""))
        for file in tree.files(""):
            if not fnmatch.fnmatchcase(file, pattern):
                continue
            text = tree.read(file).decode("utf-8", "replace")
            over = pyyaml_reader.over_budget(text, file)
            if over is not None:  # a bomb is never expanded
                raise _Unread(f"its git files generator reads {file}: {over.message}")
            for doc in locate.documents(text, file):
                if isinstance(doc.body, dict):
                    content = doc.body if go else _flat(doc.body)
                    out.append(_path_params(posixpath.dirname(file), go, content))
    return out


def _flat(value: dict[str, t.Any], prefix: str = "") -> Params:
    out: Params = {}
    for key, inner in value.items():
        if isinstance(inner, dict):
            out.update(_flat(inner, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = inner
    return out


def _fill(template: t.Any, params: Params, go: bool) -> t.Any:
    if isinstance(template, dict):
        return {k: _fill(v, params, go) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, params, go) for v in template]
    if isinstance(template, str) and "{{" in template:
        return _EXPR.sub(lambda m: str(_value(m.group(1), params, go)), template)
    return template


def _value(expr: str, params: Params, go: bool) -> t.Any:
    words = expr.split()
    if go and len(words) == 3 and words[0] == "index" and words[2].isdigit():
        found = _lookup(words[1], params)
        if isinstance(found, list) and int(words[2]) < len(found):
            return found[int(words[2])]
    elif len(words) == 1:
        if not go and words[0] in params:
            return params[words[0]]
        found = _lookup(words[0], params)
        if found is not None:
            return found
    raise _Unread(f"its template expression {{{{{expr}}}}} is not filled by kueue-gitops")


def _lookup(dotted: str, params: Params) -> t.Any:
    value: t.Any = params
    for part in dotted.lstrip(".").split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value
