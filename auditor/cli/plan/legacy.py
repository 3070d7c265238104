"""The old spellings of `plan`, one command whose options picked a mode (`plan --base A`,
`--replay T`, `--job F`, `--sweep G`), kept for one release: each line is read with the old
options, run as the verb it meant, and named on stderr in its new spelling (stdout, the
report, is untouched). What the verb does not take is passed on for it to refuse."""

from __future__ import annotations

import re
import shlex
import typing as t

import click

# the old options that took a value (but the three that picked a mode), in the new line's order
_VALUED = (
    "base",
    "head",
    "cluster",
    "engine",
    "speed",
    "repeat",
    "timeline",
    "on",
    "run-for",
    "renderers",
)
_ACCESS = ("kubeconfig", "context", "timeout", "repo")
_MODES = ("job", "sweep", "replay")  # the first given picked the mode, as the old code did


def _old_command() -> click.Command:
    names = (*_VALUED, *_ACCESS, *_MODES)
    params: list[click.Parameter] = [click.Option([f"--{n}"], multiple=True) for n in names]
    params += [
        click.Option(["-o", "--output"], multiple=True),
        click.Option(["--live"], is_flag=True),
        click.Option(["--offline"], is_flag=True),
        click.Option(["-v", "--verbose"], count=True),
        click.Option(["-q", "--quiet"], is_flag=True),
        click.Option(["-h", "--help", "help_"], is_flag=True),
    ]
    return click.Command("plan", params=params, context_settings={"help_option_names": []})


_OLD = _old_command()
_GROUP_FLAG = re.compile(r"-[vq]+|--verbose|--quiet")


def _leading_group_options(args: list[str]) -> int:
    """How many of `args` are the group's own options (--repo DIR, -v, -q) before the rest."""
    at = 0
    while at < len(args):
        if args[at] == "--repo":
            at += 2
        elif args[at].startswith("--repo=") or _GROUP_FLAG.fullmatch(args[at]):
            at += 1
        else:
            break
    return min(at, len(args))


def translate(args: list[str]) -> tuple[list[str], str] | None:
    """`args` (after `plan`) in the new spelling, and the hint naming it; None when they are
    the new spelling already, or not an old one (the group then says what is wrong)."""
    start = _leading_group_options(args)
    old = args[start:]
    if not old or not old[0].startswith("-") or old[0] in ("-h", "--help"):
        return None
    try:
        params = dict(_OLD.make_context("plan", list(old)).params)
    except click.ClickException:
        return None
    new = _new_line(params)
    hint = (
        f"hint: `plan {shlex.join(old)}` is now `plan {shlex.join(new)}`; "
        "the old spelling goes in the next release"
    )
    return [*args[:start], *new], hint


def _new_line(params: dict[str, t.Any]) -> list[str]:
    """The verb the old options meant (the first of --job, --sweep, --replay given, as the old
    command chose), its argument, and the rest of the line as the verb spells it."""
    job, sweep, replay = params.pop("job"), params.pop("sweep"), params.pop("replay")
    if job:  # a Job is forecast on the live cluster: the old line had to say --live
        line = ["job", job[-1], *_pairs("--job", job[:-1])]
        line += _pairs("--sweep", sweep) + _pairs("--replay", replay)
        params["live"] = False
    elif sweep:
        line = ["sweep", sweep[-1], *_pairs("--sweep", sweep[:-1]), *_pairs("--trace", replay)]
    elif replay:
        line = ["replay", replay[-1], *_pairs("--replay", replay[:-1])]
    else:
        line = ["diff"]
    for name in (*_VALUED, *_ACCESS):
        line += _pairs(f"--{name}", params[name.replace("-", "_")])
    line += ["--live"] * params["live"] + ["--offline"] * params["offline"]
    line += _pairs("-o", params["output"]) + ["-v"] * params["verbose"] + ["-q"] * params["quiet"]
    return line + ["--help"] * params["help_"]


def _pairs(option: str, values: tuple[str, ...]) -> list[str]:
    return [word for value in values for word in (option, value)]


class PlanGroup(click.Group):
    """The verbs in the order a reviewer meets them; an old spelling run as its verb."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        translated = translate(args)
        if translated is not None:
            args, hint = translated
            if not ctx.resilient_parsing:  # not while a shell completes the line
                click.echo(hint, err=True)
        return super().parse_args(ctx, args)
