"""Output files are written whole or not at all: a full disk (a size limit here, see
tests/full_disk.py) leaves the previous file as it was and nothing aside, and is an OutputError
(exit 3); a device is written in place, never replaced. Each command's writer goes through it:
the timeline, the metrics textfile, the baseline, a trace, a Workload snapshot."""

from __future__ import annotations

import os
import stat
import typing as t
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.model import Report
from auditor.replay import timeline
from auditor.replay import trace as replay_trace
from auditor.replay.trace import Trace, TracedWorkload
from auditor.repo import baseline
from auditor.repo.outfile import OutputError, write_whole
from auditor.report import metrics
from auditor.runbook import export
from tests.full_disk import file_size_limit

PREVIOUS = "# what the last run wrote\n"  # a comment in every format read back
BIG = "x" * 4096
LIMIT = 64  # past the previous file, short of any new one


def previous(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text(PREVIOUS)
    return path


def assert_kept(path: Path) -> None:
    """The previous file whole, and nothing left beside it."""
    assert path.read_text() == PREVIOUS
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_a_full_disk_leaves_the_previous_file_whole_and_nothing_aside(tmp_path: Path) -> None:
    path = previous(tmp_path, "out.txt")
    full = pytest.raises(OutputError, match=r"out\.txt: cannot write the thing: File too large")
    with full, file_size_limit(LIMIT):
        write_whole(path, BIG, what="the thing")
    assert OutputError.exit_code == 3
    assert_kept(path)
    write_whole(path, BIG, what="the thing")
    assert path.read_text() == BIG


def test_a_device_is_written_in_place_and_never_replaced_by_a_file() -> None:
    with pytest.raises(OutputError, match="/dev/full: cannot write the thing: No space left"):
        write_whole(Path("/dev/full"), "text\n", what="the thing")
    assert Path("/dev/full").is_char_device()
    write_whole(Path("/dev/null"), "text\n", what="the thing")
    assert Path("/dev/null").is_char_device()


def test_a_path_named_wrongly_is_the_users_to_fix(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where the folder would be\n")
    with pytest.raises(ConfigError, match=r"taken/out\.txt: cannot write the thing: Not a dir"):
        write_whole(tmp_path / "taken" / "out.txt", "text\n", what="the thing")


def test_a_rewritten_file_keeps_its_permissions_and_a_symlink_stays_one(tmp_path: Path) -> None:
    real = previous(tmp_path, "real.prom")
    real.chmod(0o644)  # a textfile collector running as another user reads it
    (tmp_path / "link.prom").symlink_to(real)
    umask = os.umask(0o077)
    try:
        write_whole(tmp_path / "link.prom", "new\n", what="metrics")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    assert (tmp_path / "link.prom").is_symlink() and real.read_text() == "new\n"


def test_exclusive_never_replaces_a_file(tmp_path: Path) -> None:
    path = previous(tmp_path, "snapshot.json")
    with pytest.raises(FileExistsError):
        write_whole(path, BIG, what="the snapshot", exclusive=True)
    assert_kept(path)


# -- each writer -------------------------------------------------------------------------------


def _timeline() -> timeline.Timeline:
    rows = 200  # a file of some kilobytes
    series = timeline.Series(
        "head", "team-a/batch", "team-a", [1] * rows, [0] * rows, [1] * rows, [0] * rows,
        [2.0] * rows,
    )  # fmt: skip
    return timeline.Timeline(60.0, [60.0 * i for i in range(rows)], [series], {}, {})


def _trace() -> Trace:
    workloads = [TracedWorkload(f"team-a-{i}", "batch", None, {"cpu": "1"}, 1, i, 60.0)
                 for i in range(100)]  # fmt: skip
    return Trace("gpu-prod", {"source": "synthetic", "seconds": 3600}, workloads)


def _snapshot() -> dict[str, t.Any]:
    return {"cluster": "gpu-prod", "exportedAt": "2026-12-06T10:00:00Z", "workloads": [BIG]}


WRITERS: dict[str, tuple[str, t.Callable[[Path], object]]] = {
    "timeline": ("day.csv", lambda path: timeline.write(_timeline(), path)),
    "metrics": ("validate.prom", lambda path: metrics.write_textfile(Report("validate"), path)),
    "baseline": (
        "baseline.yaml",
        lambda path: baseline.write(path, baseline.Baseline(str(path), "validate", ())),
    ),
    "trace": ("trace.json", lambda path: replay_trace.write(_trace(), path)),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_each_writer_on_a_full_disk_is_exit_3_and_keeps_the_previous_file(
    tmp_path: Path, writer: str
) -> None:
    name, write = WRITERS[writer]
    path = previous(tmp_path, name)
    with pytest.raises(OutputError) as failed, file_size_limit(LIMIT):
        write(path)
    assert failed.value.exit_code == 3 and f"{path}: cannot write" in str(failed.value)
    assert_kept(path)
    write(path)  # with room, it is written
    assert path.read_text() != PREVIOUS


def test_a_workload_snapshot_on_a_full_disk_leaves_no_half_file(tmp_path: Path) -> None:
    full = pytest.raises(OutputError, match="cannot write the snapshot: File too large")
    with full, file_size_limit(LIMIT):
        export.write(_snapshot(), tmp_path)
    assert list(tmp_path.iterdir()) == []
    written = export.write(_snapshot(), tmp_path)
    with pytest.raises(ConfigError, match="already exists; a snapshot is never overwritten"):
        export.write(_snapshot(), tmp_path)
    assert written.read_text().endswith("\n")
