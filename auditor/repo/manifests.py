"""Turn YAML text into Resources that remember the file and line of every field.

Bad input never stops a run: each problem becomes a Finding with the file and line, and the
loader goes on with the next document or file.
"""

from __future__ import annotations

import typing as t

import yaml

from auditor.model import Finding, Resource

try:  # libyaml parses several times faster; fall back to pure Python where it is missing
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

STR_TAG = "tag:yaml.org,2002:str"
MAX_NODES = 200_000  # per document: far beyond any real manifest, far below an alias bomb
Path_ = tuple[str | int, ...]


class _Problem(Exception):
    def __init__(self, rule: str, message: str, line: int) -> None:
        super().__init__(message)
        self.rule, self.message, self.line = rule, message, line


class _Builder:
    """Build plain Python values from a composed node tree, recording each path's line."""

    def __init__(self, loader: _BaseLoader) -> None:
        self.loader = loader
        self.lines: dict[Path_, int] = {}
        self.visited = 0

    def build(self, node: yaml.Node, path: Path_ = ()) -> t.Any:
        self.visited += 1
        if self.visited > MAX_NODES:
            raise _Problem(
                "yaml-too-large",
                f"document expands to more than {MAX_NODES} nodes (an alias bomb?)",
                node.start_mark.line + 1,
            )
        self.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            out: dict[t.Any, t.Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise _Problem(
                        "yaml-merge-key",
                        "YAML merge keys (<<) are not allowed in "
                        "manifests: Kubernetes tools disagree on them",
                        key_node.start_mark.line + 1,
                    )
                key = self.scalar(key_node)
                if not isinstance(key, str | int | float | bool) and key is not None:
                    raise _Problem(
                        "yaml-bad-key", "mapping keys must be scalars", key_node.start_mark.line + 1
                    )
                if key in out:
                    raise _Problem(
                        "yaml-duplicate-key",
                        f"duplicate key {key!r} (first at line "
                        f"{self.lines.get((*path, str(key)), '?')}); Kubernetes "
                        "would silently keep only one of them",
                        key_node.start_mark.line + 1,
                    )
                self.lines[(*path, str(key))] = key_node.start_mark.line + 1
                out[key] = self.build(value_node, (*path, str(key)))
            return out
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.scalar(node)

    def scalar(self, node: yaml.Node) -> t.Any:
        # Most scalars in manifests are plain strings: take them as they are, and leave the
        # constructor (with its per-object bookkeeping) to ints, bools, nulls and the rest.
        if node.tag == STR_TAG and isinstance(node, yaml.ScalarNode):
            return node.value
        return self.loader.construct_object(node)


def load_text(text: str, file: str) -> tuple[list[Resource], list[Finding]]:
    """Every mapping document in `text` as a Resource; everything wrong as a Finding."""
    resources: list[Resource] = []
    findings: list[Finding] = []
    loader = _BaseLoader(text)
    try:
        while True:
            try:
                node = _next_document(loader)
            except yaml.YAMLError as exc:
                findings.append(_yaml_error(exc, file))
                break
            if node is None:
                break
            builder = _Builder(loader)
            try:
                body = builder.build(node)
            except _Problem as p:
                findings.append(_finding(file, p.line, p.rule, p.message))
                continue
            except yaml.YAMLError as exc:
                findings.append(_yaml_error(exc, file))
                continue
            line = node.start_mark.line + 1
            if body is None:
                continue  # an empty document, e.g. a trailing `---`
            if not isinstance(body, dict):
                findings.append(
                    _finding(
                        file,
                        line,
                        "not-a-mapping",
                        f"a document must be a mapping (an object), not a {type(body).__name__}",
                    )
                )
                continue
            resource = Resource(body, file, line, builder.lines)
            missing = [
                k
                for k in ("apiVersion", "kind")
                if not isinstance(body.get(k), str) or not body.get(k)
            ]
            if not missing and not resource.name:
                missing.append("metadata.name")
            if missing:
                findings.append(
                    _finding(
                        file, line, "missing-identity", f"the object has no {', '.join(missing)}"
                    )
                )
                continue
            resources.append(resource)
    finally:
        loader.dispose()
    return resources, findings


def _next_document(loader: _BaseLoader) -> yaml.Node | None:
    # compose_node with anchors reset per document, as yaml.compose_all does
    if loader.check_node():
        return t.cast(yaml.Node, loader.get_node())
    return None


def load_bytes(data: bytes, file: str) -> tuple[list[Resource], list[Finding]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [], [
            _finding(
                file,
                line,
                "not-utf8",
                f"the file is not UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start}); save it as UTF-8",
            )
        ]
    if text.startswith("\ufeff"):
        text = text[1:]
    return load_text(text, file)


def _yaml_error(exc: yaml.YAMLError, file: str) -> Finding:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else 1
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    text = f"{context}, {problem}" if context else str(problem)
    return _finding(file, line, "yaml-syntax", f"malformed YAML: {text}")


def _finding(file: str, line: int, rule: str, message: str) -> Finding:
    return Finding(rule=rule, message=message, category="input", file=file, line=line)
