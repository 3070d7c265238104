"""What each refusal of a real kube-apiserver becomes (auditor/live/apierrors.py): the typed
error a caller catches, with the Status object's reason and details kept, and the one-line
message a user reads naming the cluster, what was being done and the server's own words.

Each refusal is provoked for real on the sandbox: a GET of a missing object, a LIST by a user
with no rights (impersonated), an update from a stale read, a create of an object that exists,
an invalid name, a value server-side apply cannot fit to its type, a request past its own
timeout, and an admission webhook that cannot be called (failurePolicy Fail, nothing listening:
as when Kueue's is down). Throttling (API Priority and Fairness's real 429s) is in
tests/integration/test_faults.py.
"""

from __future__ import annotations

import os
import typing as t

import pytest

from auditor.errors import ClusterAccessError
from auditor.live import apierrors
from auditor.live.kube import KubeCluster
from auditor.sandbox import Sandbox
from auditor.sandbox.services import free_port
from tests.integration.waiting import eventually

NS = f"api-errors-{os.getpid()}"


@pytest.fixture(scope="module")
def admin(sandbox: Sandbox) -> t.Iterator[KubeCluster]:
    cluster = sandbox.connect()
    cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    yield cluster
    cluster.delete("v1", "Namespace", NS)


def refused(call: t.Callable[[], object]) -> ClusterAccessError:
    with pytest.raises(ClusterAccessError) as caught:
        call()
    return caught.value


def config_map(name: str) -> dict[str, t.Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": NS}}


def test_a_get_of_a_missing_object_is_not_found(admin: KubeCluster) -> None:
    error = refused(lambda: admin.get("v1", "ConfigMap", "absent", NS))
    assert isinstance(error, apierrors.NotFound)
    assert (error.code, error.reason) == (404, "NotFound")
    assert error.details == {"name": "absent", "kind": "configmaps"}
    assert str(error) == (
        f'cluster {admin.name}: GET ConfigMap absent not found (404): configmaps "absent" not found'
    )


def test_a_list_by_a_user_without_rights_is_forbidden(admin: KubeCluster) -> None:
    nobody = admin.impersonating("nobody")
    error = refused(lambda: nobody.list("v1", "ConfigMap"))
    assert isinstance(error, apierrors.Forbidden)
    assert (error.code, error.reason, error.details.get("kind")) == (403, "Forbidden", "configmaps")
    assert f"cluster {admin.name}: LIST ConfigMap forbidden (403): " in str(error)
    assert 'User "nobody" cannot list resource "configmaps"' in str(error)


def test_an_update_from_a_stale_read_is_a_conflict(admin: KubeCluster) -> None:
    admin.create(config_map("stale"))
    read = admin.get("v1", "ConfigMap", "stale", NS)
    path = admin.path("v1", "ConfigMap", NS, "stale")
    admin.request("PUT", path, body={**read, "data": {"a": "1"}}, what="update ConfigMap stale")
    error = refused(
        lambda: admin.request(
            "PUT", path, body={**read, "data": {"a": "2"}}, what="update ConfigMap stale"
        )
    )
    assert type(error) is apierrors.Conflict
    assert (error.code, error.reason) == (409, "Conflict")
    assert "the object has been modified" in str(error)


def test_a_create_of_an_object_that_exists_is_already_exists(admin: KubeCluster) -> None:
    admin.create(config_map("twice"))
    error = refused(lambda: admin.create(config_map("twice")))
    assert isinstance(error, apierrors.AlreadyExists) and isinstance(error, apierrors.Conflict)
    assert (error.code, error.reason, error.details.get("name")) == (409, "AlreadyExists", "twice")


def test_an_invalid_object_is_invalid_with_its_causes(admin: KubeCluster) -> None:
    error = refused(lambda: admin.create(config_map("Not_A_Name")))
    assert isinstance(error, apierrors.Invalid)
    assert (error.code, error.reason) == (422, "Invalid")
    assert [c.get("field") for c in error.details.get("causes", [])] == ["metadata.name"]


def test_a_value_its_type_cannot_hold_is_judged_not_a_broken_server(admin: KubeCluster) -> None:
    body = {**config_map("undecodable"), "binaryData": {"x": "not base64!"}}
    error = refused(lambda: admin.apply(body, manager="test", dry_run=True))
    assert isinstance(error, apierrors.Unfitting), (type(error), str(error))


def test_a_webhook_that_cannot_be_called_is_webhook_failed(admin: KubeCluster) -> None:
    port = free_port()  # a port nothing listens on: the webhook is down
    hook = f"down-{os.getpid()}.example.com"
    admin.apply(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": hook},
            "webhooks": [
                {
                    "name": hook,
                    "clientConfig": {"url": f"https://127.0.0.1:{port}/validate"},
                    "rules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["configmaps"],
                        }
                    ],
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}},
                    "failurePolicy": "Fail",
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "timeoutSeconds": 2,
                }
            ],
        },
        manager="test",
    )
    tries = iter(range(10_000))

    def failed() -> ClusterAccessError | None:  # until the API server has the webhook
        try:
            admin.create(config_map(f"probe-{next(tries)}"))
        except ClusterAccessError as exc:
            return exc
        return None

    try:
        error = eventually(failed, what="the webhook configuration taking effect", seconds=30)
    finally:
        admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", hook)
    assert isinstance(error, apierrors.WebhookFailed), (type(error), str(error))
    assert (error.code, error.reason) == (500, "InternalError")
    assert f'failed calling webhook "{hook}"' in str(error)
    assert str(error).startswith(f"cluster {admin.name}: create ConfigMap probe-")


def test_a_request_past_its_own_timeout_is_timed_out(admin: KubeCluster) -> None:
    path = admin.path("v1", "ConfigMap")
    error = refused(
        lambda: admin.request("GET", path, query=[("timeout", "1ns")], what="LIST ConfigMap")
    )
    assert isinstance(error, apierrors.TimedOut), (type(error), str(error))
    assert error.code == 504 and error.reason == "Timeout"
