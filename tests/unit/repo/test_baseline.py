"""The baseline (auditor/repo/baseline.py): fingerprints that survive edits which change no
finding, counts, the file's round trip, and a bad file named by its line."""

from __future__ import annotations

import dataclasses
import datetime
from pathlib import Path

import pytest

from auditor import rules
from auditor.errors import ConfigError
from auditor.model import ClusterResult, Finding, Report, Suppression
from auditor.repo import baseline

CAPACITY = rules.get("capacity-exceeded")
QUOTA = "spec.resourceGroups[0].flavors[1].resources[2].nominalQuota"


def over(**kw: object) -> Finding:
    """capacity-exceeded on a ClusterQueue's GPU quota, as validate raises it."""
    fields: dict[str, object] = {
        "message": "a100/nvidia.com/gpu adds up to 80, more than 32",
        "cluster": "gpu-prod",
        "api_version": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "name": "team-a-cq",
        "file": "clusters/gpu-prod/clusterqueues.yaml",
        "line": 39,
        "path": QUOTA,
    }
    fields.update(kw)
    return Finding(CAPACITY, **fields)  # type: ignore[arg-type]


def report(*findings: Finding, clusters: tuple[str, ...] = ("gpu-prod",)) -> Report:
    return Report("validate", list(findings), [ClusterResult(c) for c in clusters])


def recorded(*findings: Finding) -> baseline.Baseline:
    """The baseline a --write-baseline run of `findings` writes, as a later run reads it."""
    text = baseline.render(baseline.record(report(*findings), None, "b.yaml"))
    return baseline.parse(text, "b.yaml", "validate")


def states(run: Report) -> list[str]:
    return ["unchanged" if f.suppressed else "new" for f in run.findings]


# -- fingerprints -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "moved",
    [
        {"line": 120},  # lines inserted above it, or the file reformatted
        {"file": "clusters/gpu-prod/queues/team-a.yaml", "line": 3},  # moved to another file
        {"api_version": "kueue.x-k8s.io/v1beta1"},  # written to another version of the kind
    ],
    ids=["line", "file", "version"],
)
def test_an_edit_that_changes_no_finding_keeps_it_baselined(moved: dict[str, object]) -> None:
    run = report(over(**moved))
    summary = baseline.apply(run, recorded(over()))
    assert (states(run), summary.baselined, summary.absent) == (["unchanged"], 1, 0)
    assert run.exit_code == 0


def test_the_message_is_not_part_of_the_fingerprint() -> None:
    """A quota still over capacity, by another amount, is the same problem."""
    later = dataclasses.replace(over(), message="a100/nvidia.com/gpu adds up to 96, more than 32")
    assert later.fingerprint == over().fingerprint


@pytest.mark.parametrize(
    "changed",
    [
        {"path": "spec.resourceGroups[0].flavors[2].resources[2].nominalQuota"},  # another quota
        {"name": "team-c-cq"},  # another object
        {"cluster": "gpu-staging"},  # the same object on another cluster
        {"kind": "Cohort"},
    ],
    ids=["quota-path", "object", "cluster", "kind"],
)
def test_a_finding_about_something_else_is_new(changed: dict[str, object]) -> None:
    run = report(over(**changed), clusters=("gpu-prod", "gpu-staging"))
    summary = baseline.apply(run, recorded(over()))
    assert states(run) == ["new"]
    assert (summary.baselined, summary.absent) == (0, 1)
    assert run.exit_code == 1


def test_a_finding_about_a_file_rather_than_an_object_is_known_by_its_file() -> None:
    syntax = rules.get("yaml-syntax")
    first = Finding(syntax, "could not parse", file="tenants/team-a/gpu-prod/lq.yaml", line=3)
    other = dataclasses.replace(first, file="tenants/team-b/gpu-prod/lq.yaml")
    assert dataclasses.replace(first, line=9).fingerprint == first.fingerprint
    assert other.fingerprint != first.fingerprint


# -- counts -------------------------------------------------------------------------------------


def test_a_second_finding_alike_is_new_since_the_baseline_counts() -> None:
    """Two objects named alike in two tenant folders: one was there at adoption, one is new."""
    run = report(over(), over(file="tenants/team-b/gpu-prod/cq.yaml"))
    summary = baseline.apply(run, recorded(over()))
    assert states(run) == ["unchanged", "new"]
    assert (summary.baselined, run.exit_code) == (1, 1)


