"""A full disk, portably and without root: RLIMIT_FSIZE. A write past the limit fails with
EFBIG ("File too large") as a write to a full disk fails with ENOSPC (Python ignores SIGXFSZ,
so the process is not killed), and the limit holds for any file system. Shared by the tests of
output failures (tests/unit/repo/test_outfile.py, tests/acceptance/test_output_failures.py)."""

from __future__ import annotations

import contextlib
import resource
import typing as t


@contextlib.contextmanager
def file_size_limit(nbytes: int) -> t.Iterator[None]:
    """In this process, for the block: no file grows past `nbytes` (nothing else may write
    meanwhile, pytest's own capture files included: keep the block to the call under test)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def limited(nbytes: int) -> t.Callable[[], None]:
    """A subprocess's preexec_fn: the process and its children write no file past `nbytes`."""

    def limit() -> None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))

    return limit
