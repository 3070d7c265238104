"""Where a rendered object's fields were written: the file and line a person edits.

kustomize names the file each object came from (`config.kubernetes.io/origin`, asked for with
`buildMetadata: [originAnnotations]`), but not the patch that set a field: its transformer
annotation says only which kustomization configured a patch. So a field whose value is not the
base's is looked for in the patches of the kustomizations the build reached (outermost first,
as the last patch applied wins), by its key and value. Helm names the template of each object
(`# Source:`); a field is traced to the values (the Application's own, then its value files,
last first, then the chart's values.yaml) that hold a key of its name with its value, and
otherwise to the line of the template that writes its key. No I/O: texts in, places out.
"""

from __future__ import annotations

import typing as t
from dataclasses import dataclass, field

import yaml

Path_ = tuple[str | int, ...]
Place = tuple[str, int]


@dataclass
class Doc:
    """One YAML document of a source file: its value, and the line of each of its paths."""

    file: str
    body: t.Any
    lines: dict[Path_, int] = field(default_factory=dict)
    line: int = 1


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
        _lines(node, (), doc.lines)
        out.append(doc)
    return out


def _lines(node: yaml.Node, path: Path_, out: dict[Path_, int]) -> None:
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[(*path, str(key.value))] = key.start_mark.line + 1
            _lines(value, (*path, str(key.value)), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*path, i), out)


def leaves(value: t.Any, path: Path_ = ()) -> t.Iterator[tuple[Path_, t.Any]]:
    """Every scalar of `value` with its path."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, (*path, str(key)))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from leaves(inner, (*path, i))
    else:
        yield path, value


def _at(value: t.Any, path: Path_) -> tuple[bool, t.Any]:
    for part in path:
        in_map = isinstance(part, str) and isinstance(value, dict) and part in value
        if in_map or (isinstance(part, int) and isinstance(value, list) and part < len(value)):
            value = value[part]
        else:
            return False, None
    return True, value


def _key(path: Path_) -> str | None:
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


def _patch_ops(doc: Doc) -> t.Iterator[tuple[Path_, t.Any, int]]:
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
) -> dict[Path_, Place]:
    """Each field of a kustomize-built object, at its base's line or at the patch that set
    it; `patches` outermost first (their kind and name matched loosely: a patch may target by
    selector)."""
    out: dict[Path_, Place] = {}
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


def _in_patches(path: Path_, value: t.Any, patches: list[Doc]) -> Place | None:
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


def _containers(out: dict[Path_, Place], base: Doc | None) -> None:
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


def trace_helm(
    rendered: dict[str, t.Any], template: str, template_text: str, values: list[Doc]
) -> dict[Path_, Place]:
    """Each field of a Helm-rendered object: at the values key of its name that holds its
    value (`values` in the order Helm lets them win), else at the template line writing it."""
    out: dict[Path_, Place] = {}
    lines = template_text.splitlines()
    for path, value in leaves(rendered):
        found = _in_values(path, value, values)
        out[path] = found or (template, _template_line(lines, path))
    for path in list(out):
        for end in range(len(path) - 1, 0, -1):
            out.setdefault(path[:end], (template, _template_line(lines, path[:end])))
    return out


def _in_values(path: Path_, value: t.Any, values: list[Doc]) -> Place | None:
    """The values key holding `value`: one of the field's own name first, else (for a string
    long enough to be telling) any key; the first values file that wins."""
    if value is None or isinstance(value, bool):
        return None
    key = _key(path)
    telling = isinstance(value, str) and len(value) >= 3
    for doc in values:
        loose: Place | None = None
        for at, was in leaves(doc.body):
            if not _same(was, value):
                continue
            if _key(at) == key:
                return doc.file, doc.lines.get(at, doc.line)
            if telling and loose is None:
                loose = (doc.file, doc.lines.get(at, doc.line))
        if loose is not None:
            return loose
    return None


def _template_line(lines: list[str], path: Path_) -> int:
    """The line of a template that writes `path`: its keys found one after the other."""
    at = 0
    for part in (p for p in path if isinstance(p, str)):
        for i in range(at, len(lines)):
            stripped = lines[i].lstrip(" -")
            if stripped.startswith((f"{part}:", f'"{part}":')):
                at = i
                break
    return at + 1
