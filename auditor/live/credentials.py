"""Credentials: a kubeconfig context, or a pod's ServiceAccount, made into a client.

Everything wrong with the credentials is a ConfigError here (exit 2), before any request: a
missing context, undecodable data, a certificate authority or client key that is not PEM, a
failed exec credential plugin (whose output is never shown: it can hold a token). An exec
plugin runs bounded by the cluster's deadline (PLUGIN_DEADLINE without one): an expired login
waiting for a browser must not hold the run. A missing context and a failed plugin are the
cluster's own (ContextMissing, PluginFailed): over several clusters, that one is incomplete.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import ssl
import subprocess
import threading
import time
import types
import typing as t

from kubernetes import client, config
from kubernetes.config import exec_provider
from kubernetes.config.config_exception import ConfigException

from auditor.errors import ConfigError
from auditor.live import kubeconfigs
from auditor.live.apierrors import DeadlineExceeded

PLUGIN_DEADLINE = 60.0  # seconds an exec credential plugin may take when the cluster has none


class ContextMissing(ConfigError):
    """The kubeconfig has no context of that name (one cluster's problem, not the run's)."""


class PluginFailed(ConfigError):
    """The context's exec credential plugin failed, did not answer in time, or is not there:
    one cluster's problem in a run over several (auditor/drift/audit.py), exit 2 alone."""


def from_kubeconfig(
    name: str, *, kubeconfig: str | None, context: str | None, deadline: float | None
) -> tuple[client.ApiClient, float]:
    """A client for `context` of `kubeconfig` (kubectl's defaults for either left out), and
    when reading began (time.monotonic(): the cluster's deadline counts reading the file)."""
    # $KUBECONFIG as it is now (the client reads it once, when imported), as kubectl would
    given, kubeconfig = kubeconfig, kubeconfig or os.environ.get("KUBECONFIG") or None
    source = given or (f"$KUBECONFIG ({kubeconfig})" if kubeconfig else "~/.kube/config")
    files = [f for f in (kubeconfig or "").split(os.pathsep) if f]
    if files and not any(os.path.exists(f) for f in files):  # kubectl skips only some
        raise ConfigError(
            f"cluster {name}: {'--kubeconfig' if given else '$KUBECONFIG'} names "
            f"{' and '.join(files)}: no such file"
        )
    where = f"context {context or '(current)'} of {source}"
    started = time.monotonic()  # the deadline counts reading the kubeconfig
    try:
        chosen = kubeconfigs.choose(files or [os.path.expanduser("~/.kube/config")], context)
    except kubeconfigs.NoSuchContext as exc:
        raise ContextMissing(f"cluster {name}: no {where}") from exc
    except ConfigError as exc:
        raise ConfigError(f"cluster {name}: {exc}") from exc
    left = None if deadline is None else deadline - (time.monotonic() - started)
    if left is not None and left <= 0:
        raise DeadlineExceeded(
            f"cluster {name}: reading {source} took {time.monotonic() - started:.0f}s, past "
            f"the {deadline:g}s deadline for the cluster (--timeout)",
            cluster=name,
        )
    cfg = t.cast(client.Configuration, type.__call__(client.Configuration))
    _guard_exec_plugins()
    _EXEC_FAILURES.message = None
    _EXEC_FAILURES.seconds = PLUGIN_DEADLINE if left is None else left
    _EXEC_FAILURES.deadline = deadline
    try:
        config.kube_config.KubeConfigLoader(  # type: ignore[no-untyped-call]
            config_dict=chosen.config,
            active_context=chosen.name,
            config_base_path=chosen.base,
        ).load_and_set(cfg)
        _check_tls_files(cfg)
    except (ConfigException, OSError, TypeError, ValueError, AttributeError) as exc:
        raise ConfigError(f"cluster {name}: cannot use {where}: {exc}") from exc
    if _EXEC_FAILURES.message is not None:
        raise PluginFailed(
            f"cluster {name}: the exec credential plugin of {where} failed"
            f"{_EXEC_FAILURES.message}; its output is not shown (it can hold credentials): "
            "run the plugin by hand to see why"
        )
    cfg.retries = False  # before the pool exists, which copies it: our own retries only
    return client.ApiClient(cfg), started


