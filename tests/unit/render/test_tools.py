"""Which kustomize or helm renders: the release the cluster's Argo CD runs, else another on PATH
(noted by the caller), never one of another release when exact renderers are asked for."""

from __future__ import annotations

import typing as t
from pathlib import Path

import pytest

from auditor.render import mode, tools
from tests.conftest import run_line


def test_the_releases_follow_the_argo_cd_release_named_else_the_pinned_one() -> None:
    assert tools.wanted("kustomize", None) == ("v5.8.1", "v3.5.7")
    assert tools.wanted("helm", "v3.4.14") == ("v3.19.4", "v3.4.14")
    # a patch release not listed: the nearest listed one of its minor below it
    assert tools.wanted("kustomize", "v3.3.7") == ("v5.8.0", "v3.3.7, as v3.3.0")
    assert tools.wanted("helm", "v2.14.0") == ("v4.2.1", "v3.5.7")  # a minor not listed


@pytest.fixture
def on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> t.Iterator[Path]:
    """A kustomize that says it is v5.7.1, alone on PATH, and an empty cache."""
    fake = tmp_path / "bin" / "kustomize"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho v5.7.1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    tools.find.cache_clear()
    yield fake
    tools.find.cache_clear()


def test_a_renderer_of_another_release_on_path_is_taken_and_says_so(on_path: Path) -> None:
    found = tools.find("kustomize")
    assert (found.binary, found.version, found.wanted, found.differs) == (
        str(on_path), "v5.7.1", "v5.8.1", True
    )  # fmt: skip
    assert tools.find("kustomize", False, "v3.3.0").wanted == "v5.8.0"


def test_exact_renderers_refuse_another_release(on_path: Path) -> None:
    with pytest.raises(tools.Unavailable, match=r"is v5\.7\.1\), and exact renderers are asked"):
        tools.find("kustomize", True)


# --- kubectl kustomize, where no kustomize binary is found -----------------------------------

KUBECTL_VERSION = """{
  "clientVersion": {"major": "1", "minor": "32+", "gitVersion": "v1.32.4"},
  "kustomizeVersion": "v5.5.0"
}"""


def test_the_kustomize_kubectl_embeds_is_read_from_its_version_json() -> None:
    assert tools.embedded_kustomize(KUBECTL_VERSION) == "v5.5.0"
    assert tools.embedded_kustomize('{"clientVersion": {}}') is None  # a kubectl before v1.24
    assert tools.embedded_kustomize("error: unknown flag: --output") is None


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> t.Iterator[dict[str, str]]:
    """The binaries PATH holds (name -> the release it says it is), and an empty cache."""
    held: dict[str, str] = {}
    monkeypatch.setattr("shutil.which", lambda n: f"/opt/{n}" if n in held else None)
    monkeypatch.setattr(tools, "version_of", lambda b: held.get(Path(b).name))
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(mode.EXACT_ENV, raising=False)
    tools.find.cache_clear()
    yield held
    tools.find.cache_clear()


def test_without_a_kustomize_binary_kubectl_kustomize_renders_noted(
    machine: dict[str, str],
) -> None:
    machine["kubectl"] = "v5.5.0"
    found = tools.find("kustomize")
    assert (found.binary, found.version, found.wanted, found.kubectl) == (
        "/opt/kubectl", "v5.5.0", "v5.8.1", True
    )  # fmt: skip
    assert found.differs
    with pytest.raises(tools.Unavailable, match=r"/opt/kubectl is v5\.5\.0\), and exact"):
        tools.find("kustomize", True)
    with pytest.raises(tools.Unavailable, match=r"it has no `kustomize edit`"):
        tools.find("kustomize", False, None, True)  # the Application sets overrides
    with pytest.raises(tools.Unavailable, match=r"helm v4\.2\.1 .* none was found:"):
        tools.find("helm")  # kubectl renders no chart


def test_a_kustomize_binary_comes_before_kubectl_unless_only_kubectl_is_argo_cds_release(
    machine: dict[str, str],
) -> None:
    machine.update(kustomize="v5.7.1", kubectl="v5.5.0")
    assert tools.find("kustomize").binary == "/opt/kustomize"
    tools.find.cache_clear()
    machine["kubectl"] = "v5.8.1"  # the release Argo CD v3.5.7 runs: exact takes it
    found = tools.find("kustomize", True)
    assert (found.binary, found.differs) == ("/opt/kubectl", False)


def test_the_flag_comes_before_the_environment_before_the_profile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(mode.EXACT_ENV, raising=False)
    try:
        assert (mode.exact(), mode.exact(True)) == (False, True)  # the profile's alone
        monkeypatch.setenv(mode.EXACT_ENV, "any")
        assert mode.exact(True) is False
        monkeypatch.setenv(mode.EXACT_ENV, "exact")
        assert mode.exact(False) is True
        mode.choose("any")
        assert mode.exact(True) is False  # --renderers any over both
        mode.choose("exact")
        monkeypatch.setenv(mode.EXACT_ENV, "any")
        assert mode.exact(False) is True
    finally:
        mode.choose(None)


def test_the_argo_cd_release_read_live_comes_before_the_profiles_before_the_pinned() -> None:
    assert tools.argocd_of("east", None) is None  # the pinned one: tools.wanted(tool, None)
    assert tools.argocd_of("east", "v3.4.14") == "v3.4.14"
    tools.running_on("east", "v3.6.2")
    try:
        assert tools.argocd_of("east", "v3.4.14") == "v3.6.2"
        assert tools.argocd_of("west", "v3.4.14") == "v3.4.14"
        tools.running_on("east", None)  # read again, not known: never the stale release
        assert tools.argocd_of("east", "v3.4.14") == "v3.4.14"
    finally:
        tools.running_on("east", None)


def test_renderers_is_one_option_on_the_commands_that_render_and_a_bad_value_is_usage(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    plan_verbs = [["plan", verb] for verb in ("diff", "replay", "job", "sweep")]
    for command in (["validate"], *plan_verbs, ["drift"], ["lsp"]):
        said = run_line(["kueue-gitops", *command, "--help"]).output
        assert "--renderers [exact|any]" in said, command
    monkeypatch.setenv(mode.EXACT_ENV, "exactly")
    refused = run_line(["kueue-gitops", "validate"])
    assert refused.exit_code == 2
    assert "Invalid value for '--renderers': 'exactly' is not one of 'exact', 'any'" in (
        refused.output
    )


def test_a_runs_renderers_choice_ends_with_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Several runs in one process (an editor's, a test's): a command without --renderers does
    not inherit the choice of the run before it."""
    monkeypatch.delenv(mode.EXACT_ENV, raising=False)
    mode.choose("exact")  # what the run before said
    try:
        assert run_line(["kueue-gitops", "rules", "-o", "markdown"]).exit_code == 0
        assert mode.exact() is False
    finally:
        mode.choose(None)
