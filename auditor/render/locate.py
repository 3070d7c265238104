"""Where a rendered object's fields were written: the file and line a person edits.

kustomize names the file each object came from (`config.kubernetes.io/origin`, asked for with
`buildMetadata: [originAnnotations]`), but not the patch that set a field: its transformer
annotation says only which kustomization configured a patch. So a field whose value is not the
base's is looked for in the patches of the kustomizations the build reached (outermost first,
as the last patch applied wins), by its key and value. Helm names the template of each object
(`# Source:`); a field is traced through the line of the template that writes its key to the
values key paths that line reads (auditor/render/template_reads.py), and each of those to the
first of the values Argo CD passes that sets it (`helm_values`): the Application's parameter
entry, its `valuesObject` key or `values` line, a value file's key, the chart's values.yaml;
a field no value fed stays at its template line. No I/O: texts in, places out.
"""

from __future__ import annotations

import re
import typing as t
from dataclasses import dataclass, field

import yaml

from auditor.k8s.objects import FieldPath
from auditor.render import template_reads
from auditor.render.template_reads import Ref, Wild

Place = tuple[str, int]


@dataclass
class Doc:
    """One YAML document of a source file: its value, and the line of each of its paths."""

    file: str
    body: t.Any
    lines: dict[FieldPath, int] = field(default_factory=dict)
    line: int = 1
    blocks: dict[FieldPath, int] = field(default_factory=dict)  # a literal block's first text line


def documents(text: str, file: str) -> list[Doc]:
    """Every document of `text` with its lines; a file YAML cannot read gives none (the
    renderer itself reports what is wrong with it)."""
    out: list[Doc] = []
    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        values = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return out
    for node, value in zip(nodes, values, strict=False):
        doc = Doc(file, value, line=node.start_mark.line + 1)
        _lines(node, (), doc)
        out.append(doc)
    return out


def _lines(node: yaml.Node, path: FieldPath, doc: Doc) -> None:
    doc.lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            doc.lines[(*path, str(key.value))] = key.start_mark.line + 1
            _lines(value, (*path, str(key.value)), doc)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*path, i), doc)
    elif isinstance(node, yaml.ScalarNode) and node.style == "|":
        doc.blocks[path] = node.start_mark.line + 2  # the line after its `|`


def leaves(value: t.Any, path: FieldPath = ()) -> t.Iterator[tuple[FieldPath, t.Any]]:
    """Every scalar of `value` with its path."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, (*path, str(key)))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from leaves(inner, (*path, i))
    else:
        yield path, value


def _at(value: t.Any, path: FieldPath) -> tuple[bool, t.Any]:
    for part in path:
        in_map = isinstance(part, str) and isinstance(value, dict) and part in value
        if in_map or (isinstance(part, int) and isinstance(value, list) and part < len(value)):
            value = value[part]
        else:
            return False, None
    return True, value


def _key(path: FieldPath) -> str | None:
    """The last mapping key of a path (`nominalQuota` of ...resources[0].nominalQuota)."""
    return next((p for p in reversed(path) if isinstance(p, str)), None)


def _same(a: t.Any, b: t.Any) -> bool:
    return (type(a) is type(b) and a == b) or (str(a) == str(b) and not isinstance(a, bool))


def _kind_name(body: t.Any) -> tuple[str, str]:
    body = body if isinstance(body, dict) else {}
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    return str(body.get("kind", "")), str(meta.get("name", ""))


def base_of(docs: list[Doc], rendered: dict[str, t.Any]) -> Doc | None:
    """The document of an origin file that a rendered object was built from: of its kind,
    with the longest name inside the rendered one (namePrefix and nameSuffix add to it)."""
    kind, name = _kind_name(rendered)
    fits = [d for d in docs if _kind_name(d.body)[0] == kind and _kind_name(d.body)[1] in name]
    return max(fits, key=lambda d: len(_kind_name(d.body)[1]), default=None)


def _patch_ops(doc: Doc) -> t.Iterator[tuple[FieldPath, t.Any, int]]:
    """A patch's values with their lines: a strategic merge patch's scalars, or a JSON 6902
    patch's `value`s (keyed by the last segment of their `path`)."""
    if isinstance(doc.body, list):  # JSON 6902: [{op, path, value}, ...]
        for i, op in enumerate(doc.body):
            if not isinstance(op, dict) or "value" not in op:
                continue
            where = tuple(p for p in str(op.get("path", "")).split("/") if p)
            for inner, value in leaves(op["value"]):
                line = doc.lines.get((i, "value", *inner), doc.lines.get((i,), doc.line))
                yield (*where, *inner), value, line
        return
    for path, value in leaves(doc.body):
        yield path, value, doc.lines.get(path, doc.line)