def test_findings_alike_are_one_entry_with_their_count() -> None:
    twice = recorded(over(), over(line=80))
    [entry] = twice.entries
    assert entry.count == 2
    run = report(over(), over(line=80), over(line=99))
    assert baseline.apply(run, twice).baselined == 2
    assert states(run) == ["unchanged", "unchanged", "new"]
    assert "count: 2" in baseline.render(twice)
    fewer = report(over())
    assert baseline.apply(fewer, twice).absent == 1  # one of the two was fixed


# -- what the baseline leaves alone -------------------------------------------------------------


def test_a_suppressed_finding_is_neither_recorded_nor_matched() -> None:
    """Its suppression expires: a baseline entry must not outlive that date for it."""
    accepted = Suppression("the cohort grows in Q1", datetime.date(2999, 1, 31), "cq.yaml:5")
    suppressed = dataclasses.replace(over(), suppressed=accepted)
    assert baseline.record(report(suppressed), None, "b.yaml").entries == ()
    run = report(dataclasses.replace(over(), suppressed=accepted))
    summary = baseline.apply(run, recorded(over()))
    assert run.findings[0].suppressed == accepted
    assert (summary.baselined, summary.absent) == (0, 1)


def test_a_run_over_some_clusters_neither_counts_nor_drops_the_others_entries(
    tmp_path: Path,
) -> None:
    file = tmp_path / "b.yaml"
    both = report(over(), over(cluster="gpu-staging"), clusters=("gpu-prod", "gpu-staging"))
    baseline.rewrite(both, file, None)
    previous = baseline.read(file, "validate")
    prod_fixed = report()  # validate --cluster gpu-prod, its finding fixed
    assert baseline.apply(prod_fixed, previous, partial=True).absent == 1
    staging_only = report(clusters=("gpu-staging",))
    assert baseline.apply(staging_only, previous, partial=True).absent == 1  # gpu-staging's
    baseline.rewrite(report(), file, previous, partial=True)
    [kept] = baseline.read(file, "validate").entries
    assert kept.fingerprint.cluster == "gpu-staging"


def test_a_cluster_read_incompletely_keeps_its_entries() -> None:
    """drift could not LIST a kind there: what it did not see is not fixed."""
    run = Report("validate", [], [ClusterResult("gpu-prod", "incomplete", ["LIST forbidden"])])
    assert baseline.apply(run, recorded(over())).absent == 0
    with pytest.raises(ValueError, match="complete run"):
        baseline.rewrite(run, Path("never-written.yaml"), None)
    assert not Path("never-written.yaml").exists()


# -- the file -----------------------------------------------------------------------------------


def test_the_file_round_trips_sorted_and_stable(tmp_path: Path) -> None:
    found = [
        over(name="team-b-cq", message="b: over"),
        over(cluster="gpu-staging", namespace=None),
        over(message="x" * 400),
        Finding(rules.get("stray-manifest"), "synced nowhere", file="tenants/a/x.yaml", line=1),
    ]
    first = baseline.record(report(*found), None, "b.yaml")
    again = baseline.record(report(*reversed(found)), None, "b.yaml")
    text = baseline.render(first)
    assert text == baseline.render(again)  # the same findings, the same bytes
    assert (
        text.startswith("# kueue-gitops baseline") and "\nversion: 1\ncommand: validate\n" in text
    )
    read = baseline.parse(text, "b.yaml", "validate")
    assert [(e.fingerprint, e.count, e.message) for e in read.entries] == [
        (e.fingerprint, e.count, e.message) for e in first.entries
    ]
    assert [e.fingerprint.cluster or "" for e in read.entries] == [
        "",
        *["gpu-prod"] * 2,
        "gpu-staging",
    ]
    assert max(len(e.message) for e in read.entries) == baseline.MESSAGE_CHARS
    lines = text.splitlines()
    assert all(lines[e.line - 1].startswith("- rule: ") for e in read.entries)

    written = baseline.write(tmp_path / "b.yaml", first)
    assert (tmp_path / "b.yaml").read_text() == text
    assert written.entries == baseline.read(tmp_path / "b.yaml", "validate").entries
    assert [p.name for p in tmp_path.iterdir()] == ["b.yaml"]  # nothing left aside


