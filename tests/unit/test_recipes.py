"""CONTRIBUTING's recipes, done: a rule, a policy check and a reporter added to a copy of the
package exactly as the recipe says, then seen where a user and the docs see them; and a Kueue
release's files, which must be the ones the recipe lists.

The copy is the package's own tree in a temporary folder, run as `python -m auditor` with that
folder first on the path, over a repository `init` writes: nothing of this checkout changes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def recipe(title: str) -> str:
    """One `## Adding ...` section of CONTRIBUTING.md."""
    return CONTRIBUTING.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


class Copy:
    """A copy of the package, changed as a contributor would and run as a user would."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "pkg"
        shutil.copytree(
            ROOT / "auditor", self.root / "auditor", ignore=shutil.ignore_patterns("__pycache__")
        )
        self.env = {
            **os.environ,
            "PYTHONPATH": str(self.root),
            "KUEUE_GITOPS_CACHE": str(tmp / "cache"),  # nothing judged by the real package
        }
        self.estate = tmp / "estate"

    def append(self, path: str, text: str) -> None:
        file = self.root / path
        file.write_text(file.read_text(encoding="utf-8") + text)  # indented as the file is

    def replace(self, path: str, old: str, new: str) -> None:
        file = self.root / path
        body = file.read_text(encoding="utf-8")
        assert old in body, f"{path} no longer has {old!r}: the recipe's step moved"
        file.write_text(body.replace(old, new, 1))

    def append_to_list(self, path: str, opening: str, entry: str) -> None:
        """`entry` added last to the parenthesized list that `opening` starts."""
        file = self.root / path
        body = file.read_text(encoding="utf-8")
        assert opening in body, f"{path} no longer has {opening!r}: the recipe's step moved"
        start = body.index(opening) + len(opening)
        close = body.index("\n)", start)
        file.write_text(f"{body[:close]}\n    {entry},{body[close:]}")

    def write(self, path: str, text: str) -> None:
        (self.root / path).write_text(textwrap.dedent(text))

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "auditor", *args],
            env=self.env,
            cwd=self.root.parent,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def python(self, code: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code],
            env=self.env,
            cwd=self.root.parent,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def init(self) -> Path:
        self.estate.mkdir()
        done = self.run(
            "init",
            "--cluster",
            "c1",
            "--repo-url",
            "https://github.com/example/estate.git",
            "--repo",
            str(self.estate),
        )
        assert done.returncode == 0, done.stderr
        return self.estate


@pytest.fixture
def copy(tmp_path: Path) -> Copy:
    made = Copy(tmp_path)
    where = made.python("import auditor; print(auditor.__file__)")
    assert where.startswith(str(made.root)), "the copy, not this checkout, is what runs"
    return made


RULE = """\
  upgrade-recipe-example:
    severity: warning
    category: version
    summary: A rule added by following CONTRIBUTING's recipe.
    help: >-
      Why it matters and how to fix it.
    passes: Nothing to say.
    fails: Something to say.
"""


def test_adding_a_rule_is_one_declaration_and_the_docs_follow(copy: Copy) -> None:
    steps = recipe("Adding a rule")
    assert "`auditor/<package>/rules.yaml`" in steps and "make docs" in steps
    copy.append("auditor/upgrade/rules.yaml", RULE)  # step 1, declare
    copy.replace(  # step 2, raise: bound once at the module's top
        "auditor/upgrade/readiness.py",
        "_RULES = rules.of(__name__)\n",
        '_RULES = rules.of(__name__)\nRECIPE_EXAMPLE = _RULES["upgrade-recipe-example"]\n',
    )
    assert "RECIPE_EXAMPLE" in copy.python("import auditor.upgrade.readiness as u; print(dir(u))")

    listed = copy.run("rules")
    assert listed.returncode == 0, listed.stderr
    assert re.search(
        r"^upgrade-recipe-example +warning +version +A rule added", listed.stdout, re.M
    )
    explained = copy.run("explain", "upgrade-recipe-example")
    assert explained.returncode == 0 and "Why it matters and how to fix it." in explained.stdout

    # step 4, `make docs`: docs/rules.md and the upgrade-check table of docs/usage.md
    usage = (ROOT / "docs/usage.md").read_text(encoding="utf-8")
    made = json.loads(
        copy.python(
            "import json, pathlib; from auditor.rules import render; "
            f"u = pathlib.Path({str(ROOT / 'docs/usage.md')!r}).read_text(); "
            "print(json.dumps([render.markdown(), render.with_stage_tables(u)]))"
        )
    )
    rules_md, usage_md = made
    assert "### upgrade-recipe-example" in rules_md
    assert "[`upgrade-recipe-example`](#upgrade-recipe-example) | warning | version" in rules_md
    row = "| [`upgrade-recipe-example`](rules.md#upgrade-recipe-example) | warning |"
    assert row in usage_md and row not in usage
    upgrade_table = usage_md.split("<!-- rules of stage upgrade")[1].split("<!-- end of rules")[0]
    assert row in upgrade_table


CHECK = '''\
    """A check added by following CONTRIBUTING's recipe: every ClusterQueue, once."""

    from __future__ import annotations

    import typing as t

    from auditor import rules
    from auditor.model import Finding

    if t.TYPE_CHECKING:
        from auditor.validate.checks import CheckContext

    RULES = rules.of(__name__)
    RECIPE_QUEUE = RULES["recipe-queue"]

    ID = "recipe-check"


    def check(ctx: CheckContext) -> t.Iterator[Finding]:
        for queue in ctx.of_kind("ClusterQueue"):
            yield Finding.about(queue, RECIPE_QUEUE, f"{queue.name} seen", path=["spec"])
'''