def in_cluster(name: str, *, account_dir: str) -> client.ApiClient:
    """A client as the pod's ServiceAccount: KUBERNETES_SERVICE_HOST/PORT, and the token
    and CA files (`token`, `ca.crt`) in `account_dir`, re-read as kubelet rotates them."""
    cfg = t.cast(client.Configuration, type.__call__(client.Configuration))
    loader = config.incluster_config.InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=os.path.join(account_dir, "token"),
        cert_filename=os.path.join(account_dir, "ca.crt"),
    )
    try:
        loader.load_and_set(cfg)  # type: ignore[no-untyped-call]
        _check_tls_files(cfg)
    except (ConfigException, OSError, ValueError) as exc:
        raise ConfigError(
            f"cluster {name}: cannot use the in-cluster ServiceAccount ({account_dir}): {exc}"
        ) from exc
    cfg.retries = False
    return client.ApiClient(cfg)


def _check_tls_files(cfg: client.Configuration) -> None:
    """Load the CA and the client certificate now: one that is not PEM is the kubeconfig's
    fault (exit 2), not an unreachable cluster (exit 3) at the first request."""
    ca = cfg.ssl_ca_cert if cfg.verify_ssl else None
    try:
        tls = ssl.create_default_context(cafile=ca)
    except ssl.SSLError as exc:
        raise ValueError(
            f"the certificate authority {ca} is not a PEM certificate ({exc})"
        ) from exc
    if cfg.cert_file:
        try:
            tls.load_cert_chain(cfg.cert_file, cfg.key_file)
        except ssl.SSLError as exc:
            raise ValueError(
                f"the client certificate or key is not PEM, or they do not match ({exc})"
            ) from exc


class _ExecFailures(threading.local):
    message: str | None = None
    seconds: float = PLUGIN_DEADLINE  # how long the connecting thread's exec plugin may run
    deadline: float | None = None  # the cluster's whole deadline, as --timeout said it


_EXEC_FAILURES = _ExecFailures()


def _hide_exec_plugin_output(record: logging.LogRecord) -> bool:
    """The client logs a failed exec credential plugin with the plugin's stderr, which can hold
    a token: drop the record, and leave the connecting thread a note without it."""
    if record.funcName != "_load_from_exec_plugin" or record.module != "kube_config":
        return True
    said = str(record.msg)
    found = re.search(r"process returned (\d+)", said)
    if _EXEC_FAILURES.message is None:  # a plugin stopped at the deadline has said why
        missing = "No such file or directory" in said or "Permission denied" in said
        _EXEC_FAILURES.message = (
            f" (exit {found[1]})" if found else " (its command cannot be run)" if missing else ""
        )
    return False


class _BoundedPlugin(subprocess.Popen):  # type: ignore[type-arg]
    """The exec credential plugin as the client starts it, stopped at the cluster's deadline:
    an expired cloud or OIDC login waiting for a browser would hang a scheduled audit forever.

    Without a terminal the plugin gets a session of its own, so that what it started (a shell
    script's children hold its pipes) is stopped with it."""

    def __init__(self, *args: t.Any, **kwargs: t.Any) -> None:
        self.alone = kwargs.get("stdin") is None  # the client passes a terminal's stdin only
        super().__init__(*args, **kwargs, start_new_session=self.alone)

    def communicate(self, input: t.Any = None, timeout: float | None = None) -> t.Any:
        limit = _EXEC_FAILURES.seconds
        try:
            return super().communicate(input, limit)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                if self.alone:
                    os.killpg(self.pid, signal.SIGKILL)
                else:
                    self.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                super().communicate(timeout=1)
            # the deadline the user set, not what was left of it when the plugin started
            said = _EXEC_FAILURES.deadline
            _EXEC_FAILURES.message = (
                f" (no answer within {limit:.3g}s, so it was stopped)"
                if said is None
                else f" (no answer within the cluster's {said:g}s deadline (--timeout), "
                "so it was stopped)"
            )
            raise


_GUARDING = threading.Lock()
_GUARDED: list[bool] = []  # once the guards are in place


def _guard_exec_plugins() -> None:
    """Before the first kubeconfig is loaded (not at import: importing this module changes
    nothing else in the process): the client's exec credential plugins are started bounded by
    the cluster's deadline, and the client's log of a failed one, which quotes the plugin's
    stderr, is dropped. Both stay for the process's life: the client re-runs a plugin whenever
    its credential expires, on any request."""
    with _GUARDING:
        if _GUARDED:
            return
        _GUARDED.append(True)
        # The client starts the plugin through its module's `subprocess`; only Popen is swapped.
        exec_provider.subprocess = types.SimpleNamespace(  # type: ignore[attr-defined,assignment]
            Popen=_BoundedPlugin, PIPE=subprocess.PIPE
        )
        # The client logs through the root logger (logging.error), so the filter sits there.
        logging.getLogger().addFilter(_hide_exec_plugin_output)
