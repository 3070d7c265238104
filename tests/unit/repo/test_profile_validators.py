"""The profiles' validators are built from code kept in the user cache, as the manifests' are:
generating them was ~0.05 s of every run, on one core before the clusters' work is shared."""

from __future__ import annotations

import typing as t
from pathlib import Path

import fastjsonschema
import pytest

from auditor.errors import ConfigError
from auditor.model import Resource
from auditor.repo import profiles


def _profile(owners: str) -> Resource:
    body = {
        "apiVersion": profiles.PROFILE_API_VERSION,
        "kind": "TenantProfile",
        "metadata": {"name": "team-a"},
        "spec": {
            "owners": [owners],
            "clusters": {"gpu-prod": {"namespaces": ["team-a"], "clusterQueues": ["cq"]}},
        },
    }
    return Resource(body, "tenants/team-a/profile.yaml", 1)


def test_a_profile_validator_is_built_from_kept_code_on_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path))
    profiles._fast_validator.cache_clear()  # a new run
    assert profiles.tenant_profile(_profile("@example-org/team-a"), "team-a").owners
    assert len(list((tmp_path / "validators").iterdir())) == 1
    generated: list[str] = []
    real = fastjsonschema.compile_to_code

    def counting(*args: t.Any, **kwargs: t.Any) -> str:
        generated.append("code")
        return real(*args, **kwargs)

    monkeypatch.setattr(fastjsonschema, "compile_to_code", counting)
    monkeypatch.setattr(fastjsonschema, "compile", counting)
    profiles._fast_validator.cache_clear()  # the next run: from the kept code
    assert profiles.tenant_profile(_profile("@example-org/team-a"), "team-a").owners
    with pytest.raises(ConfigError, match="owners"):  # the kept code still refuses
        profiles.tenant_profile(_profile("nobody at all"), "team-a")
    assert generated == []
    profiles._fast_validator.cache_clear()


def test_an_unreadable_kept_validator_is_generated_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path))
    profiles._fast_validator.cache_clear()
    profiles._fast_validator("tenantprofile")
    [kept] = (tmp_path / "validators").iterdir()
    kept.write_bytes(b"not marshal data")
    profiles._fast_validator.cache_clear()
    with pytest.raises(ConfigError, match="owners"):
        profiles.tenant_profile(_profile("nobody at all"), "team-a")
    assert kept.read_bytes() != b"not marshal data"  # kept again
    profiles._fast_validator.cache_clear()