def test_a_finding_about_an_object_of_the_core_api_round_trips(tmp_path: Path) -> None:
    """The core API's group is '' (a ConfigMap: Kueue's Configuration, as every import has it):
    written, read back and matched, where the empty group once refused the whole file."""
    config = Finding(
        rules.get("kueue-config-unmanaged-jobs"),
        "Kueue holds Jobs without a queue name in every namespace",
        cluster="gpu-a",
        api_version="v1",
        kind="ConfigMap",
        namespace="kueue-system",
        name="kueue-manager-config",
        file="clusters/gpu-a/kueue/manager-config.yaml",
        line=4,
    )
    written = baseline.write(tmp_path / "b.yaml", baseline.record(report(config), None, "b"))
    assert [e.fingerprint.group for e in written.entries] == [""]
    run = report(dataclasses.replace(config, line=9))
    baseline.apply(run, baseline.read(tmp_path / "b.yaml", "validate"))
    assert states(run) == ["unchanged"]


def test_a_baselined_finding_says_where_its_entry_is() -> None:
    run = report(over())
    baseline.apply(run, recorded(over(name="a-first"), over()))
    accepted = run.findings[0].suppressed
    assert accepted is not None and accepted.baselined and accepted.expires is None
    # the header (3), version, command, findings, entry 1 (its fingerprint, severity, message)
    assert accepted.source == "b.yaml:15"


def test_rewriting_drops_what_went_away_and_says_how_many(tmp_path: Path) -> None:
    file = tmp_path / "b.yaml"
    baseline.rewrite(report(over(), over(name="team-b-cq")), file, None)
    run = report(over(line=7))
    summary = baseline.rewrite(run, file, baseline.read(file, "validate"))
    assert (summary.baselined, summary.absent, summary.written) == (1, 1, True)
    assert [e.fingerprint.name for e in baseline.read(file, "validate").entries] == ["team-a-cq"]
    assert run.exit_code == 0


BAD = [
    ("version: 1\ncommand: validate\nfindings: [\n", 4, "not YAML"),
    ("- just a list\n", 1, "a mapping of version"),
    ("version: 2\ncommand: validate\nfindings: []\n", 1, "baseline version 2 is not one"),
    ("command: validate\nfindings: []\n", 1, "no version"),
    ("version: 1\ncommand: drift\nfindings: []\n", 2, "a baseline of `drift`"),
    ("version: 1\ncommand: validate\nentries: []\n", 3, "unknown key 'entries'"),
    ("version: 1\ncommand: validate\nfindings: {}\n", 3, "findings: a list"),
    ("version: 1\ncommand: validate\nfindings:\n- {name: x}\n", 4, "without a rule"),
    ("version: 1\ncommand: validate\nfindings:\n- {rule: r, count: 0}\n", 4, "count must be"),
    ("version: 1\ncommand: validate\nfindings:\n- {rule: r, colour: red}\n", 4, "'colour'"),
    ("version: 1\ncommand: validate\nfindings:\n- {rule: r, name: [a]}\n", 4, "single value"),
    (
        "version: 1\ncommand: validate\nfindings:\n- {rule: r, name: a}\n- {rule: r, name: a}\n",
        5,
        "the same finding as the entry on line 4",
    ),
]


@pytest.mark.parametrize(("text", "line", "why"), BAD, ids=[b[2] for b in BAD])
def test_a_bad_file_is_a_configuration_error_at_its_line(text: str, line: int, why: str) -> None:
    with pytest.raises(ConfigError) as caught:
        baseline.parse(text, "adopt/b.yaml", "validate")
    assert str(caught.value).startswith(f"adopt/b.yaml:{line}: ")
    assert why in str(caught.value)
    assert caught.value.exit_code == 2


def test_a_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"no such baseline.*--write-baseline"):
        baseline.read(tmp_path / "none.yaml", "validate")


def test_a_baseline_that_cannot_be_written_is_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the folder would be\n")
    with pytest.raises(ConfigError, match=r"taken/b.yaml: cannot write the baseline"):
        baseline.write(tmp_path / "taken" / "b.yaml", recorded(over()))
    baseline.write(tmp_path / "new" / "folder" / "b.yaml", recorded(over()))  # made as needed
    assert len(baseline.read(tmp_path / "new/folder/b.yaml", "validate").entries) == 1


