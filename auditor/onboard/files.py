"""What onboarding writes and how: a `Plan` of files written all at once or not at all
(staging.py), in the repository's YAML style, with the names every onboarding command shares."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from auditor.onboard import staging
from auditor.repo.layout import Repository
from auditor.repo.profiles import EXPORTED
from auditor.repo.tree import Overlay

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
PRUNE_GUARD = "Prune=false,Delete=false"
PROJECTS = "argocd/projects.yaml"


def modeline(kind: str) -> str:
    """The first line of a profile: editors with the YAML language server complete from it."""
    return f"# yaml-language-server: $schema=../../{EXPORTED}/{kind}.json\n"


class _Dumper(yaml.SafeDumper):
    """The repository's style: lists indented under their key, short lists of scalars inline."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def _list(dumper: yaml.SafeDumper, items: list[object]) -> yaml.SequenceNode:
    inline = all(isinstance(i, str) for i in items)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", items, flow_style=inline)


_Dumper.add_representer(list, _list)


def yaml_text(comment: str, doc: dict[str, object]) -> str:
    return f"# {comment}\n" + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=100)


@dataclass
class Plan:
    """Files to create (path -> text), YAML documents to append (to a file made if need be), and
    files whose whole new text is given (regenerated or edited). `write` is the one way
    onboarding writes: everything at once or nothing (staging.py)."""

    create: dict[str, str]
    append: dict[str, str]
    replace: dict[str, str] = field(default_factory=dict)

    def contents(self, root: Path) -> dict[str, str]:
        """Every file the plan writes, with its whole new text."""
        out = dict(self.create)
        for path, text in self.append.items():
            target = root / path
            current = out.get(path) or (target.read_text() if target.is_file() else "")
            sep = "\n" if current and not current.endswith("\n") else ""
            out[path] = f"{current}{sep}---\n{text}" if current else text
        return out | self.replace

    def pending(self, root: Path) -> Repository:
        """The repository as it will be once the plan is written (nothing written yet)."""
        tree = _Pending(root)
        tree.buffers = {p: text.encode() for p, text in self.contents(root).items()}
        return Repository(tree, str(root))

    def write(self, root: Path) -> list[str]:
        return staging.write_all(root, self.contents(root), self.create)


class _Pending(Overlay):
    """The working tree with a plan's files in place, new folders included."""

    def subfolders(self, folder: str) -> list[str]:
        inside = "" if folder in ("", ".") else folder.rstrip("/") + "/"
        new = {p[len(inside) :].split("/")[0] for p in self.buffers if p.startswith(inside)}
        new = {n for n in new if f"{inside}{n}" not in self.buffers and not n.startswith(".")}
        return sorted(set(super().subfolders(folder)) | new)

    def is_dir(self, folder: str) -> bool:
        inside = folder.rstrip("/") + "/"
        return super().is_dir(folder) or any(p.startswith(inside) for p in self.buffers)
