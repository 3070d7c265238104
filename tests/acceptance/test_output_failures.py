"""Output that cannot be written, as a user's shell meets it: the console script in a process of
its own, its report on a full or closed stdout, its files on a full disk (a size limit:
tests/full_disk.py). Each ends with exit 3 and one line on stderr, never a traceback, never
exit 1 ("findings"), and the file that was there before stays whole."""

from __future__ import annotations

import os
import subprocess
import sys
import typing as t
from pathlib import Path

import pytest

from tests.estate import ESTATE
from tests.full_disk import limited

LIMIT = 64  # bytes: no output of these commands fits


def kueue_gitops(*args: str, **kw: t.Any) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "auditor", "--repo", str(ESTATE), *args]
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(argv, stderr=subprocess.PIPE, text=True, check=False, timeout=300, **kw)


def assert_one_error(run: subprocess.CompletedProcess[str], said: str) -> None:
    assert "Traceback" not in run.stderr, run.stderr
    assert run.stderr.splitlines() == [f"Error: {said}"], run.stderr
    assert run.returncode == 3, run.stderr


def test_a_report_on_a_full_stdout_is_exit_3_in_one_line() -> None:
    with open("/dev/full", "w") as full:
        run = kueue_gitops("validate", "-q", stdout=full)
    assert_one_error(run, "cannot write the report to stdout: No space left on device")


def test_a_report_on_a_closed_stdout_is_exit_3_in_one_line() -> None:
    run = kueue_gitops("validate", "-q", stdout=None, preexec_fn=lambda: os.close(1))
    assert_one_error(run, "cannot write the report to stdout: stdout is closed")


def test_a_report_into_a_pipe_whose_reader_left_is_exit_3_in_one_line() -> None:
    reader, writer = os.pipe()
    os.close(reader)  # as `kueue-gitops validate | head -0` leaves it
    try:
        run = kueue_gitops("validate", "-q", stdout=writer)
    finally:
        os.close(writer)
    assert_one_error(run, "cannot write the report to stdout: Broken pipe")


def test_a_line_on_a_full_stdout_after_the_file_is_written_is_exit_3(tmp_path: Path) -> None:
    out = tmp_path / "trace.json"
    with open("/dev/full", "w") as full:
        run = kueue_gitops("trace", "generate", "--cluster", "gpu-prod", "--out", str(out),
                           stdout=full)  # fmt: skip
    assert_one_error(run, "could not write: No space left on device")
    assert out.stat().st_size > 0


@pytest.fixture
def previous(tmp_path: Path) -> t.Callable[[str, str], Path]:
    """A file a run wrote before (`args` run without a limit), named `name`."""

    def make(name: str, *args: str) -> Path:
        first = kueue_gitops(*(a.replace("FILE", str(tmp_path / name)) for a in args))
        assert first.returncode == 0, first.stderr
        return tmp_path / name

    return make


TRACE = ("trace", "generate", "--cluster", "gpu-prod", "--out", "FILE")
CASES = {
    "trace": ("trace.json", "the trace", TRACE),
    "metrics": ("validate.prom", "metrics", ("validate", "-q", "--metrics-file", "FILE")),
    "baseline": (
        "b.yaml",
        "the baseline",
        ("validate", "-q", "--baseline", "FILE", "--write-baseline"),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_file_on_a_full_disk_is_exit_3_and_the_previous_one_stays_whole(
    previous: t.Callable[..., Path], case: str
) -> None:
    name, what, args = CASES[case]
    path = previous(name, *args)
    before = path.read_bytes()
    argv = [a.replace("FILE", str(path)) for a in args]
    run = kueue_gitops(*argv, preexec_fn=limited(LIMIT))
    assert_one_error(run, f"{path}: cannot write {what}: File too large")
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [name]


def test_a_device_named_as_the_output_is_written_never_replaced() -> None:
    run = kueue_gitops("trace", "generate", "--cluster", "gpu-prod", "--out", "/dev/full")
    assert_one_error(run, "/dev/full: cannot write the trace: No space left on device")
    assert Path("/dev/full").is_char_device()
