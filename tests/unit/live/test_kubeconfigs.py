"""Kubeconfigs read as kubectl reads them (auditor/live/kubeconfigs.py): the merge of several
files, relative paths, and a clear error naming the file for each malformed one."""

from __future__ import annotations

import json
import time
import typing as t
from pathlib import Path

import pytest
import yaml

from auditor.errors import ConfigError
from auditor.live import kubeconfigs
from auditor.live.credentials import ContextMissing
from auditor.live.kube import KubeCluster


def write(path: Path, doc: t.Any) -> str:
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return str(path)


def config(context: str, server: str, **extra: t.Any) -> dict[str, t.Any]:
    return {
        "clusters": [{"name": context, "cluster": {"server": server, **extra}}],
        "users": [{"name": context, "user": {"token": "t"}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
        "current-context": context,
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("- a\n- b\n", "holds a list at its top level"),
        ("hello\n", "holds a string ('hello') at its top level"),
        ("42\n", "holds a int (42) at its top level"),
        ("clusters: [\n", "is not YAML at line 2"),
        (
            "contexts: {a: b}\n",
            "contexts is a",
        ),
        ("contexts: [a]\n", "contexts[0] is not a mapping with a name"),
    ],
)
def test_a_malformed_kubeconfig_says_what_is_wrong_naming_the_file(
    tmp_path: Path, text: str, says: str
) -> None:
    path = write(tmp_path / "kc", text)
    with pytest.raises(ConfigError) as raised:
        KubeCluster.connect("gpu-prod", kubeconfig=path, context="gpu-prod")
    message = str(raised.value)
    assert message.startswith(f"cluster gpu-prod: the kubeconfig {path}")
    assert says in message
    assert raised.value.exit_code == 2


def test_the_first_file_to_name_a_context_wins_as_with_kubectl(tmp_path: Path) -> None:
    first = write(tmp_path / "a", config("prod", "https://127.0.0.1:1"))
    second = write(
        tmp_path / "b", {**config("prod", "https://127.0.0.1:2"), "current-context": "x"}
    )
    chosen = kubeconfigs.choose([first, second], None)
    assert chosen.name == "prod"  # the first file's current-context
    assert chosen.config["clusters"][0]["cluster"]["server"] == "https://127.0.0.1:1"
    assert (
        kubeconfigs.choose([str(tmp_path / "absent"), second], "prod").config["clusters"][0][
            "cluster"
        ]["server"]
        == "https://127.0.0.1:2"
    )  # a file that does not exist is skipped


def test_relative_paths_are_relative_to_the_file_that_names_them(tmp_path: Path) -> None:
    (tmp_path / "certs").mkdir()
    doc = config("prod", "https://127.0.0.1:1", **{"certificate-authority": "certs/ca.crt"})
    doc["users"][0]["user"] = {"client-certificate": "me.crt", "client-key": "/abs/me.key"}
    chosen = kubeconfigs.choose([write(tmp_path / "kc", doc)], "prod")
    assert chosen.config["clusters"][0]["cluster"]["certificate-authority"] == str(
        tmp_path / "certs/ca.crt"
    )
    user = chosen.config["users"][0]["user"]
    assert (user["client-certificate"], user["client-key"]) == (
        str(tmp_path / "me.crt"),
        "/abs/me.key",
    )


def test_a_context_naming_a_cluster_no_file_defines_is_named(tmp_path: Path) -> None:
    doc = config("prod", "https://127.0.0.1:1")
    doc["contexts"][0]["context"]["cluster"] = "elsewhere"
    path = write(tmp_path / "kc", doc)
    with pytest.raises(ConfigError, match=f"context prod of {path} names cluster elsewhere"):
        kubeconfigs.choose([path], "prod")


def test_a_missing_context_is_a_missing_context(tmp_path: Path) -> None:
    path = write(tmp_path / "kc", config("prod", "https://127.0.0.1:1"))
    with pytest.raises(ContextMissing, match=f"no context staging of {path}"):
        KubeCluster.connect("gpu-staging", kubeconfig=path, context="staging")
    empty = write(tmp_path / "empty", "")
    with pytest.raises(ContextMissing, match=r"no context \(current\)"):
        KubeCluster.connect("gpu-staging", kubeconfig=empty)


def test_many_contexts_load_in_seconds(tmp_path: Path) -> None:
    """20,000 contexts (written as JSON, which is YAML): the client's own merge takes minutes
    there, quadratic in their number (bench/kubeconfig/run.py has the numbers)."""
    size = 20_000
    doc = {
        "clusters": [
            {"name": f"c{i}", "cluster": {"server": f"https://h{i}:1"}} for i in range(size)
        ],
        "users": [{"name": f"u{i}", "user": {"token": "t"}} for i in range(size)],
        "contexts": [
            {"name": f"x{i}", "context": {"cluster": f"c{i}", "user": f"u{i}"}} for i in range(size)
        ],
    }
    path = write(tmp_path / "kc", json.dumps(doc))
    started = time.monotonic()
    cluster = KubeCluster.connect("c", kubeconfig=path, context=f"x{size - 1}")
    assert cluster.server == f"https://h{size - 1}:1"
    assert time.monotonic() - started < 30  # the client's loader: minutes
