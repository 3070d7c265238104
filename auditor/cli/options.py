"""Options shared by the commands, and the context object that carries them."""

from __future__ import annotations

import typing as t
from dataclasses import dataclass
from pathlib import Path

import click

from auditor.repo.layout import Repository


@dataclass
class Context:
    repo_dir: Path | None

    def repository(self) -> Repository:
        return Repository.open(self.repo_dir)


pass_context = click.make_pass_decorator(Context)

F = t.TypeVar("F", bound=t.Callable[..., t.Any])


def cluster_access(func: F) -> F:
    """--kubeconfig and --context, as kubectl has them."""
    func = click.option(
        "--context",
        "context",
        metavar="NAME",
        help="Kubeconfig context to use instead of the cluster profile's.",
    )(func)
    func = click.option(
        "--kubeconfig",
        type=click.Path(dir_okay=False),
        metavar="FILE",
        help="Kubeconfig file; alone, its current context is used.",
    )(func)
    return func


def output_format(func: F) -> F:
    return click.option(
        "-o",
        "--output",
        "output",
        default="text",
        show_default=True,
        type=click.Choice(["text", "json", "markdown"]),
        help="Report format.",
    )(func)
