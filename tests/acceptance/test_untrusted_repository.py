"""A pull request is untrusted input: `validate` on it never shows a file from outside the
repository, and no YAML in it takes the job down.

The repositories are copies of the rendered estates (tests/data/rendered/), with the attacks a
pull request can make: a kustomization climbing out of the repository to a folder elsewhere on
the runner, a patch read from outside, a chart file linked out, a value file out of the
repository; alias bombs in a kustomize patch, a values file and a tenant's manifests. The
outside files (`outside/`, beside the repository) hold a marker that must be in no report,
whatever its format; the bombs are read by `validate` in a process of its own, whose peak
memory is held to the ceiling docs/contracts.md states ("Input limits").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import typing as t
from pathlib import Path

import pytest

import auditor
from auditor.sandbox.build import TOOLS, ensure_tool
from tests import peak_memory
from tests.conftest import run_line
from tests.estate import copy_estate

ROOT = Path(__file__).resolve().parents[2]
ESTATES = ROOT / "tests/data/rendered"
MARKER = "pr-marker-c41d9e"  # what the outside files hold: in no report, in no format
FORMATS = ("text", "json", "sarif", "markdown", "junit", "github", "html")
CEILING_MIB = 256  # docs/contracts.md, "Input limits": validate's peak resident memory
ADDRESS_SPACE = 3 << 30  # a cap on the child, so the old code's bomb ends instead of the box
DEADLINE = 120.0
LQ = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
# 9 levels of 9: 387 million nodes once expanded, in ten lines
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n"
    for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)  # fmt: skip
# 75,000 nodes once expanded, within a document's limit: a thousand documents of it in 300 KB
SMALL_BOMB = BOMB[: BOMB.index("f:")]


def climb(repo: Path, target: str) -> str:
    """A path to `target` beside the repository that climbs far past the root, as an attack
    would (out of any copy of the repository a renderer runs in, too)."""
    return "../" * 30 + str(repo.parent / target).lstrip("/")


def estate(name: str, tmp_path: Path) -> Path:
    repo = tmp_path / "platform"
    shutil.copytree(ESTATES / name, repo)
    outside = tmp_path / "outside"
    (outside / "base").mkdir(parents=True)
    (outside / "base/kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [lq.yaml]\n"
    )
    (outside / "base/lq.yaml").write_text(
        LQ + f"metadata: {{name: stolen, namespace: speech}}\nspec: {{clusterQueue: {MARKER}}}\n"
    )
    (outside / "values.yaml").write_text(f"queue: {{clusterQueue: {MARKER}}}\n")
    (outside / "notes.txt").write_text(MARKER)
    return repo


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def reports(repo: Path) -> dict[str, str]:
    """`validate`'s report in every format, none showing the marker (nor what it said on
    stderr)."""
    out = {}
    for form in FORMATS:
        result = run_line(["kueue-gitops", "--repo", str(repo), "validate", "-o", form])
        assert result.exit_code == 1, (form, result.output)
        assert MARKER not in result.stdout and MARKER not in result.stderr, form
        out[form] = result.stdout
    return out


def outside_findings(report: str) -> dict[tuple[str, int], str]:
    found = json.loads(report)["findings"]
    return {
        (f["file"], f["line"]): f["message"]
        for f in found
        if f["rule"] == "render-outside-repository"
    }


@pytest.fixture
def renderers() -> None:
    for tool in ("kustomize", "helm"):
        ensure_tool(ROOT / "testenv", tool, TOOLS[tool])  # the user cache's, as `sandbox build`


@pytest.mark.usefixtures("renderers")
def test_a_kustomization_reaching_out_of_the_repository_shows_nothing_of_it(
    tmp_path: Path,
) -> None:
    """Until now kustomize built the outside folder in its copy (climbing out of it), and a
    LocalQueue there printed its ClusterQueue's name, the marker, in every format."""
    repo = estate("kustomize", tmp_path)
    base = climb(repo, "outside/base")
    west = repo / "queues/overlays/west/kustomization.yaml"
    west.write_text(west.read_text().replace("  - ../../base\n", f"  - ../../base\n  - {base}\n"))
    out = reports(repo)
    named = outside_findings(out["json"])
    assert set(named) == {("queues/overlays/west/kustomization.yaml", 5)}
    assert base in named[("queues/overlays/west/kustomization.yaml", 5)]
    assert "queues/overlays/west/kustomization.yaml:5" in out["text"]


@pytest.mark.usefixtures("renderers")
def test_a_chart_reaching_out_of_the_repository_shows_nothing_of_it(tmp_path: Path) -> None:
    """Until now helm read a value file out of the repository (its path climbing out of the
    copy), whose ClusterQueue, the marker, every format printed; and a chart file linked out
    was read as empty without a word."""
    repo = estate("helm", tmp_path)
    chart = repo / "charts/team-space"
    (chart / "files").mkdir()
    (chart / "files/notes.txt").symlink_to(tmp_path / "outside/notes.txt")
    append(chart / "templates/localqueue.yaml", '  # {{ .Files.Get "files/notes.txt" }}\n')
    values = climb(repo, "outside/values.yaml")
    (repo / "apps/stolen.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        "metadata: {name: stolen, namespace: argocd}\nspec:\n  project: default\n  source:\n"
        "    repoURL: https://git.acme.example/ml/platform.git\n    path: charts/team-space\n"
        f"    helm:\n      valueFiles:\n        - {values}\n"
        "  destination: {name: north, namespace: nlp}\n"
    )
    out = reports(repo)
    named = outside_findings(out["json"])
    assert ("apps/stolen.yaml", 11) in named
    assert values in named[("apps/stolen.yaml", 11)]
    assert ("charts/team-space/Chart.yaml", 1) in named
    assert "charts/team-space/files/notes.txt" in named[("charts/team-space/Chart.yaml", 1)]


