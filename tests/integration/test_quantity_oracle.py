"""What we say the API server prints for a quantity is what a real kube-apiserver prints.

A ResourceQuota's `spec.hard` goes through the same Quantity parse and print as Kueue's webhook,
plus one defaulting step of its own (core ResourceLists round up to milli units), so the forms
below keep to milli precision.
"""

from __future__ import annotations

import pytest

from auditor.k8s.quantity import printed
from auditor.sandbox import Sandbox

# Every non-negative form the unit tests cover, and a few the API server is picky about.
FORMS = [
    "1000m", "0.5", ".5", "1.", "1000", "1500", "1.5k", "12000", "0.1", "1.50", "05", "007",
    "1E", "3072Mi", "2048Ki", "1536Mi", "0.5Gi", "1.5Ki", "0.5Ki", "0.1Ki", "1023Ki", "1Ti",
    "1e3", "1E3", "12e6", "10e3", "1000e3", "1.5e3", "1e-3", "0Gi", "0.000m", "0", "00", "-0",
    "9", "+5", "+3Gi", "1025Ki", "1.5Gi", "129e6", "1000000Ki", "0.001", "1000000", "1010",
]  # fmt: skip


def test_canonical_form_matches_the_api_server(sandbox: Sandbox) -> None:
    cluster = sandbox.connect()
    server = {}
    for form in FORMS:
        quota = {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "quantity-oracle", "namespace": "default"},
            "spec": {"hard": {"requests.memory": form}},
        }
        stored = cluster.apply(quota, manager="kueue-gitops-test", dry_run=True)
        server[form] = stored["spec"]["hard"]["requests.memory"]
    assert {form: printed(form) for form in FORMS} == server


@pytest.mark.parametrize("form", ["3072Mi", "0.5"])
def test_the_oracle_really_rewrites_non_canonical_text(sandbox: Sandbox, form: str) -> None:
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "quantity-oracle", "namespace": "default"},
        "spec": {"hard": {"requests.memory": form}},
    }
    stored = sandbox.connect().apply(quota, manager="kueue-gitops-test", dry_run=True)
    assert stored["spec"]["hard"]["requests.memory"] != form