def trace_kustomize(
    rendered: dict[str, t.Any], base: Doc | None, patches: list[Doc]
) -> dict[FieldPath, Place]:
    """Each field of a kustomize-built object, at its base's line or at the patch that set
    it; `patches` outermost first (their kind and name matched loosely: a patch may target by
    selector)."""
    out: dict[FieldPath, Place] = {}
    kind, name = _kind_name(rendered)
    aimed = [
        p
        for p in patches
        if isinstance(p.body, list)
        or (_kind_name(p.body)[0] == kind and _kind_name(p.body)[1] in name)
    ]
    for path, value in leaves(rendered):
        if path[:1] == ("metadata",) and path[1:2] in (("name",), ("namespace",)):
            if base is not None:
                out[path] = (base.file, base.lines.get(path, base.line))
            continue
        found = _in_patches(path, value, aimed)
        if found is None and base is not None and _at(base.body, path)[0]:
            found = (base.file, base.lines.get(path, base.line))
        if found is not None:
            out[path] = found
    _containers(out, base)
    return out


def _in_patches(path: FieldPath, value: t.Any, patches: list[Doc]) -> Place | None:
    key = _key(path)
    for patch in patches:
        best: tuple[int, Place] | None = None
        for at, was, line in _patch_ops(patch):
            if _key(at) != key or not _same(was, value):
                continue
            shared = sum(1 for a, b in zip(reversed(at), reversed(path), strict=False) if a == b)
            if best is None or shared > best[0]:
                best = (shared, (patch.file, line))
        if best is not None:
            return best[1]
    return None


def _containers(out: dict[FieldPath, Place], base: Doc | None) -> None:
    """A mapping or list of the object: at its base's line when the base has it, else where
    its first traced field was written (a patch added it)."""
    for path, place in list(out.items()):
        for end in range(len(path) - 1, 0, -1):
            prefix = path[:end]
            if prefix in out:
                continue
            if base is not None and prefix in base.lines:
                out[prefix] = (base.file, base.lines[prefix])
            else:
                out[prefix] = place


BLOCK = "|"  # ends a path of Source.lines: the line its literal block's text starts on
Lines = t.Mapping[FieldPath, int]


def helm_values(
    options: dict[str, t.Any], app: str, app_lines: Lines, files: list[tuple[str, str]]
) -> list[Doc]:
    """The values of a Helm source in the order Argo CD lets them win: the Application's
    `parameters` (`--set`, last), its `valuesObject` (else its `values` text), then `files`
    (its value files, last first, and the chart's values.yaml) as (path, text). `app_lines`:
    the lines of the Application's source spec, by path within it (("helm", "parameters", 0))."""
    out = [_parameters(options.get("parameters"), app, app_lines)]
    at = app_lines.get(("helm",), 1)
    if isinstance(options.get("valuesObject"), dict):
        inner = {p[2:]: n for p, n in app_lines.items() if p[:2] == ("helm", "valuesObject")}
        out.append(Doc(app, options["valuesObject"], inner, inner.get((), at)))
    elif isinstance(options.get("values"), str):
        start = app_lines.get(("helm", "values", BLOCK))
        key = app_lines.get(("helm", "values"), at)
        for doc in documents(options["values"], app):
            doc.lines = {p: key if start is None else start + n - 1 for p, n in doc.lines.items()}
            doc.line = key if start is None else start + doc.line - 1
            out.append(doc)
    for file, text in files:
        out += documents(text, file)
    return out


def _parameters(entries: t.Any, app: str, app_lines: Lines) -> Doc:
    """The `--set` parameters as values, each key path at its entry's line (a later entry of
    one path wins, as Helm applies them in order)."""
    doc = Doc(app, {}, line=app_lines.get(("helm", "parameters"), 1))
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        line = app_lines.get(("helm", "parameters", i, "value"),
                             app_lines.get(("helm", "parameters", i), doc.line))  # fmt: skip
        path = set_path(entry["name"])
        if path:
            doc.body = _put(doc.body, path, str(entry.get("value", "")))
            for end in range(1, len(path) + 1):
                doc.lines[path[:end]] = line
    return doc


