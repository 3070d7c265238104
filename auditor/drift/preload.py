"""Load the repository in a forked process while the drift command imports and reads clusters.

Loading a large repository is pure Python work (~0.4 CPU-s for 6,000 objects) and so is
importing the Kubernetes client; threads would take turns on one core. A child forked before
those imports loads the manifests on the other core and hands them back pickled (a tenth of
the cost). Anything that goes wrong in the child (an error in the repo, a pickling problem, a
crash) makes the parent load the repository itself, so errors surface exactly as without it.

This module imports nothing heavy: the drift command forks before it imports the engine.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import threading
import typing as t

from auditor.repo.layout import Loaded, Repository


class Preload:
    """A repository's manifests being loaded by a child process (or, failing that, here)."""

    def __init__(self, repo: Repository, clusters: list[str]) -> None:
        self.repo, self.clusters = repo, clusters
        self._pid: int | None = None
        self._pipe: int | None = None

    @classmethod
    def start(cls, repo: Repository, clusters: list[str]) -> Preload:
        """Fork the loader when there is a second core, a working tree to read, and no other
        thread (one holding a lock at the fork would leave it held in the child for good)."""
        preload = cls(repo, clusters)
        alone = threading.active_count() == 1
        if alone and (os.cpu_count() or 1) > 1 and hasattr(os, "fork") and repo.root is not None:
            preload._fork()
        return preload

    def _fork(self) -> None:
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: load, send, and leave without running the parent's exit code
            os.close(read_end)
            code = 1
            with contextlib.suppress(BaseException):
                data = pickle.dumps(self.repo.load(self.clusters), pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as out:
                    out.write(data)
                code = 0
            os._exit(code)
        os.close(write_end)
        self._pid, self._pipe = pid, read_end

    def result(self) -> Loaded:
        """The loaded manifests; the tenant profiles are read here meanwhile (drift needs them)."""
        if self._pid is None or self._pipe is None:
            return self.repo.load(self.clusters)
        with contextlib.suppress(Exception):  # a broken profile is reported where it was
            self.repo.tenants  # noqa: B018 - this core is idle until the child answers
        with os.fdopen(self._pipe, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = self._pipe = None
        if status == 0 and data:
            with contextlib.suppress(Exception):
                return t.cast(Loaded, pickle.loads(data))  # our own child's bytes
        return self.repo.load(self.clusters)  # the child failed: load here, errors and all
