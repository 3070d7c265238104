"""Render a folder: the tool Argo CD would use (Helm for a chart, else kustomize), refused when
the source leads out of the repository."""

from __future__ import annotations

import posixpath
import typing as t

from auditor.render.source import (
    CHART,
    KUSTOMIZATIONS,
    OUTSIDE,
    Rendered,
    Source,
    marker,
    problem,
    tool_of,
)


def build(tree: t.Any, source: Source) -> Rendered:
    """A kustomize or Helm source's objects, each at the place a person edits, and what
    stopped the render (a finding at its file)."""
    from auditor.render import helm, kustomize  # loaded only when a folder renders

    path = posixpath.normpath(source.path)
    if path == ".." or path.startswith(("../", "/")):  # the copy a render runs in holds only
        return Rendered(  # the repository's files: a folder out of it is never rendered
            findings=[
                problem(
                    OUTSIDE,
                    f"{source.path} leads outside the repository; a render reads the "
                    "repository's files only, so it is not rendered",
                    source,
                    source.app or source.path,
                )
            ]
        )
    found = marker(tree.files(source.path, ("",)), source.path)
    if tool_of(source, found) == "helm":
        return helm.render(tree, source, found or f"{source.path}/{CHART}")
    return kustomize.render(tree, source, found or f"{source.path}/{KUSTOMIZATIONS[0]}")
