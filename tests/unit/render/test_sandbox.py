"""A render reads the repository only, and only YAML within the readers' limits.

Each case is a scratch repository of the test's own with a file outside it (`outside/`, beside
the repository): a path or a link that reaches it is a finding at the line that names it, and
nothing is rendered; an alias bomb or a nesting past the limits in what a render reads (a
patch, a base, a values file) is a finding at its file, before anything expands it. None of
these needs a renderer: the render stops before one would run.
"""

from __future__ import annotations

import json
import typing as t
from pathlib import Path

import git
import pytest

from auditor.render import folder as render_folder
from auditor.render.source import Rendered, Source
from auditor.repo.gitsource import GitTree
from auditor.repo.tree import Tree, WorkTree

MARKER = "pr-marker-5b0e"  # what the outside file holds: never in a message
KUSTOMIZATION = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
LQ = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q}\n"
CHART = "apiVersion: v2\nname: team\nversion: 0.1.0\n"
APP = "argo/app.yaml"
# 9 levels of 9: 387 million nodes once expanded, in ten lines
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)
DEEP = "spec: " + "[" * 150 + "]" * 150 + "\n"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    (outside / "base").mkdir(parents=True)
    (outside / "base/kustomization.yaml").write_text(KUSTOMIZATION + "resources: [lq.yaml]\n")
    (outside / "base/lq.yaml").write_text(LQ + f"spec: {{clusterQueue: {MARKER}}}\n")
    (outside / "values.yaml").write_text(f"clusterQueue: {MARKER}\n")
    (outside / "notes.txt").write_text(MARKER)
    root = tmp_path / "platform"
    (root / "argo").mkdir(parents=True)
    return root


def climb(root: Path, target: str) -> str:
    """A path from the repository's team folder to `target` beside the repository, climbing
    far past the root as an attacker would (out of any copy the renderer runs in too)."""
    return "../" * 30 + str(root.parent / target).lstrip("/")


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def build(root: Path, path: str = "team", tree: Tree | None = None, **spec: t.Any) -> Rendered:
    source = Source(path, "east", "team", json.dumps(spec), app=APP, application="team")
    return render_folder.build(tree or WorkTree(root), source)


def found(rendered: Rendered) -> set[tuple[str, str, int]]:
    assert rendered.resources == []
    assert all(MARKER not in f.message for f in rendered.findings)
    out = {(f.rule.id, f.file or "", f.line or 0) for f in rendered.findings}
    assert len(out) == len(rendered.findings), rendered.findings  # each said once
    return out


def test_a_base_that_climbs_out_of_the_repository_is_named_at_its_line(repo: Path) -> None:
    entry = climb(repo, "outside/base")
    write(repo, {"team/kustomization.yaml": KUSTOMIZATION + f"resources:\n  - {entry}\n"})
    rendered = build(repo)
    assert found(rendered) == {("render-outside-repository", "team/kustomization.yaml", 4)}
    assert entry in rendered.findings[0].message
    assert not any(".." in r for r in rendered.reads)  # nothing outside is copied for kustomize


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("patches:\n  - path: @\n", 4),
        ("patchesStrategicMerge:\n  - @\n", 4),
        ("configMapGenerator:\n  - name: c\n    files: [key=@]\n", 5),
        ("components:\n  - @\n", 4),
        ("replacements:\n  - path: @\n", 4),
    ],
    ids=["patch", "strategic-merge", "generator-file", "component", "replacement"],
)
def test_every_file_a_kustomization_names_out_of_the_repository_is_a_finding(
    repo: Path, field: str, line: int
) -> None:
    entry = climb(repo, "outside/values.yaml")
    write(repo, {"team/kustomization.yaml": KUSTOMIZATION + field.replace("@", entry)})
    rendered = build(repo)
    assert found(rendered) == {("render-outside-repository", "team/kustomization.yaml", line)}
    assert entry in rendered.findings[0].message


def test_an_absolute_path_is_outside_too(repo: Path) -> None:
    entry = str(repo.parent / "outside/base")
    write(repo, {"team/kustomization.yaml": KUSTOMIZATION + f"resources: [{entry}]\n"})
    assert found(build(repo)) == {("render-outside-repository", "team/kustomization.yaml", 3)}


def test_a_linked_folder_out_of_the_repository_is_named_not_read(repo: Path) -> None:
    write(repo, {"team/kustomization.yaml": KUSTOMIZATION + "resources: [shared]\n"})
    (repo / "team/shared").symlink_to(repo.parent / "outside/base")
    rendered = build(repo)
    assert found(rendered) == {("render-outside-repository", "team/kustomization.yaml", 1)}
    assert "team/shared" in rendered.findings[0].message


