"""The docs name real things: every cited path exists, every module imports, every command parses.

A reorganisation moves files and renames commands; these tests make the prose follow.
"""

from __future__ import annotations

import importlib
import re
import shlex
import tomllib
import typing as t
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from auditor.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = (
    "README.md",
    "CONTRIBUTING.md",
    "docs/ARCHITECTURE.md",
    "docs/design.md",
    "docs/contracts.md",
    "docs/releases.md",
    "docs/usage.md",
    "docs/argocd.md",
    "docs/boundaries.md",
    "docs/replay.md",
    "docs/editor.md",
    "bench/README.md",
    "bench/HISTORY.md",
)
TOP_LEVEL = {p.name for p in ROOT.iterdir() if p.name not in (".git", ".venv")}

FENCE = re.compile(r"^ *```[^\n]*\n(.*?)^ *```", re.M | re.S)
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATHLIKE = re.compile(r"[\w.\-/<>*]+")
MODULE = re.compile(r"auditor(?:\.\w+)+")
COMMAND = re.compile(r"(?<![\w./-])kueue-gitops((?:[ \t]+[^\s`]+)*)")
SHELL_END = {"|", "||", "&&", ";", ">", ">>", "2>&1"}


def text_of(doc: str) -> str:
    return (ROOT / doc).read_text(encoding="utf-8")


def inline_code(text: str) -> list[str]:
    return INLINE.findall(FENCE.sub("", text))


def cited_paths(doc: str) -> set[Path]:
    """Backticked repository paths and relative links, as patterns: `<placeholder>` is `*`."""
    text = text_of(doc)
    spans = [s for s in inline_code(text) if PATHLIKE.fullmatch(s) and s.split("/")[0] in TOP_LEVEL]
    links = [(ROOT / doc).parent / link for link in LINK.findall(text) if "://" not in link]
    return {Path(re.sub(r"<[^>]*>", "*", str(p))) for p in [*map(ROOT.joinpath, spans), *links]}


def command_lines(text: str) -> list[str]:
    """Every `kueue-gitops ...` the docs show, in code blocks and inline code."""
    lines: list[str] = []
    for block in FENCE.findall(text):
        for line in block.splitlines():
            line = line.split(" #")[0].split("\t#")[0]
            lines += ["kueue-gitops" + m for m in COMMAND.findall(line)]
    for span in inline_code(text):
        lines += ["kueue-gitops" + m for m in COMMAND.findall(span)]
    return lines


@pytest.mark.parametrize("doc", DOCS)
def test_no_inline_code_is_broken_across_lines(doc: str) -> None:
    """A wrapped `code span` would hide its path or command line from the tests below."""
    spans = FENCE.sub("", text_of(doc)).split("`")[1::2]
    assert [s for s in spans if "\n" in s] == []


@pytest.mark.parametrize("doc", DOCS)
def test_every_cited_path_exists(doc: str) -> None:
    missing = []
    for cited in sorted(cited_paths(doc)):
        pattern = str(cited.resolve().relative_to(ROOT))
        if not any(ROOT.glob(pattern)):
            missing.append(pattern)
    assert missing == [], f"{doc} cites paths that do not exist"


