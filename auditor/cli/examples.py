"""Examples for every command's --help, and shell completion of cluster names.

They are attached when a command is loaded (main.AuditorGroup.get_command), so each command's
module stays about what it does. tests/acceptance/test_cli_help.py runs every example through
the CLI's parser: an example that no longer parses fails there.
"""

from __future__ import annotations

import typing as t

import click
from click.shell_completion import CompletionItem

EXAMPLES: dict[str, tuple[str, ...]] = {
    "validate": (
        "kueue-gitops validate",
        "kueue-gitops validate --cluster gpu-prod -o sarif > validate.sarif",
        "kueue-gitops validate --server-side --cluster gpu-staging --context gpu-staging",
    ),
    "lsp": (
        "kueue-gitops lsp",
        "kueue-gitops lsp --repo ~/src/kueue-gitops",
    ),
    "schemas fetch": (
        "kueue-gitops schemas fetch --cluster gpu-prod",
        "kueue-gitops schemas fetch --cluster gpu-prod --release v0.17.0",
    ),
    "schemas profiles": ("kueue-gitops schemas profiles",),
    "drift": (
        "kueue-gitops drift",
        "kueue-gitops drift --cluster gpu-prod -o json > drift.json",
        "KUBECONFIG=prod.yaml:staging.yaml kueue-gitops drift --metrics-file drift.prom",
    ),
    "plan diff": (
        "kueue-gitops plan diff --base origin/main",
        "kueue-gitops plan diff --base origin/main --live -o markdown > plan.md",
    ),
    "plan replay": (
        "kueue-gitops plan replay trace.json --base origin/main --cluster gpu-staging",
        "kueue-gitops plan replay trace.json --base origin/main --engine kueue --speed 30",
        "kueue-gitops plan replay trace.json --base origin/main --live --cluster gpu-staging",
    ),
    "plan job": ("kueue-gitops plan job train.yaml --cluster gpu-staging",),
    "plan sweep": ("kueue-gitops plan sweep grid.yaml --trace trace.json --cluster gpu-staging",),
    "trace generate": (
        "kueue-gitops trace generate --cluster gpu-staging --workloads 40 --hours 1 --seed 7 "
        "--out trace.json",
    ),
    "trace record": ("kueue-gitops trace record --cluster gpu-prod --since 24h --out trace.json",),
    "trace import": (
        "kueue-gitops trace import --kueue-harness baseline --out-dir harness",
        "kueue-gitops trace import --kueue-harness large-scale --kueue-version v0.19.2 "
        "--out-dir large",
    ),
    "codeowners": ("kueue-gitops codeowners", "kueue-gitops codeowners --check"),
    "generate policies": ("kueue-gitops generate policies --cluster gpu-prod",),
    "generate argocd": (
        "kueue-gitops generate argocd --repo-url https://github.com/me/kueue-gitops.git",
    ),
    "status": (
        "kueue-gitops status --cluster gpu-prod",
        "kueue-gitops status --cluster gpu-prod -o json",
    ),
    "hold": (
        "kueue-gitops hold team-a-cq --cluster gpu-prod",
        "kueue-gitops hold team-a-cq --apply",
    ),
    "resume": ("kueue-gitops resume team-a-cq --cluster gpu-prod --apply",),
    "export-workloads": ("kueue-gitops export-workloads --cluster gpu-prod --out-dir snapshots/",),
    "verify": ("kueue-gitops verify --cluster gpu-staging",),
    "preemptions": ("kueue-gitops preemptions --cluster gpu-prod",),
    "upgrade-check": ("kueue-gitops upgrade-check --cluster gpu-prod --to v0.18.0",),
    "sandbox build": ("kueue-gitops sandbox build",),
    "sandbox up": ("kueue-gitops sandbox up gpu-prod gpu-staging --with-kueue",),
    "sandbox apply": ("kueue-gitops sandbox apply --cluster gpu-prod",),
    "sandbox env": ('eval "$(kueue-gitops sandbox env)"',),
    "sandbox status": ("kueue-gitops sandbox status",),
    "sandbox down": ("kueue-gitops sandbox down --all",),
    "cache clean": (
        "kueue-gitops cache clean --dry-run",
        "kueue-gitops cache clean --builds",
    ),
    "sandbox kueue-api": ("kueue-gitops sandbox kueue-api --write",),
    "rules": ("kueue-gitops rules", "kueue-gitops rules -o markdown > docs/rules.md"),
    "explain": ("kueue-gitops explain capacity-exceeded",),
    "github clusters": ("kueue-gitops github clusters",),
    "github drift-issue": (
        "kueue-gitops github drift-issue --cluster gpu-prod --report drift.json",
    ),
    "github pr-comment": ("kueue-gitops github pr-comment --pr 42 --body plan.md",),
    "github ensure-pr": (
        "kueue-gitops github ensure-pr --branch schemas/refresh --base main "
        '--title "Refresh schemas"',
    ),
    "tenant add": (
        "kueue-gitops tenant add team-c --cluster gpu-prod --owner @example-org/team-c "
        "--group example-org:team-c --quota a100.nvidia.com/gpu=8 --quota a100.cpu=64",
    ),
    "cluster add": (
        "kueue-gitops cluster add gpu-dev --like gpu-staging --context dev-admin",
        "kueue-gitops cluster add gpu-new --capacity h100.nvidia.com/gpu=16 --capacity h100.cpu=96",
    ),
    "import": (
        "kueue-gitops import --cluster gpu-a --tenants-by label=example.com/team "
        "--owner @acme/platform",
        "kueue-gitops import --cluster gpu-b --context prod-b --tenants-by queue",
        "kueue-gitops import --cluster gpu-a --tenants-by name=ml-(.+) --force",
    ),
    "init": (
        "kueue-gitops init --cluster gpu-a --repo-url https://git.example.com/platform/kueue.git",
        "kueue-gitops init --cluster gpu-a --cluster gpu-b --repo-url "
        "https://github.com/acme/kueue.git --owner @acme/platform --capacity a100.nvidia.com/gpu=8",
    ),
}