def test_a_value_file_out_of_the_repository_is_named_at_the_application(repo: Path) -> None:
    entry = climb(repo, "outside/values.yaml")
    write(
        repo,
        {
            APP: f"kind: Application\nspec:\n  source:\n    helm:\n      valueFiles: [{entry}]\n",
            "team/Chart.yaml": CHART,
            "team/templates/lq.yaml": LQ + "spec: {clusterQueue: {{ .Values.clusterQueue }}}\n",
        },
    )
    rendered = build(repo, helm={"valueFiles": [entry]})
    assert found(rendered) == {("render-outside-repository", APP, 5)}
    assert entry in rendered.findings[0].message


def test_a_chart_file_linked_out_of_the_repository_stops_the_chart(repo: Path) -> None:
    """Read as empty by `.Files.Get` until now, without a word."""
    write(
        repo,
        {
            "team/Chart.yaml": CHART,
            "team/templates/lq.yaml": LQ + 'spec: {clusterQueue: {{ .Files.Get "notes.txt" }}}\n',
        },
    )
    (repo / "team/notes.txt").symlink_to(repo.parent / "outside/notes.txt")
    rendered = build(repo)
    assert found(rendered) == {("render-outside-repository", "team/Chart.yaml", 1)}
    assert "team/notes.txt" in rendered.findings[0].message


def test_a_git_revision_is_the_sandbox_alike(repo: Path) -> None:
    """`plan` renders the base and head revisions out of git: a link committed there that
    leads out of the repository is refused the same way."""
    write(
        repo,
        {
            "team/Chart.yaml": CHART,
            "team/templates/lq.yaml": LQ + 'spec: {clusterQueue: {{ .Files.Get "notes.txt" }}}\n',
        },
    )
    (repo / "team/notes.txt").symlink_to(repo.parent / "outside/notes.txt")
    history = git.Repo.init(repo)
    history.index.add(["team/Chart.yaml", "team/templates/lq.yaml", "team/notes.txt"])
    history.index.commit("a chart with a link out")
    rendered = build(repo, tree=GitTree(history, "HEAD"))
    assert found(rendered) == {("render-outside-repository", "team/Chart.yaml", 1)}
    assert "team/notes.txt" in rendered.findings[0].message


def test_an_application_path_out_of_the_repository_is_not_rendered(repo: Path) -> None:
    assert found(build(repo, path=climb(repo, "outside/base"))) == {
        ("render-outside-repository", APP, 1)
    }


# --- Bounded input ---------------------------------------------------------------------------


def indented(text: str, by: int) -> str:
    return "".join(" " * by + line + "\n" for line in text.splitlines())


@pytest.mark.parametrize(
    ("files", "where"),
    [
        (
            {"team/kustomization.yaml": KUSTOMIZATION + "patches:\n  - patch: |\n"
             + indented(BOMB, 6) + "    target: {kind: LocalQueue}\n"},
            ("yaml-too-large", "team/kustomization.yaml", 4),
        ),
        (
            {"team/kustomization.yaml": KUSTOMIZATION + "patches: [{path: p.yaml}]\n",
             "team/p.yaml": BOMB},
            ("yaml-too-large", "team/p.yaml", 1),
        ),
        (
            {"team/kustomization.yaml": KUSTOMIZATION + "resources: [lq.yaml]\n",
             "team/lq.yaml": LQ + "---\n" + BOMB},
            ("yaml-too-large", "team/lq.yaml", 5),
        ),
        (
            {"team/kustomization.yaml": KUSTOMIZATION + "patches: [{path: p.yaml}]\n",
             "team/p.yaml": DEEP},
            ("yaml-too-deep", "team/p.yaml", 1),
        ),
        (
            {"team/Chart.yaml": CHART, "team/values.yaml": BOMB,
             "team/templates/lq.yaml": LQ},
            ("yaml-too-large", "team/values.yaml", 1),
        ),
        (
            {"team/Chart.yaml": CHART, "team/values.yaml": "a: &a {b: *a}\n",
             "team/templates/lq.yaml": LQ},
            ("yaml-recursive-alias", "team/values.yaml", 1),
        ),
    ],
    ids=["inline-patch", "patch-file", "base", "deep-patch", "helm-values", "values-loop"],
)  # fmt: skip
def test_yaml_past_the_limits_in_what_a_render_reads_is_a_finding_at_its_file(
    repo: Path, files: dict[str, str], where: tuple[str, str, int]
) -> None:
    write(repo, files)
    rendered = build(repo)
    assert found(rendered) == {where}
    assert rendered.findings[0].cluster == "east"
    assert "team/ is not rendered" in rendered.findings[0].message
