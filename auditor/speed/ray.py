"""Program runs as Ray tasks: the parallel seam's engine beyond one machine (`--on ray`).

Ray, not a worker protocol of ours: a RayCluster (a RayJob on a Kueue LocalQueue, say) is how
Kueue users already run batch work on many machines (docs/replay.md, "Why Ray"). Each run is one
task of one CPU; `ray.get` gives the results back in the runs' order.

What reaches the workers is Ray's to carry, so they need Ray and Python (the client's versions,
as Ray requires) and nothing of kueue-gitops:
- the task is a closure (`_task`), which Ray's pickler sends by value: no `import auditor`
  on a worker;
- the executable goes once into Ray's object store and to each node that runs a task once,
  where it is kept under its SHA-256 (a node's later runs, and later sweeps of the same
  build, reuse it). The object store, not a runtime_env: it is in every Ray install (a
  runtime_env's working_dir needs the runtime-env agent of `ray[default]`) and keeps the
  executable's bytes as they are.

Only this module imports ray (an import-linter contract), and only when `--on ray` asks.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import socket
import threading
import typing as t
from pathlib import Path

from auditor.errors import ClusterAccessError, ConfigError, SandboxError
from auditor.speed.programs import Finished, Program

CONNECT_DEADLINE = 30.0  # seconds to reach a Ray cluster and join it as a driver
# Ray warns that a join from another thread leaves SIGTERM alone: as it should, it is ours.
logging.getLogger("ray._private.worker").addFilter(
    lambda record: not str(record.msg).startswith("SIGTERM handler is not set")
)
EXTRA = "pip install 'kueue-gitops[ray]'"


def require() -> t.Any:
    """The ray package, or the install line when it is missing (exit 2)."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--on ray needs the 'ray' extra (Ray's client): {EXTRA}") from exc
    return ray


def _host_port(address: str) -> tuple[str, int]:
    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ConfigError(f"--on ray={address}: a Ray address is HOST:PORT or ray://HOST:PORT")
    return host.strip("[]"), int(port)


def _probe(address: str, deadline: float) -> None:
    """A TCP connection to the cluster's port within `deadline`: Ray itself would retry an
    unreachable address for minutes."""
    host, port = _host_port(address)
    try:
        socket.create_connection((host, port), timeout=deadline).close()
    except OSError as exc:
        raise ClusterAccessError(
            f"the Ray cluster at {address} cannot be reached: {exc}", cluster=address
        ) from None


@contextlib.contextmanager
def connected(address: str | None) -> t.Iterator[RayCluster]:
    """This process joined, as a driver, to the Ray cluster at `address` (None: where
    `ray.init()` looks: RAY_ADDRESS, else one `ray start` left on this machine, else a local
    instance started now and stopped at the end); disconnected when the block ends."""
    ray = require()
    named = address or os.environ.get("RAY_ADDRESS") or None
    if named is not None and named not in ("auto", "local"):
        _probe(named, CONNECT_DEADLINE)
    where = named or "a local Ray instance"
    failed: list[Exception] = []

    def join() -> None:
        ours = signal.getsignal(signal.SIGTERM)  # Ray's exits 15; ours 143 (cli/signals.py)
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        except Exception as exc:  # told to the waiting thread (Ctrl-C stays Ctrl-C)
            failed.append(exc)
        finally:
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, ours)

    if named in (None, "local"):
        # an instance started here: in this thread, as Ray wants (from another, the agents it
        # starts outlive ray.shutdown); Ray's own start-up has its timeouts
        join()
        if failed:  # what it started of an instance, stopped
            with contextlib.suppress(Exception):
                ray.shutdown()
    else:  # joined over the network: Ray retries an unanswering port for minutes
        joining = threading.Thread(target=join, name="kueue-gitops-ray-init", daemon=True)
        joining.start()
        joining.join(CONNECT_DEADLINE)
        if joining.is_alive():
            failed.append(TimeoutError(f"no answer within {CONNECT_DEADLINE:.0f} s"))
    if failed:
        raise ClusterAccessError(
            f"could not join the Ray cluster at {where}: {failed[0]}", cluster=where
        ) from None
    try:
        yield RayCluster(ray, where)
    finally:
        ray.shutdown()


class RayCluster:
    """A joined Ray cluster, as an engine of the parallel seam."""

    def __init__(self, ray: t.Any, where: str) -> None:
        self._ray, self.where = ray, where

    def programs(self, runs: t.Sequence[Program]) -> list[Finished]:
        ray = self._ray
        task = ray.remote(num_cpus=1, max_retries=1)(_task())
        shipped: dict[Path, tuple[str, list[t.Any]]] = {}
        for binary in dict.fromkeys(r.binary for r in runs):
            data = binary.read_bytes()
            # in a list, so a task fetches the bytes only on a node that lacks them
            shipped[binary] = (hashlib.sha256(data).hexdigest(), [ray.put(data)])
        pending = [
            task.remote(*shipped[r.binary], r.binary.name, list(r.args), r.stdin, r.timeout)
            for r in runs
        ]
        within = sum(r.timeout for r in runs) + CONNECT_DEADLINE  # even one run at a time
        try:
            got = ray.get(pending, timeout=within)
        except ray.exceptions.GetTimeoutError:
            for ref in pending:
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
            raise SandboxError(
                f"the Ray cluster at {self.where} did not finish {len(runs)} runs within "
                f"{within:.0f} s (are its CPUs all taken?)"
            ) from None
        except ray.exceptions.RayError as exc:
            raise SandboxError(f"a run on the Ray cluster at {self.where} failed: {exc}") from None
        return [Finished(*one) for one in got]


def _task() -> t.Callable[..., tuple[int | None, str, str, float]]:
    """The task a worker runs. A closure, so Ray sends its code by value: it names only the
    standard library and ray, which a worker has."""

    def run(
        digest: str, held: list[t.Any], name: str, args: list[str], stdin: str, timeout: float
    ) -> tuple[int | None, str, str, float]:
        import subprocess
        import tempfile
        import time

        import ray

        kept = os.path.join(tempfile.gettempdir(), "kueue-gitops-programs", digest, name)
        if not os.path.exists(kept):  # first on this node: from the object store, atomically
            os.makedirs(os.path.dirname(kept), exist_ok=True)
            partial = f"{kept}.{os.getpid()}.partial"
            with open(partial, "wb") as out:
                out.write(ray.get(held[0]))
            os.chmod(partial, 0o755)
            os.replace(partial, kept)
        started = time.monotonic()
        try:
            proc = subprocess.run(
                [kept, *args], input=stdin, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return None, "", "", time.monotonic() - started
        return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started

    return run
