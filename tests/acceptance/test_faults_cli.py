"""Through the CLI: bad input is a finding (exit 1) at its file and line, a crash is exit 3 with
one line and an incomplete report (never 1, never a traceback unless -v), a kubeconfig problem
is exit 2 in one line."""

from __future__ import annotations

import json
import os
import shutil
import time
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.repo import manifests
from auditor.validate.checks import quotas
from tests.conftest import run_line
from tests.estate import ESTATE

BAD = "tenants/team-a/gpu-prod/bad.yaml"
CQS = "clusters/gpu-prod/clusterqueues.yaml"
LQ = (
    "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: team-a}\n"
)


@pytest.fixture
def repo_copy(repo_copy: Path) -> Path:
    """The working tree's repository, with its schemas (validate needs them)."""
    shutil.copytree(ESTATE / "schemas", repo_copy / "schemas")
    return repo_copy


def validate(repo: Path, *args: str) -> t.Any:
    return run_line(["kueue-gitops", "--repo", str(repo), "validate", "--jobs", "1", *args])


def quota(text: str) -> tuple[str, str]:
    """team-a-cq's first nominalQuota (line 27 of CQS) written as `text`."""
    return CQS, f"nominalQuota: {text}"


# The inputs of issue 17 that crashed (exit 1, no report): now each is a finding at its line.
CASES = [
    ("recursive-alias", BAD, "a: &a {b: *a}\n", "yaml-recursive-alias", 1),
    ("1e309", *quota("1e309"), "quantity-too-large", 27),
    ("minus-1e309", *quota("-1e309"), "quantity-too-large", 27),
    ("1e999999999", *quota('"1e999999999"'), "quantity-too-large", 27),
    ("5001-digit-quantity", *quota('"' + "9" * 5001 + '"'), "quantity-too-large", 27),
    ("5000-digit-int", *quota("9" * 5000), "yaml-bad-number", 27),
    (
        "metadata-list",
        BAD,
        "apiVersion: v1\nkind: Namespace\nmetadata: [a]\n",
        "missing-identity",
        1,
    ),
]


