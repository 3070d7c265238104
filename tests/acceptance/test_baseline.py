"""Adopting kueue-gitops on an estate that already has findings, through the CLI: record them in
a baseline, and from then on only new findings fail; the report counts what the baseline holds
and what of it went away, and writing it again drops that.

The estate is a copy of this repository's committed manifests in a git repository of the test's
own, with two problems planted as a running estate would have them on day one: a quota beyond
its flavor's capacity, and a ClusterQueue half-migrated to v1beta2.
"""

from __future__ import annotations

import json
import subprocess
import typing as t
from pathlib import Path

import pytest
import yaml
from junitparser import JUnitXml, Skipped

from tests import installed
from tests.acceptance.user_repos import user_repo
from tests.acceptance.validating import committed_repo, validate

CQS = "clusters/gpu-prod/clusterqueues.yaml"


def half_migrated(name: str) -> str:
    """A v1beta2 ClusterQueue still using v1beta1's spec.cohort: field-of-other-version."""
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {name}
  annotations:
    argocd.argoproj.io/sync-options: Prune=false,Delete=false
spec:
  cohort: ai-shared
  namespaceSelector: {{matchLabels: {{platform.example.com/kueue: enabled}}}}
  resourceGroups:  # enough that a Job asking cpu and memory could be admitted
    - coveredResources: [cpu, memory]
      flavors:
        - name: cpu-only
          resources:
            - {{name: cpu, nominalQuota: "1"}}
            - {{name: memory, nominalQuota: 1Gi}}
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Platform", "-c", "user.email=platform@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def estate(tmp_path: Path) -> Path:
    """Day one: the estate, committed, with its two problems."""
    repo = committed_repo(tmp_path / "estate")
    queues = repo / CQS
    text = queues.read_text()
    # team-a-cq's a100 GPU quota (the first "16"), 16 -> 64: the flavor's quotas exceed its 32.
    queues.write_text(
        text.replace('nominalQuota: "16"', 'nominalQuota: "64"', 1) + half_migrated("old-q")
    )
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the estate as it runs")
    return repo


def report(repo: Path, *args: str) -> tuple[int, dict[str, t.Any]]:
    result = validate(repo, "-o", "json", *args)
    return result.exit_code, json.loads(result.stdout)


def counted(doc: dict[str, t.Any]) -> list[tuple[str, str]]:
    """The findings that fail the run: (rule, object name)."""
    return [
        (f["rule"], f["name"])
        for f in doc["findings"]
        if f["severity"] == "error" and "suppressed" not in f
    ]


def shown(text: str) -> dict[str, str]:
    """The text report's findings: each object's name -> what accepts it ("" when nothing)."""
    out: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        words = line.split()
        if line.startswith(("  error ", "  warning ")):
            name = words[3].split("/")[-1]  # severity, file:line, kind, [namespace/]name
            out[name] = ""
        elif name and line.startswith("          ") and words[0] in ("baselined", "suppressed"):
            out[name] = words[0]
    return out


