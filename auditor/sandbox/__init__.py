"""The sandbox: a real etcd and kube-apiserver, built from pinned upstream modules, on loopback."""

from __future__ import annotations

from auditor.sandbox.build import Toolchain, ensure_built
from auditor.sandbox.controlplane import Sandbox

__all__ = ["Sandbox", "Toolchain", "ensure_built"]