@pytest.mark.parametrize(
    ("file", "text", "rule", "line"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_input_that_crashed_is_a_finding_at_its_line(
    repo_copy: Path, file: str, text: str, rule: str, line: int
) -> None:
    path = repo_copy / file
    if file == CQS:
        text = path.read_text().replace('nominalQuota: "256"', text, 1)
    path.write_text(text)
    result = validate(repo_copy, "-o", "json")
    assert (result.exit_code, "Traceback" in result.output + result.stderr) == (1, False)
    found = [
        (f["file"], f["line"]) for f in json.loads(result.stdout)["findings"] if f["rule"] == rule
    ]
    assert (file, line) in found


def test_keys_1_and_true_in_one_mapping_are_no_duplicate(repo_copy: Path) -> None:
    (repo_copy / BAD).write_text(LQ + "spec:\n  clusterQueue: team-a-cq\n  1: a\n  true: b\n")
    report = json.loads(validate(repo_copy, "-o", "json").stdout)
    assert [f for f in report["findings"] if f["rule"] == "yaml-duplicate-key"] == []
    unknown = [(f["line"], f["path"]) for f in report["findings"] if f["rule"] == "unknown-field"]
    assert sorted(unknown) == [(6, "spec.1"), (7, "spec.true")]


# -- a crash: exit 3, one line, an incomplete report ---------------------------------------------


def test_a_crash_in_the_loader_makes_its_cluster_incomplete_and_names_the_file(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = manifests.load_bytes

    def load_bytes(data: bytes, file: str) -> t.Any:
        if file == "tenants/team-b/gpu-prod/localqueues.yaml":
            raise RuntimeError("a bug")
        return real(data, file)

    monkeypatch.setattr(manifests, "load_bytes", load_bytes)
    result = validate(repo_copy, "-o", "json")
    assert result.exit_code == 3
    assert "Traceback" not in result.stderr + result.stdout
    report = json.loads(result.stdout)
    assert report["status"] == "incomplete"
    # the file's cluster is incomplete, named with the file; the others are still judged
    clusters = {c["name"]: (c["status"], c["errors"]) for c in report["clusters"]}
    assert clusters.pop("gpu-prod") == (
        "incomplete",
        [
            "internal error while reading tenants/team-b/gpu-prod/localqueues.yaml: "
            "RuntimeError: a bug (a bug in kueue-gitops; -v shows the traceback)"
        ],
    )
    assert clusters and all(status == "ok" for status, _ in clusters.values())
    assert not [f for f in report["findings"] if f["cluster"] == "gpu-prod"]

    verbose = run_line(
        ["kueue-gitops", "-v", "--repo", str(repo_copy), "validate", "--jobs", "1", "-o", "text"]
    )
    assert verbose.exit_code == 3
    assert "Traceback (most recent call last)" in verbose.stderr
    assert "INCOMPLETE" in verbose.stdout


def test_a_crash_in_one_clusters_check_leaves_the_other_cluster_reported(
    repo_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = quotas.check

    def check(ctx: t.Any) -> t.Any:
        if ctx.cluster.name == "gpu-prod":
            raise ZeroDivisionError("division by zero")
        return real(ctx)

    monkeypatch.setattr(quotas, "check", check)
    (repo_copy / "tenants/team-a/gpu-staging/bad.yaml").write_text("kind: [\n")
    result = validate(repo_copy, "-o", "json")
    assert result.exit_code == 3 and "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    clusters = {c["name"]: c for c in report["clusters"]}
    assert (clusters["gpu-staging"]["status"], clusters["gpu-staging"]["errors"]) == ("ok", [])
    assert clusters["gpu-prod"]["errors"] == [
        "internal error while running check quotas on cluster gpu-prod: ZeroDivisionError: "
        "division by zero (a bug in kueue-gitops; -v shows the traceback)"
    ]
    assert any(f["rule"] == "yaml-syntax" for f in report["findings"])
    assert report["status"] == "incomplete"


def test_quiet_drops_the_notes(repo_copy: Path) -> None:
    assert "note:" in validate(repo_copy, "-v").stderr
    quiet = run_line(["kueue-gitops", "-q", "--repo", str(repo_copy), "validate", "--jobs", "1"])
    assert (quiet.exit_code, quiet.stderr) == (0, "")


def test_a_kubeconfig_file_that_does_not_exist_is_named(repo_copy: Path, tmp_path: Path) -> None:
    """Not "the default kubeconfig": the file $KUBECONFIG or --kubeconfig names, and that it is
    missing (exit 2: the user's to fix)."""
    gone = tmp_path / "gone.yaml"
    line = ["kueue-gitops", "--repo", str(repo_copy), "status", "--cluster", "gpu-prod"]
    for argv, env, says in (
        (line, {"KUBECONFIG": str(gone)}, f"$KUBECONFIG names {gone}"),
        ([*line, "--kubeconfig", str(gone)], {}, f"--kubeconfig names {gone}"),
    ):
        result = run_line(argv, env=env)
        assert result.exit_code == 2, result.output
        assert result.stderr == f"Error: cluster gpu-prod: {says}: no such file\n"


# -- the kubeconfig: exit 2, one line -------------------------------------------------------------


def test_a_kubeconfig_with_bad_key_data_is_exit_2_in_one_line(
    repo_copy: Path, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [
                    {
                        "name": "u",
                        "user": {
                            "client-certificate-data": "bm90IGEgY2VydA==",
                            "client-key-data": "not base64 at all!",
                        },
                    }
                ],
                "contexts": [{"name": "gpu-prod", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "gpu-prod",
            }
        )
    )
    for command in (["status", "--cluster", "gpu-prod"], ["drift", "--cluster", "gpu-prod"]):
        result = run_line(
            ["kueue-gitops", "--repo", str(repo_copy), *command, "--kubeconfig", str(kubeconfig)]
        )
        assert result.exit_code == 2, (command, result.output, result.stderr)
        assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.stderr
        assert result.stderr.startswith("Error: cluster gpu-prod: cannot use context")


def test_an_exec_plugin_that_hangs_is_stopped_at_the_clusters_deadline(
    repo_copy: Path, tmp_path: Path
) -> None:
    """An expired login waiting for a browser: the plugin (a script whose child holds its
    pipes) never answers. drift --timeout 3 stops it and says so, instead of running on."""
    plugin = tmp_path / "login"
    plugin.write_text(
        f"#!/bin/sh\ndate +%s.%N > {tmp_path}/started\n"
        f"sleep 600 &\necho $! > {tmp_path}/child\nwait\n"
    )
    plugin.chmod(0o755)
    user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin),
                     "interactiveMode": "Never"}}  # fmt: skip
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "gpu-prod", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    result = run_line(
        ["kueue-gitops", "--repo", str(repo_copy), "drift", "--cluster", "gpu-prod",
         "--timeout", "3", "--kubeconfig", str(kubeconfig)]
    )  # fmt: skip
    # from the plugin's start to the command's end: the deadline, not loading the repository
    took = time.time() - float((tmp_path / "started").read_text())
    assert result.exit_code == 2, result.output
    assert "the exec credential plugin" in result.stderr
    assert "no answer within the cluster's 3s deadline (--timeout), so it was stopped" in (
        result.stderr
    )
    assert took < 3 + 5, (
        took
    )  # the deadline, plus ending the plugin and the report on a busy machine
    child = int((tmp_path / "child").read_text())
    with pytest.raises(ProcessLookupError):  # what the plugin started is gone too
        for _ in range(50):
            os.kill(child, 0)
            time.sleep(0.1)


def test_metrics_of_one_cluster_keep_the_other_clusters_series(
    repo_copy: Path, tmp_path: Path
) -> None:
    out = tmp_path / "validate.prom"
    assert validate(repo_copy, "--metrics-file", str(out)).exit_code == 0
    assert 'cluster="gpu-staging"' in out.read_text()
    assert validate(repo_copy, "--cluster", "gpu-prod", "--metrics-file", str(out)).exit_code == 0
    assert 'kueue_gitops_audit_complete{cluster="gpu-staging",command="validate"} 1.0' in (
        out.read_text()
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- apiVersion: v1\n- kind: Config\n", "holds a list at its top level"),
        ("just a string\n", "holds a string ('just a string') at its top level"),
        ("clusters: [\n", "is not YAML at line 2"),
    ],
    ids=["list", "scalar", "not-yaml"],
)
def test_a_malformed_kubeconfig_is_exit_2_naming_the_file(
    repo_copy: Path, tmp_path: Path, text: str, says: str
) -> None:
    """Not a Python error's text: what is wrong, and which file (--kubeconfig or $KUBECONFIG)."""
    kubeconfig = tmp_path / "kc"
    kubeconfig.write_text(text)
    line = ["kueue-gitops", "--repo", str(repo_copy), "drift", "--cluster", "gpu-prod"]
    for argv, env in (
        ([*line, "--kubeconfig", str(kubeconfig)], {}),
        (line, {"KUBECONFIG": str(kubeconfig)}),
    ):
        result = run_line(argv, env=env)
        assert result.exit_code == 2, result.output
        [error] = result.stderr.splitlines()
        assert error.startswith(f"Error: cluster gpu-prod: the kubeconfig {kubeconfig} {says}")