CHECK_RULES = """\
    stage: policy
    rules:
      recipe-queue:
        severity: error
        category: queue
        summary: Every ClusterQueue, as the recipe's check sees it.
        help: >-
          Added in a test of CONTRIBUTING's recipe.
        passes: No ClusterQueue.
        fails: A ClusterQueue.
"""


def test_adding_a_policy_check_as_the_recipe_says_reports_its_finding(copy: Copy) -> None:
    steps = recipe("Adding a policy check")
    assert "`auditor/validate/checks/<check_id>.py`" in steps and "`_MODULES`" in steps
    estate = copy.init()
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "recipe-cq"},
        "spec": {"namespaceSelector": {}, "resourceGroups": []},
    }
    (estate / "clusters/c1/recipe.yaml").write_text(json.dumps(queue))
    copy.write("auditor/validate/checks/recipe_check.py", CHECK)  # step 1
    copy.write("auditor/validate/checks/recipe_check.rules.yaml", CHECK_RULES)  # step 2
    # step 3: imported, then registered last in the order checks run; anchored on the two
    # lists' openings, not their last entries, which the step itself changes
    init = "auditor/validate/checks/__init__.py"
    copy.append_to_list(init, "from auditor.validate.checks import (", "recipe_check")
    copy.append_to_list(init, "_MODULES: tuple[Check, ...] = (", "recipe_check")
    done = copy.run("validate", "--repo", str(estate), "-o", "json")
    report = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr
    mine = [f for f in report["findings"] if f["rule"] == "recipe-queue"]
    assert [(f["rule"], f["name"], f["file"]) for f in mine] == [
        ("recipe-queue", "recipe-cq", "clusters/c1/recipe.yaml")
    ]


REPORTER = '''\
    """One line per finding, tab-separated: a format added by following CONTRIBUTING's recipe."""

    from __future__ import annotations

    import typing as t

    from auditor.model import Report


    def write(report: Report, stream: t.TextIO) -> None:
        stream.write(f"status\\t{report.status}\\n")
        for f in report.findings:
            stream.write(f"{f.rule.id}\\t{f.file}\\t{f.line}\\n")
'''


def test_adding_a_reporter_is_a_module_and_one_registry_entry(copy: Copy) -> None:
    steps = recipe("Adding a reporter")
    assert "`REPORTER_BY_NAME`" in steps and "FORMATS" not in steps
    copy.write("auditor/report/tsv.py", REPORTER)
    copy.replace(
        "auditor/report/__init__.py",
        '    "json": _format("json_"),\n',
        '    "json": _format("json_"),\n    "tsv": _format("tsv"),\n',
    )
    estate = copy.init()
    (estate / "clusters/c1/broken.yaml").write_text("kind: [unclosed\n")
    done = copy.run("validate", "--repo", str(estate), "-o", "tsv")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "status\tfindings"
    assert lines[1:] == ["yaml-syntax\tclusters/c1/broken.yaml\t2"]  # the end of the stream
    for command in ("drift", "plan diff", "status", "verify"):  # every reporting command's -o
        helped = copy.run(*command.split(), "--help")
        assert "tsv" in helped.stdout, command


# --- A Kueue release --------------------------------------------------------------------------


def carried_releases() -> list[str]:
    """The releases the package carries knowledge of: one auditor/kueue/api/<release>.json each."""
    return sorted(p.stem for p in (ROOT / "auditor/kueue/api").glob("v*.json"))


def tracked() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return out.splitlines()


def general(path: str, release: str) -> str:
    """`path` with the release written as the recipe writes it."""
    minor = release.split(".")[1]
    return (
        path.replace(f"kueue-{release}", "kueue-v0.<minor>.<patch>")
        .replace(release, "<release>")
        .replace(f"release_v0_{minor}.go", "release_v0_<minor>.go")
    )


def test_the_files_named_after_a_release_are_the_ones_the_recipe_lists() -> None:
    steps = recipe("Adding a Kueue release")
    listed = set(re.findall(r"`([\w./<>-]+)`", steps))
    releases = carried_releases()
    assert len(releases) >= 2
    named_after: set[str] = set()
    for release in releases:
        minor = release.split(".")[1]
        marks = (release, f"release_v0_{minor}.go")
        named_after |= {
            general(p, release) for p in tracked() if any(m in Path(p).as_posix() for m in marks)
        }
    # a release's own folder (`testenv/kueue-v0.<minor>.<patch>/`) covers what is in it
    per_release = {spot for spot in listed if "<" in spot}
    uncovered = sorted(p for p in named_after if not any(map(p.startswith, per_release)))
    assert uncovered == [], "files a release adds that CONTRIBUTING's recipe does not name"
    newest = max(releases, key=lambda r: tuple(int(n) for n in r.lstrip("v").split(".")))
    minor = newest.split(".")[1]
    for spot in per_release:  # and what the recipe names exists
        path = spot.replace("v0.<minor>.<patch>", newest).replace("<release>", newest)
        assert (ROOT / path.replace("<minor>", minor)).exists(), spot


def test_every_carried_release_is_in_the_tables_the_recipe_names() -> None:
    steps = recipe("Adding a Kueue release")
    assert "docs/releases.md" in steps and "README.md" in steps
    supported = (ROOT / "docs/releases.md").read_text().split("## Supported releases", 1)[1]
    table = supported.split("\n## ", 1)[0]
    readme = (ROOT / "README.md").read_text().split("**Supported Kueue releases:**", 1)[1]
    line = readme.split("\n\n", 1)[0]
    for release in carried_releases():
        assert f"| {release} |" in table, release
        assert release in line, release