def set_path(name: str) -> FieldPath:
    """A `--set` name's key path: `a.b[0].c` is ("a", "b", 0, "c"); `\\.` is a dot in a key."""
    out: list[str | int] = []
    for part in re.split(r"(?<!\\)\.", name):
        key, *indexes = re.split(r"\[(\d+)\]", part.replace("\\.", "."))
        out += [key, *(int(i) for i in indexes if i)] if key else [int(i) for i in indexes if i]
    return tuple(out)


def _put(node: t.Any, path: FieldPath, value: t.Any) -> t.Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(node) if isinstance(node, list) else []
        items += [None] * (head + 1 - len(items))
        items[head] = _put(items[head], rest, value)
        return items
    mapping = dict(node) if isinstance(node, dict) else {}
    mapping[head] = _put(mapping.get(head), rest, value)
    return mapping


def _merged(layers: list[Doc]) -> t.Any:
    """The values the chart sees: maps merged, anything else (a list too, as Helm coalesces
    them) taken from the winning layer."""

    def merge(low: t.Any, high: t.Any) -> t.Any:
        if isinstance(low, dict) and isinstance(high, dict):
            return {**low, **{k: merge(low.get(k), v) for k, v in high.items()}}
        return high

    out: t.Any = {}
    for layer in reversed(layers):
        out = merge(out, layer.body)
    return out


def segment(lines: list[str], kind: str, name: str = "") -> tuple[int, int]:
    """The lines (from, to; from 0) of the template's document writing the object of `kind`
    named `name` (a template may hold several, `---` apart: the one naming it literally, else
    the first of its kind); the whole template when none says so."""
    found: list[tuple[int, int]] = []
    start = 0
    for i, line in enumerate([*lines, "---"]):
        if re.fullmatch(r"---\s*", line):
            if any(re.fullmatch(rf"kind:\s*{re.escape(kind)}\s*", ln) for ln in lines[start:i]):
                found.append((start, i))
            start = i + 1
    named = rf"\s*name:\s*['\"]?{re.escape(name)}['\"]?\s*"
    exact = [s for s in found if any(re.fullmatch(named, ln) for ln in lines[s[0] : s[1]])]
    return (exact or found or [(0, len(lines))])[0]


def kind_line(text: str, kind: str, name: str = "") -> int:
    """The line of a template that writes `kind: <kind>` for the object named `name`."""
    lines = text.splitlines()
    start, end = segment(lines, kind, name)
    pattern = rf"kind:\s*{re.escape(kind)}\s*"
    return next((i + 1 for i in range(start, end) if re.fullmatch(pattern, lines[i])), 1)


@dataclass
class _Field:
    path: FieldPath
    value: t.Any
    line: int  # of the template, from 1
    refs: list[Ref]


def trace_helm(
    rendered: dict[str, t.Any], template: str, template_text: str, values: list[Doc]
) -> dict[FieldPath, Place]:
    """Each field of a Helm-rendered object: at the values key that fed it, by the key path
    its template line reads (`values` in the order they win: `helm_values`), else at the
    template line writing it. A list's entry is at the highest-winning values key that set one
    of its own scalars (the override that chose a subject), anything else that holds fields at
    its template line."""
    lines = template_text.splitlines()
    start, end = segment(lines, *_kind_name(rendered))
    reads = template_reads.reads(template_text)
    fields = []
    for path, value in leaves(rendered):
        line = _template_line(lines[start:end], path) + start
        fields.append(_Field(path, value, line, _reads_at(reads, lines, line)))
    merged = _merged(values)
    bound = _bind(fields, merged)
    out: dict[FieldPath, Place] = {}
    rank: dict[FieldPath, int] = {}
    for f in fields:
        found = _fed(f, bound, merged, values)
        out[f.path] = found[1] if found else (template, f.line)
        rank[f.path] = found[0] if found else len(values)
    for f in fields:
        for cut in range(len(f.path) - 1, 0, -1):
            prefix = f.path[:cut]
            entry = cut == len(f.path) - 1 and isinstance(prefix[-1], int)
            if entry and rank[f.path] < rank.get(prefix, len(values)):
                out[prefix], rank[prefix] = out[f.path], rank[f.path]
            elif prefix not in out:
                out[prefix] = (template, _template_line(lines[start:end], prefix) + start)
    return out


