"""A sandbox's listeners each get a port of their own.

Ports are chosen before the processes bind them; the kernel, asked again meanwhile, may hand
out the same free port twice — and etcd then fails to start with "address already in use"
because its client and peer URLs named one port (seen in CI)."""

from __future__ import annotations

import socket

from auditor.sandbox.services import free_port


def test_a_thousand_ports_asked_for_in_a_row_are_all_different() -> None:
    ports = [free_port() for _ in range(1000)]
    assert len(set(ports)) == len(ports)


def test_a_port_handed_out_is_free_to_bind() -> None:
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