# -- what a baseline never hides ----------------------------------------------------------------

UNRENDERED = Finding(
    rules.get("renderer-unavailable"),
    "kustomize v5.7.1 is not installed",
    cluster="gpu-prod",
    file="tenants/team-a/gpu-prod/kustomization.yaml",
    line=1,
)


def test_a_finding_that_means_not_checked_is_never_recorded() -> None:
    """A runner without the renderer would baseline renderer-unavailable itself, and the
    overlay would never be checked there again."""
    assert rules.get("renderer-unavailable").unchecked
    written = baseline.record(report(UNRENDERED, over()), None, "b.yaml")
    assert [e.fingerprint.rule for e in written.entries] == ["capacity-exceeded"]


def test_an_entry_for_a_not_checked_finding_accepts_nothing() -> None:
    """One written by hand, or by an older release, still does not hide it."""
    entry = f"- {{rule: renderer-unavailable, cluster: gpu-prod, file: {UNRENDERED.file}}}\n"
    held = baseline.parse(f"version: 1\ncommand: validate\nfindings:\n{entry}", "b", "validate")
    run = report(dataclasses.replace(UNRENDERED))
    baseline.apply(run, held)
    assert (states(run), run.exit_code) == (["new"], 1)


def test_writing_refuses_a_run_that_left_something_unchecked(tmp_path: Path) -> None:
    file = tmp_path / "b.yaml"
    with pytest.raises(ConfigError) as caught:
        baseline.rewrite(report(over(), UNRENDERED), file, None)
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert message.startswith(f"{file} not written: 1 finding(s) say part of the run")
    assert f"renderer-unavailable at {UNRENDERED.file}:1: kustomize v5.7.1" in message
    assert not file.exists()


def test_writing_refuses_an_incomplete_run(tmp_path: Path) -> None:
    run = report(over())
    run.clusters[0].status = "incomplete"
    with pytest.raises(ValueError, match="only from a complete run"):
        baseline.rewrite(run, tmp_path / "b.yaml", None)
    assert not (tmp_path / "b.yaml").exists()


# -- worse is new -------------------------------------------------------------------------------

BORROWING = rules.get("borrowing-over-lendable")


def borrowing(limit: int, lendable: int = 48) -> Finding:
    """borrowing-over-lendable as the quotas check raises it: measured, how far over."""
    return Finding(
        BORROWING,
        f"borrowingLimit {limit} of a100/nvidia.com/gpu is more than the rest of cohort ai "
        f"can ever lend ({lendable})",
        cluster="gpu-prod",
        api_version="kueue.x-k8s.io/v1beta2",
        kind="ClusterQueue",
        name="team-a-cq",
        path="spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit",
        extra={"measured": limit - lendable},
    )


def test_a_baselined_finding_grown_worse_is_new() -> None:
    """A borrowingLimit 64 -> 96 beyond what the cohort lends: the same fingerprint, worse."""
    assert borrowing(96).fingerprint == borrowing(64).fingerprint
    held = recorded(borrowing(64))
    assert "measured: 16" in baseline.render(held)
    same, better, worse = report(borrowing(64)), report(borrowing(56)), report(borrowing(96))
    for run in (same, better, worse):
        baseline.apply(run, held)
    assert (states(same), states(better), states(worse)) == (["unchanged"], ["unchanged"], ["new"])
    assert baseline.apply(report(borrowing(64, lendable=32)), held).baselined == 0  # lends less


def test_a_baselined_finding_grown_more_severe_is_new() -> None:
    """An entry recorded as a warning does not accept the same finding as an error."""
    text = baseline.render(baseline.record(report(over()), None, "b.yaml"))
    assert "severity: error" in text
    held = baseline.parse(text.replace("severity: error", "severity: warning"), "b", "validate")
    run = report(over())
    baseline.apply(run, held)
    assert states(run) == ["new"]


def test_an_entry_of_findings_alike_keeps_the_worst_measure() -> None:
    [entry] = recorded(borrowing(64), borrowing(80)).entries
    assert (entry.count, entry.measured, entry.severity) == (2, 32, "warning")