def _reads_at(reads: dict[int, list[Ref]], lines: list[str], line: int) -> list[Ref]:
    """What the template line `line` reads, and the action-only lines below it (a `toYaml`
    or `include` written under its key)."""
    out = list(reads.get(line, []))
    for below in range(line + 1, len(lines) + 1):
        text = lines[below - 1].strip()
        if not text.startswith("{{") or re.match(r"\{\{-?\s*(end|else|range|if|with)\b", text):
            break
        out += reads.get(below, [])
    return out


def _bind(fields: list[_Field], merged: t.Any) -> dict[Wild, str | int]:
    """For each `range` the object was written in, the item it was written for: the key whose
    values agree with most of the object's fields (outer ranges first)."""
    bound: dict[Wild, str | int] = {}
    wilds = {p for f in fields for r in f.refs for p in r.path if isinstance(p, Wild)}
    for wild in sorted(wilds, key=lambda w: w.line):
        ref = next(r for f in fields for r in f.refs if wild in r.path)
        prefix = _concrete(ref.path[: ref.path.index(wild)], bound)
        found, items = _at(merged, prefix) if prefix is not None else (False, None)
        keys = list(items) if isinstance(items, dict) else range(len(items or ()))
        best: tuple[int, str | int | None] = (0, None)
        for key in keys if found and isinstance(items, dict | list) else ():
            score = sum(_agrees(f, r, {**bound, wild: key}, merged)
                        for f in fields for r in f.refs if wild in r.path)  # fmt: skip
            if score > best[0]:
                best = (score, key)
        if best[1] is not None:
            bound[wild] = best[1]
    return bound


def _concrete(path: tuple[t.Any, ...], bound: dict[Wild, str | int]) -> FieldPath | None:
    if any(isinstance(p, Wild) and p not in bound for p in path):
        return None
    return tuple(bound[p] if isinstance(p, Wild) else p for p in path)


def _agrees(f: _Field, ref: Ref, bound: dict[Wild, str | int], merged: t.Any) -> int:
    """2 when `ref`, read with `bound`, is the field's value; 1 when a key read is in it."""
    path = _concrete(ref.path, bound)
    if path is None:
        return 0
    if ref.key:
        return 2 if _same(path[-1], f.value) else int(str(path[-1]) in str(f.value))
    found, value = _at(merged, path)
    return 2 if found and _same(value, f.value) else 0


def _fed(
    f: _Field, bound: dict[Wild, str | int], merged: t.Any, values: list[Doc]
) -> tuple[int, Place] | None:
    """The values key that fed a field, with its layer's rank: a read of the field's value
    first, then a read of a mapping holding it (`toYaml`), then one it was made from."""
    strong, weak = None, None
    for ref in f.refs:
        path = _concrete(ref.path, bound)
        if path is None:
            continue
        found, value = _at(merged, path)
        if ref.key or (found and _same(value, f.value)):
            strong = strong or path
        elif found and isinstance(value, dict | list):
            strong = strong or _inside(path, f, merged)
        elif found:
            weak = weak or path
    chosen = strong or weak
    return _setter(chosen, values) if chosen is not None else None


def _inside(path: FieldPath, f: _Field, merged: t.Any) -> FieldPath | None:
    """The key under a mapping a template wrote whole that holds the field: the longest end
    of the field's path found there with its value."""
    for cut in range(len(f.path)):
        found, value = _at(merged, (*path, *f.path[cut:]))
        if found and _same(value, f.value):
            return (*path, *f.path[cut:])
    return None


def _setter(path: FieldPath, values: list[Doc]) -> tuple[int, Place] | None:
    """The first layer of values (the winning one) that holds `path`, and its line there."""
    for rank, doc in enumerate(values):
        if _at(doc.body, path)[0]:
            return rank, (doc.file, doc.lines.get(path, doc.line))
    return None


def _template_line(lines: list[str], path: FieldPath) -> int:
    """The line of a template that writes `path`: its keys found one after the other."""
    at = 0
    for part in (p for p in path if isinstance(p, str)):
        for i in range(at, len(lines)):
            stripped = lines[i].lstrip(" -")
            if stripped.startswith((f"{part}:", f'"{part}":')):
                at = i
                break
    return at + 1
