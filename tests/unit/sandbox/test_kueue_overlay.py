"""A sandbox's Kueue runs the repository's Configuration with only local settings laid over."""

from __future__ import annotations

from pathlib import Path

from auditor.repo import boundaries
from auditor.repo.layout import Repository
from auditor.sandbox.kueue import SECRET, SERVICE, overlay
from tests.estate import ESTATE


def test_what_decides_admission_is_kept_and_addresses_are_local(tmp_path: Path) -> None:
    declared = boundaries.kueue_configuration(Repository.open(ESTATE), "gpu-staging")
    assert declared is not None
    running = overlay(declared, tmp_path, 40001, 40002)
    for field in ("manageJobsWithoutQueueName", "managedJobsNamespaceSelector", "integrations"):
        assert running[field] == declared[field]
    assert running["clientConnection"] == declared["clientConnection"]
    assert running["metrics"]["enableClusterQueueResources"] is True
    assert running["metrics"]["bindAddress"].startswith("127.0.0.1:")
    assert running["health"]["healthProbeBindAddress"] == "127.0.0.1:40002"
    assert running["webhook"] == {
        "host": "127.0.0.1",
        "port": 40001,
        "certDir": str(tmp_path / "certs"),
    }
    assert running["leaderElection"] == {
        "leaderElect": False,
        "resourceName": "c1f6bfd2.kueue.x-k8s.io",
    }
    assert running["internalCertManagement"] == {
        "enable": True,
        "webhookServiceName": SERVICE,
        "webhookSecretName": SECRET,
    }
    assert running["featureGates"] == {"VisibilityOnDemand": False}
    assert declared["webhook"] == {"port": 9443}  # the repository's copy is left alone


def test_without_a_configuration_kueue_runs_on_its_defaults(tmp_path: Path) -> None:
    running = overlay(None, tmp_path, 40001, 40002)
    assert running["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
    assert "manageJobsWithoutQueueName" not in running  # Kueue's default: false
    assert "integrations" not in running  # Kueue's default: batch/job