def test_a_baseline_adopts_the_estate_and_only_new_findings_fail(estate: Path) -> None:
    file = estate / "kueue-gitops-baseline.yaml"
    code, doc = report(estate)
    assert code == 1
    assert sorted(counted(doc)) == [
        ("capacity-exceeded", "team-a-cq"),
        ("field-of-other-version", "old-q"),
    ]

    missing = validate(estate, "--baseline", str(file))
    assert missing.exit_code == 2
    assert f"{file}: no such baseline" in missing.stderr and "--write-baseline" in missing.stderr

    # Day one: record what the estate has; the run passes, and so does the next.
    written = validate(estate, "--baseline", str(file), "--write-baseline")
    assert written.exit_code == 0, written.output
    assert f"baseline {file} written: 2 finding(s) recorded" in written.stdout
    entries = yaml.safe_load(file.read_text())
    assert (entries["version"], entries["command"]) == (1, "validate")
    assert [(e["rule"], e["name"], e.get("path")) for e in entries["findings"]] == [
        (
            "capacity-exceeded",
            "team-a-cq",
            "spec.resourceGroups[0].flavors[1].resources[2].nominalQuota",
        ),
        ("field-of-other-version", "old-q", "spec.cohort"),
    ]
    assert all("line" not in e and e["message"] for e in entries["findings"])
    git(estate, "add", "-A")
    git(estate, "commit", "-q", "-m", "adopt kueue-gitops with a baseline")
    code, doc = report(estate, "--baseline", str(file))
    assert (code, doc["status"], counted(doc)) == (0, "clean", [])
    assert doc["baseline"] == {"file": str(file), "baselined": 2, "absent": 0, "written": False}
    states = {f["name"]: f["baselineState"] for f in doc["findings"]}
    assert states == {"team-a-cq": "unchanged", "old-q": "unchanged", "kueue-manager-config": "new"}

    # Edits that change no finding: comments and lines above it, the queue moved to a new file.
    queues = estate / CQS
    text = queues.read_text()
    cut = text.index(
        "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata:\n  name: old-q"
    )
    queues.write_text("# The platform's queues.\n\n\n" + text[:cut])
    (estate / "clusters/gpu-prod/legacy-queues.yaml").write_text(text[cut:])
    code, doc = report(estate, "--baseline", str(file))
    assert (code, doc["baseline"]["baselined"]) == (0, 2)
    moved = next(f for f in doc["findings"] if f["name"] == "old-q")
    assert moved["file"] == "clusters/gpu-prod/legacy-queues.yaml"
    entry = file.read_text().splitlines().index("- rule: field-of-other-version") + 1
    assert moved["suppressed"]["source"] == f"{file}:{entry}"  # where the file holds it

    # A commit that adds a new problem fails, naming only the new one.
    (estate / "clusters/gpu-prod/legacy-queues.yaml").write_text(
        text[cut:] + half_migrated("newer-q")
    )
    code, doc = report(estate, "--baseline", str(file))
    assert (code, doc["status"]) == (1, "findings")
    assert counted(doc) == [("field-of-other-version", "newer-q")]
    assert [f["name"] for f in doc["findings"] if f["baselineState"] == "new"] == [
        "kueue-manager-config",  # suppressed by its annotation, not by the baseline
        "newer-q",
    ]
    plain = validate(estate, "--baseline", str(file))
    assert plain.exit_code == 1
    assert "validate: findings: 1 error(s), 0 warning(s), 1 suppressed, 2 baselined" in plain.stdout
    # The new one is shown among none of the baselined ones: they are one line of counts.
    assert shown(plain.stdout) == {"kueue-manager-config": "suppressed", "newer-q": ""}
    assert (
        "baselined: 2 finding(s): capacity-exceeded 1, field-of-other-version 1 (-v lists them)"
        in plain.stdout
    )
    listed = validate(estate, "--baseline", str(file), "-v")
    assert shown(listed.stdout) == {
        "kueue-manager-config": "suppressed",
        "team-a-cq": "baselined",
        "old-q": "baselined",
        "newer-q": "",
    }
    assert "baselined: 2 finding(s)" not in listed.stdout

    # The new one fixed, and an old one too: the baseline says an entry matches nothing now.
    (estate / "clusters/gpu-prod/legacy-queues.yaml").write_text(
        text[cut:].replace("  cohort: ai-shared", "  cohortName: ai-shared")
    )
    code, doc = report(estate, "--baseline", str(file))
    assert (code, doc["baseline"]["baselined"], doc["baseline"]["absent"]) == (0, 1, 1)
    plain = validate(estate, "--baseline", str(file))
    assert f"baseline {file}: 1 finding(s) baselined; 1 entry matches nothing now" in plain.stdout

    # Writing it again drops the fixed entry, and says so.
    again = validate(estate, "--baseline", str(file), "--write-baseline")
    assert again.exit_code == 0
    assert "1 finding(s) recorded; 1 entry that matched nothing dropped" in again.stdout
    assert [e["name"] for e in yaml.safe_load(file.read_text())["findings"]] == ["team-a-cq"]
    code, doc = report(estate, "--baseline", str(file))
    assert (code, doc["baseline"]["baselined"], doc["baseline"]["absent"]) == (0, 1, 0)