CLUSTER_OPTIONS = ("cluster", "clusters", "like")


def command_lines(path: str) -> tuple[str, ...]:
    """The examples of the command at `path` (e.g. "schemas fetch")."""
    return EXAMPLES.get(path, ())


def complete_clusters(
    ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The repository's cluster names (clusters/*/), for --cluster. While completing, no
    command runs: the repository is the one --repo names on the line so far, else the usual."""
    from auditor.repo.layout import Repository

    given = ctx.find_root().params.get("repo_dir")
    try:
        names = sorted(Repository.open(given).clusters)
    except Exception:  # completion must never fail the shell
        return []
    return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def complete_cluster_queues(
    ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The repository's ClusterQueue names (on --cluster, when given), for hold and resume."""
    from auditor.repo.layout import Repository

    try:
        repo = Repository.open(ctx.find_root().params.get("repo_dir"))
        cluster = ctx.params.get("cluster")
        loaded = repo.load([cluster] if cluster else None)
        names = sorted({r.name for r in loaded.resources if r.kind == "ClusterQueue"})
    except Exception:  # completion must never fail the shell
        return []
    return [CompletionItem(n) for n in names if n.startswith(incomplete)]


def complete_rules(
    _ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The catalogue's rule IDs, for explain."""
    from auditor import rules

    return [
        CompletionItem(r.id, help=r.summary)
        for r in rules.catalogue().values()
        if r.id.startswith(incomplete)
    ]


# Arguments completed from the repository or the catalogue, by command and argument name.
ARGUMENTS = {
    ("explain", "rule_id"): complete_rules,
    ("hold", "cluster_queue"): complete_cluster_queues,
    ("resume", "cluster_queue"): complete_cluster_queues,
}


def decorate(command: click.Command, path: str) -> None:
    """Add `path`'s examples to its help, and cluster-name completion to its --cluster."""
    lines = command_lines(path)
    if lines and "Examples:" not in (command.epilog or ""):
        block = "\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines)
        command.epilog = f"{command.epilog}\n\n{block}" if command.epilog else block
    for param in command.params:
        if param.name in CLUSTER_OPTIONS and isinstance(param, click.Option):
            # click keeps the completion callback here; Option takes it only when constructed
            param._custom_shell_complete = complete_clusters
        found = ARGUMENTS.get((path, param.name or ""))
        if found is not None:
            param._custom_shell_complete = found
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            decorate(sub, f"{path} {name}")


def walk(command: click.Command, path: str = "") -> t.Iterator[tuple[str, click.Command]]:
    """Every command below `command` (not groups), with its path."""
    if isinstance(command, click.Group):
        for name in command.list_commands(click.Context(command)):
            sub = command.get_command(click.Context(command), name)
            if sub is not None:
                yield from walk(sub, f"{path} {name}".strip())
    else:
        yield path, command