# --- Bounded input ---------------------------------------------------------------------------


class Ran(t.NamedTuple):
    code: int
    report: dict[str, t.Any] | None
    peak_mib: float
    seconds: float


def validate_alone(repo: Path) -> Ran:
    """`validate -o json` in a process of its own (capped, and stopped at DEADLINE), with the
    peak resident memory the kernel measured for it."""
    out = repo.parent / "report.json"
    env = {**os.environ, "PYTHONPATH": str(Path(auditor.__file__).parents[1])}  # this one
    argv = [sys.executable, "-m", "auditor", "--repo", str(repo), "validate", "--jobs", "1"]
    start = time.monotonic()
    with out.open("wb") as sink:
        ran = peak_memory.run(
            [*argv, "-o", "json"], stdout=sink, stderr=subprocess.DEVNULL, seconds=DEADLINE,
            env=env, cwd=repo.parent, address_space=ADDRESS_SPACE,
        )  # fmt: skip
    text = out.read_text()
    report = json.loads(text) if text.startswith("{") else None
    return Ran(ran.code, report, ran.peak / 2**20, time.monotonic() - start)


def plant_kustomize_patch(tmp_path: Path) -> tuple[Path, tuple[str, str, int]]:
    repo = estate("kustomize", tmp_path)
    bomb = "".join(f"      {line}\n" for line in BOMB.splitlines())
    append(
        repo / "access/teams/vision/kustomization.yaml",
        f"  - target: {{kind: LocalQueue}}\n    patch: |\n{bomb}",
    )
    return repo, ("yaml-too-large", "access/teams/vision/kustomization.yaml", 12)


def plant_patch_file(tmp_path: Path) -> tuple[Path, tuple[str, str, int]]:
    repo = estate("kustomize", tmp_path)
    (repo / "queues/overlays/west/quotas.yaml").write_text(BOMB)
    return repo, ("yaml-too-large", "queues/overlays/west/quotas.yaml", 1)


def plant_values(tmp_path: Path) -> tuple[Path, tuple[str, str, int]]:
    repo = estate("helm", tmp_path)
    append(repo / "environments/north/nlp.yaml", BOMB)
    return repo, ("yaml-too-large", "environments/north/nlp.yaml", 1)


def plant_application(tmp_path: Path) -> tuple[Path, tuple[str, str, int]]:
    repo = estate("helm", tmp_path)
    bomb = "".join(f"        {line}\n" for line in BOMB.splitlines())
    (repo / "apps/extra.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        "metadata: {name: extra, namespace: argocd}\nspec:\n  project: default\n"
        "  destination: {name: north, namespace: nlp}\n  source:\n"
        "    repoURL: https://git.example.com/platform.git\n    path: charts/team-space\n"
        f"    helm:\n      valuesObject:\n{bomb}"
    )
    return repo, ("yaml-too-large", "apps/extra.yaml", 1)


def plant_application_values_text(tmp_path: Path) -> tuple[Path, tuple[str, str, int]]:
    """The bomb inside a `values: |` string: the Application file's own budget sees a scalar."""
    repo = estate("helm", tmp_path)
    bomb = "".join(f"        {line}\n" for line in BOMB.splitlines())
    (repo / "apps/extra.yaml").write_text(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\n"
        "metadata: {name: extra, namespace: argocd}\nspec:\n  project: default\n"
        "  destination: {name: north, namespace: nlp}\n  source:\n"
        "    repoURL: https://git.example.com/platform.git\n    path: charts/team-space\n"
        f"    helm:\n      values: |\n{bomb}"
    )
    return repo, ("render-failed", "charts/team-space/Chart.yaml", 1)  # helm refuses it too


def plant_tenant(tmp_path: Path) -> tuple[Path, tuple[str, str, int]]:
    repo = copy_estate(tmp_path / "platform", "clusters", "tenants", "schemas")
    bad = "tenants/team-a/gpu-prod/bombs.yaml"
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{}, namespace: team-a}}\n"
    (repo / bad).write_text("---\n".join(head.format(i) + SMALL_BOMB for i in range(1000)))
    return repo, ("yaml-too-large", bad, 19)  # the third document spends the file's budget


@pytest.mark.parametrize(
    "plant",
    [
        plant_kustomize_patch,
        plant_patch_file,
        plant_values,
        plant_application,
        plant_application_values_text,
        plant_tenant,
    ],
    ids=[
        "kustomize-inline-patch",
        "kustomize-patch-file",
        "helm-values",
        "application-values-object",
        "application-values-text",
        "tenant-manifests",
    ],
)
def test_an_alias_bomb_is_a_finding_within_the_memory_ceiling(
    tmp_path: Path, plant: t.Callable[[Path], tuple[Path, tuple[str, str, int]]]
) -> None:
    repo, where = plant(tmp_path)
    ran = validate_alone(repo)
    assert ran.peak_mib < CEILING_MIB, ran
    assert ran.code == 1 and ran.report is not None, ran
    found = {(f["rule"], f["file"], f["line"]) for f in ran.report["findings"]}
    assert where in found, found