@pytest.mark.parametrize("doc", DOCS)
def test_every_cited_module_imports(doc: str) -> None:
    missing = []
    for span in inline_code(text_of(doc)):
        for dotted in MODULE.findall(span):
            if not _resolves(dotted):
                missing.append(dotted)
    assert missing == [], f"{doc} names modules or attributes that do not exist"


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        try:
            obj: t.Any = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for attr in parts[end:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


@pytest.mark.parametrize("doc", DOCS)
def test_every_command_line_shown_parses(doc: str) -> None:
    problems = []
    for line in command_lines(text_of(doc)):
        problem = _check_line(line)
        if problem:
            problems.append(f"{line}: {problem}")
    assert problems == [], f"{doc} shows command lines the CLI rejects"


def test_the_docs_show_every_command() -> None:
    """The user guide covers each top-level command."""
    shown = {line.split()[1] for line in command_lines(text_of("README.md")) if " " in line}
    ctx = click.Context(cli)
    assert set(cli.list_commands(ctx)) - shown == set()


def test_explain_examples_name_real_rules() -> None:
    for doc in DOCS:
        for line in command_lines(text_of(doc)):
            words = line.split()
            if words[1:2] == ["explain"] and len(words) > 2 and words[2].islower():
                result = CliRunner().invoke(cli, words[1:3])
                assert result.exit_code == 0, (doc, line, result.output)


def _check_line(line: str) -> str | None:
    """Why `line` would not parse, or None: subcommands, option names and choice values."""
    words = _words(line)[1:]
    command: click.Command = cli
    ctx = click.Context(cli)
    i = 0
    while i < len(words):
        word = words[i]
        params = {name: p for p in command.params for name in (*p.opts, *p.secondary_opts)}
        if word.startswith("-"):
            name, _, inline_value = word.partition("=")
            if name in ("-h", "--help"):
                return None
            param = params.get(name)
            if param is None:
                return f"{command.name} has no option {name}"
            takes_value = isinstance(param, click.Option) and not (param.is_flag or param.count)
            if takes_value and not inline_value:
                i += 1
                problem = _check_value(param, words[i] if i < len(words) else "")
                if problem:
                    return problem
        elif isinstance(command, click.Group):
            sub = command.get_command(ctx, word)
            if sub is None:
                return f"{command.name} has no command {word}"
            ctx = click.Context(sub, parent=ctx, info_name=word)
            command = sub
        i += 1
    return None


def _check_value(param: click.Parameter, value: str) -> str | None:
    if not isinstance(param.type, click.Choice) or not value or not value[0].islower():
        return None
    bad = [v for v in value.split("|") if v not in param.type.choices]
    return f"{param.opts[-1]} does not take {', '.join(bad)}" if bad else None


def _words(line: str) -> list[str]:
    """The command's own words: shell quoting undone, stopping where the shell takes over."""
    try:
        words = shlex.split(line)
    except ValueError:
        words = line.split()
    out = []
    for word in words:
        if word in SHELL_END or word.startswith((">", "$(")):
            break
        out.append(word.rstrip(')"'))
    return out


def test_the_readme_stays_a_guide_of_at_most_20_kb() -> None:
    """Detail goes to docs/: the README is what a newcomer reads first."""
    assert len((ROOT / "README.md").read_bytes()) <= 20_000


# --- The README's numbers, each held to its source -------------------------------------------

# A figure: 1,908 or 0.33, not part of a version (v0.17.0) or a name (p95).
NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?")


def _measured_parts(readme: str) -> list[str]:
    """The README's measured figures: the build table under "Measured on" and the Performance
    section. Every number there is a benchmark's, so it is copied from bench/README.md."""
    table = readme.split("Measured on ", 1)[1].split("\n\n`make setup`", 1)[0]
    performance = readme.split("\n## Performance\n", 1)[1].split("\n## ", 1)[0]
    return [table, performance]


def test_every_measured_number_in_the_readme_is_the_benchmarks() -> None:
    bench = set(NUMBER.findall(text_of("bench/README.md")))
    parts = _measured_parts(text_of("README.md"))
    assert all(NUMBER.search(part) for part in parts)
    missing = sorted({n for part in parts for n in NUMBER.findall(part)} - bench)
    assert missing == [], "README figures bench/README.md does not hold (copy them from there)"


def test_the_readmes_coverage_floor_is_the_makefiles() -> None:
    floor = re.search(r"^COVERAGE_FLOOR \?= (\d+)$", text_of("Makefile"), re.M)
    assert floor, "Makefile sets COVERAGE_FLOOR"
    assert f"fails below {floor[1]}%" in text_of("README.md")


def _go_minimum() -> str:
    """The newest `go` directive of the pinned modules, as major.minor: what building them needs."""
    versions = [
        tuple(int(p) for p in m.split(".")[:2])
        for mod in ROOT.glob("testenv/**/go.mod")
        for m in re.findall(r"^go (\d+\.\d+(?:\.\d+)?)$", mod.read_text(), re.M)
    ]
    major, minor = max(versions)
    return f"{major}.{minor}"


@pytest.mark.parametrize("doc", ["README.md", "CONTRIBUTING.md"])
def test_the_go_version_asked_for_is_what_the_pinned_modules_need(doc: str) -> None:
    asked = set(re.findall(r"Go ≥ (\d+\.\d+)", text_of(doc)))
    assert asked == {_go_minimum()}


def test_the_readmes_control_plane_pins_are_testenvs() -> None:
    pins = text_of("testenv/go.mod")
    named = re.search(
        r"\(Kubernetes (v\S+)\s+with kube-scheduler, etcd (v\S+), kwok (v\S+)\)",
        text_of("README.md"),
    )
    assert named, "the README names the control plane's pins"
    kubernetes, etcd, kwok = named.groups()
    assert f"k8s.io/kubernetes {kubernetes}\n" in pins
    assert f"go.etcd.io/etcd/server/v3 {etcd}\n" in pins
    assert f"sigs.k8s.io/kwok {kwok}\n" in text_of("testenv/tools/kwok/go.mod")


# --- docs/ARCHITECTURE.md: a map a newcomer reads in minutes, true of the code ----------------


def test_the_architecture_map_stays_at_most_15_kb() -> None:
    """Detail goes to docs/design.md, docs/contracts.md or the modules' docstrings."""
    assert len((ROOT / "docs/ARCHITECTURE.md").read_bytes()) <= 15_000


def _import_contracts() -> list[dict[str, t.Any]]:
    config = tomllib.loads(text_of("pyproject.toml"))
    contracts: list[dict[str, t.Any]] = config["tool"]["importlinter"]["contracts"]
    return contracts


def test_the_maps_layer_table_is_the_layers_contract() -> None:
    (layers,) = [c for c in _import_contracts() if c["type"] == "layers"]
    section = text_of("docs/ARCHITECTURE.md").split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ")[1] for line in section.splitlines() if line.startswith("| ")][1:]
    shown = [re.findall(r"`(auditor[\w.]*)`", row) for row in rows]
    # siblings: " | " independent, " : " free to import each other
    expected = [re.split(r" [|:] ", layer) for layer in layers["layers"]]
    flat = [p for layer in expected for p in layer]
    assert [p for row in shown for p in row] == flat, "the layers, top to bottom"
    assert [set(row) for row in shown[:-1]] == [set(layer) for layer in expected[: len(shown) - 1]]


def test_the_map_names_every_import_contract() -> None:
    text = " ".join(text_of("docs/ARCHITECTURE.md").split())
    missing = [c["name"] for c in _import_contracts() if " ".join(c["name"].split()) not in text]
    assert missing == []


def test_the_benchmarks_page_shows_the_current_results_first_in_at_most_15_kb() -> None:
    page = text_of("bench/README.md")
    assert len(page.encode()) <= 15_000, "earlier sittings go to bench/HISTORY.md"
    headings = re.findall(r"^## (.+)$", page, re.M)
    assert headings[:2] == ["Conditions", "Summary"]
    assert "(HISTORY.md)" in page.split("\n## ", 1)[0]
