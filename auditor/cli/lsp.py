"""`kueue-gitops lsp`: the language server, for editors (auditor/lsp/server.py)."""

from __future__ import annotations

from pathlib import Path

import click

from auditor.cli.options import Context, pass_context, renderers_mode
from auditor.errors import ConfigError

EXTRA = "pip install 'kueue-gitops[lsp]'"


@click.command()
@click.option(
    "--schemas",
    "schemas_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="The schemas folder (default: schemas/ of the repository).",
)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="The baseline validate --baseline is given (a relative FILE is from the repository's "
    "root): the findings it holds are shown as hints.",
)
@renderers_mode
@pass_context
def lsp(ctx: Context, schemas_dir: Path | None, baseline_file: Path | None) -> None:
    """A Language Server on stdin and stdout: validate's findings as you type.

    Editors start it on the repository (VS Code's YAML extension, Neovim, Helix: see
    docs/editor.md). It loads the repository once (--repo, else the editor's workspace, else
    the current folder) and, on each edit, computes again what depends on the edited file;
    each finding is a diagnostic on its field's line, with its rule as the code, and hover
    shows the rule's documentation. It runs on pygls: install kueue-gitops[lsp].
    """
    try:
        from auditor.lsp import server
    except ImportError as exc:  # the base install has no pygls
        raise ConfigError(
            f"`kueue-gitops lsp` needs the [lsp] extra ({exc.name} is missing): {EXTRA}"
        ) from None
    server.serve(ctx.repo_dir, schemas_dir, baseline_file)