@pytest.mark.parametrize(
    ("output", "baselined"),
    [
        ("text", "baselined ({file}:"),
        ("markdown", "| baselined error | gpu-prod | quota |"),
        (
            "github",
            "::notice file=clusters/gpu-prod/clusterqueues.yaml,line=39,title=capacity-exceeded",
        ),
    ],
)
def test_every_format_marks_a_baselined_finding(estate: Path, output: str, baselined: str) -> None:
    file = estate / "b.yaml"
    validate(estate, "--baseline", str(file), "--write-baseline")
    result = validate(estate, "--baseline", str(file), "-o", output, "-v")  # text: -v lists them
    assert result.exit_code == 0
    assert baselined.format(file=file) in result.stdout


def test_sarif_carries_the_baseline_state(estate: Path) -> None:
    file = estate / "b.yaml"
    validate(estate, "--baseline", str(file), "--write-baseline")
    queues = estate / CQS
    queues.write_text(queues.read_text() + half_migrated("newer-q"))
    result = validate(estate, "--baseline", str(file), "-o", "sarif")
    assert result.exit_code == 1
    [run] = json.loads(result.stdout)["runs"]
    states = {
        (r["ruleId"], r["baselineState"], tuple(s["kind"] for s in r.get("suppressions", [])))
        for r in run["results"]
    }
    assert states == {
        ("capacity-exceeded", "unchanged", ("external",)),
        ("field-of-other-version", "unchanged", ("external",)),
        ("field-of-other-version", "new", ()),
        ("kueue-config-unmanaged-jobs", "new", ("inSource",)),
    }
    assert run["properties"]["baseline"] == {
        "file": str(file),
        "baselined": 2,
        "absent": 0,
        "written": False,
    }
    xml = JUnitXml.fromstring(validate(estate, "--baseline", str(file), "-o", "junit").stdout)
    [case] = [c for suite in xml for c in suite if c.classname == "capacity-exceeded"]
    assert isinstance(case.result[0], Skipped) and case.result[0].message == "baselined"


@pytest.mark.parametrize(
    ("text", "line", "why"),
    [
        ("version: 1\ncommand: validate\nfindings:\n  - rule: x\n   name: y\n", 5, "not YAML"),
        ("version: 9\ncommand: validate\nfindings: []\n", 1, "baseline version 9"),
        ("version: 1\ncommand: drift\nfindings: []\n", 2, "a baseline of `drift`"),
    ],
    ids=["syntax", "version", "command"],
)
def test_a_bad_baseline_is_exit_2_naming_file_and_line(
    estate: Path, text: str, line: int, why: str
) -> None:
    file = estate / "b.yaml"
    file.write_text(text)
    for args in ([], ["--write-baseline"]):  # never written over either
        result = validate(estate, "--baseline", str(file), *args)
        assert result.exit_code == 2
        assert f"{file}:{line}: " in result.stderr and why in result.stderr
        assert file.read_text() == text


def test_write_baseline_needs_the_file(estate: Path) -> None:
    result = validate(estate, "--write-baseline")
    assert result.exit_code == 2 and "--write-baseline needs --baseline FILE" in result.stderr


def test_a_run_over_one_cluster_keeps_the_other_clusters_entries(estate: Path) -> None:
    file = estate / "b.yaml"
    staging = estate / "clusters/gpu-staging/clusterqueues.yaml"
    staging.write_text(staging.read_text() + half_migrated("staging-old-q"))
    assert validate(estate, "--baseline", str(file), "--write-baseline").exit_code == 0
    before = {e["name"] for e in yaml.safe_load(file.read_text())["findings"]}
    assert before == {"team-a-cq", "old-q", "staging-old-q"}
    queues = estate / CQS
    queues.write_text(queues.read_text().replace("  cohort: ai-shared", "  cohortName: ai-shared"))
    code, doc = report(estate, "--cluster", "gpu-prod", "--baseline", str(file))
    assert (code, doc["baseline"]["absent"]) == (0, 1)  # old-q's; gpu-staging's is not judged
    validate(estate, "--cluster", "gpu-prod", "--baseline", str(file), "--write-baseline")
    after = {e["name"] for e in yaml.safe_load(file.read_text())["findings"]}
    assert after == {"team-a-cq", "staging-old-q"}


