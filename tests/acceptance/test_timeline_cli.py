"""`plan replay --timeline FILE`: refused, before anything runs, by a verb that replays nothing,
and for a file that is neither CSV nor JSON Lines (what it writes is
tests/integration/test_replay_sim.py's)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from auditor.cli.main import cli


def test_a_timeline_without_a_replay_is_a_usage_error(tmp_path: Path) -> None:
    argv = ["plan", "diff", "--base", "HEAD", "--timeline", str(tmp_path / "day.csv")]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2
    assert "No such option '--timeline'" in result.stderr
    assert not (tmp_path / "day.csv").exists()


def test_a_timeline_file_of_another_kind_is_refused_before_the_replay(tmp_path: Path) -> None:
    argv = ["plan", "replay", str(tmp_path / "absent-trace.json"), "--base", "HEAD",
            "--timeline", str(tmp_path / "day.xlsx")]  # fmt: skip
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2
    assert "day.xlsx: name a .csv or .jsonl (JSON Lines) file" in result.stderr
    assert "absent-trace" not in result.stderr  # refused before the trace was read
