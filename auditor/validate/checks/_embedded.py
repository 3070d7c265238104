"""Kueue's Configuration as the ConfigMap holds it: its text parsed, and the file line of each
of its fields, for the checks that judge it (kueue-config, fair-sharing, alert-coverage)."""

from __future__ import annotations

import typing as t

import yaml

from auditor import rules
from auditor.k8s.objects import FieldPath
from auditor.kueue import config as kueue_config
from auditor.model import Finding, Resource
from auditor.repo import pyyaml_reader

if t.TYPE_CHECKING:
    from auditor.validate.checks import CheckContext

DATA = ("data", kueue_config.KEY)


class Embedded:
    """The Configuration text in the ConfigMap, and where each of its fields is in the file."""

    def __init__(self, ctx: CheckContext, resource: Resource, rule: rules.Rule) -> None:
        self.resource, self.rule = resource, rule  # `rule`: its findings' unless told another
        self.text = (resource.body.get("data") or {}).get(kueue_config.KEY)
        self.lines: dict[FieldPath, int] = {}
        self.offset: int | None = None  # file line = offset + line inside the text
        self.problem = Finding.about(
            resource,
            rule,
            f"the ConfigMap has no text under {kueue_config.KEY}: Kueue would not start",
            path=("data",),
        )
        if isinstance(self.text, str):
            self.offset = _block_offset(ctx, resource, self.text)

    def parse(self) -> dict[str, t.Any] | None:
        if not isinstance(self.text, str):
            return None
        try:
            node = yaml.compose(self.text, Loader=yaml.SafeLoader)
            doc = pyyaml_reader.load_one(self.text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            self.problem = self.finding(
                f"the Configuration is not valid YAML ({exc}): Kueue would not start",
                line=mark.line + 1 if mark else None,
            )
            return None
        if not isinstance(doc, dict) or node is None:
            self.problem = self.finding("the Configuration is not a mapping: Kueue would not start")
            return None
        _record(node, (), self.lines)
        return doc

    def finding(
        self,
        message: str,
        path: FieldPath = (),
        *,
        rule: rules.Rule | None = None,
        line: int | None = None,
    ) -> Finding:
        finding = Finding.about(self.resource, rule or self.rule, message, path=DATA)
        inner = line or next(
            (self.lines[path[:n]] for n in range(len(path), 0, -1) if path[:n] in self.lines), None
        )
        if self.offset is not None and inner is not None:
            finding.line = self.offset + inner
        if path:
            finding.path = f"{kueue_config.KEY}: " + ".".join(str(p) for p in path)
        return finding


def _block_offset(ctx: CheckContext, resource: Resource, text: str) -> int | None:
    """The file line just before the text's first line, when it is written as a block
    (`key: |`): then line N of the text is that line + N. None for a quoted string."""
    key_line = resource.line_of(DATA)
    try:
        lines = ctx.repo.tree.read(resource.file).decode("utf-8").splitlines()
    except (OSError, KeyError, UnicodeDecodeError):
        return None
    first = text.splitlines()[0].strip() if text.strip() else ""
    following = lines[key_line] if key_line < len(lines) else ""
    return key_line if first and following.strip() == first else None


def _record(node: yaml.Node, path: FieldPath, lines: dict[FieldPath, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            inner = (*path, str(key.value))
            lines[inner] = key.start_mark.line + 1
            _record(value, inner, lines)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _record(item, (*path, i), lines)
