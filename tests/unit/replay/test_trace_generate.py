"""`trace generate --tenant NS`: the work goes to the namespace's own LocalQueue as the
repository has it (here team-a's is `training`, not `batch`), and a namespace or queue the
cluster lacks is refused (exit 2) naming what there is."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from auditor.cli.main import cli
from auditor.replay import trace

QUEUES = Path("tenants/team-a/gpu-staging/localqueues.yaml")


def generate(root: Path, *tenants: str) -> Result:
    argv = ["--repo", str(root), "trace", "generate", "--cluster", "gpu-staging",
            "--workloads", "12", "--seed", "3", "--out", str(root / "t.json")]  # fmt: skip
    for tenant in tenants:
        argv += ["--tenant", tenant]
    return CliRunner().invoke(cli, argv)


def renamed(repo_copy: Path) -> Path:
    text = (repo_copy / QUEUES).read_text()
    (repo_copy / QUEUES).write_text(text.replace("name: batch", "name: training"))
    return repo_copy


def test_a_tenant_without_a_queue_gets_its_own_queue_from_the_repository(repo_copy: Path) -> None:
    root = renamed(repo_copy)
    result = generate(root, "team-a:batch-low:0.5", "team-b:batch-low:0.5")
    assert result.exit_code == 0, result.output
    made = trace.read(root / "t.json")
    assert {(w.namespace, w.local_queue) for w in made.workloads} == {
        ("team-a", "training"),
        ("team-b", "batch"),
    }


def test_an_unknown_tenant_or_queue_is_refused_naming_what_exists(repo_copy: Path) -> None:
    root = renamed(repo_copy)
    unknown = generate(root, "team-z:batch-low:1")
    assert unknown.exit_code == 2
    assert "namespaces with one: team-a, team-b" in unknown.output
    wrong = generate(root, "team-a/batch:batch-low:1")
    assert wrong.exit_code == 2
    assert "namespace team-a has no LocalQueue batch" in wrong.output
    assert "it has: training" in wrong.output
    assert not (root / "t.json").exists()