def test_the_installed_wheel_adopts_a_repository_with_a_baseline(
    base_install: Path, tmp_path: Path
) -> None:
    """As a platform team runs it: the released wheel, a git repository of its own (the
    baseline's folder made as it is written)."""
    repo = user_repo(tmp_path / "platform")
    queues = repo / CQS
    queues.write_text(queues.read_text() + half_migrated("old-q"))
    installed.git(repo, "init", "-q", "-b", "main")
    installed.git(repo, "add", ".")
    installed.git(repo, "commit", "-qm", "the estate")
    cli, file = str(base_install), ".kueue-gitops/validate-baseline.yaml"
    assert installed.run([cli, "validate"], repo).returncode == 1
    adopted = installed.run([cli, "validate", "--baseline", file, "--write-baseline"], repo)
    assert adopted.returncode == 0, adopted.stdout + adopted.stderr
    installed.git(repo, "add", ".")
    installed.git(repo, "commit", "-qm", "adopt kueue-gitops")
    assert installed.run([cli, "validate", "--baseline", file], repo).returncode == 0
    queues.write_text(queues.read_text() + half_migrated("newer-q"))
    checked = installed.run([cli, "validate", "--baseline", file, "-o", "json"], repo)
    assert checked.returncode == 1
    assert counted(json.loads(checked.stdout)) == [("field-of-other-version", "newer-q")]


def test_a_run_that_left_a_folder_unrendered_writes_no_baseline(estate: Path) -> None:
    """A remote base is never fetched, so the folder's objects are not checked: a baseline
    written now would accept that for good, and miss what the folder holds."""
    folder = estate / "tenants/team-a/gpu-prod"
    (folder / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources:\n  - https://github.com/example-org/queues//base?ref=v1\n"
    )
    file = estate / "b.yaml"
    refused = validate(estate, "--baseline", str(file), "--write-baseline")
    assert refused.exit_code == 2
    assert f"{file} not written: 1 finding(s) say part of the run was not checked" in (
        refused.stderr
    )
    assert "render-remote-base at tenants/team-a/gpu-prod/kustomization.yaml" in refused.stderr
    assert not file.exists()


def test_a_baselined_sum_grown_further_over_is_new(estate: Path) -> None:
    """The estate promised 80 a100 GPUs on 32 (48 over) when it adopted the tool; team-b's queue
    raised from 16 to 24 takes it to 56 over: the same finding, worse, fails. Lowered, it passes."""
    file = estate / "b.yaml"
    assert validate(estate, "--baseline", str(file), "--write-baseline").exit_code == 0
    [entry] = [e for e in yaml.safe_load(file.read_text())["findings"] if e["name"] == "team-a-cq"]
    assert (entry["severity"], entry["measured"]) == ("error", 48)
    queues = estate / CQS
    text = queues.read_text()
    team_b = text.index("name: team-b-cq")
    raised = text[:team_b] + text[team_b:].replace('nominalQuota: "16"', 'nominalQuota: "24"', 1)
    queues.write_text(raised)
    code, doc = report(estate, "--baseline", str(file))
    assert (code, counted(doc)) == (1, [("capacity-exceeded", "team-a-cq")])
    [worse] = [f for f in doc["findings"] if f["rule"] == "capacity-exceeded"]
    assert (worse["measured"], worse["baselineState"]) == (56, "new")
    queues.write_text(text.replace('nominalQuota: "64"', 'nominalQuota: "56"', 1))
    code, doc = report(estate, "--baseline", str(file))
    assert (code, counted(doc)) == (0, [])
