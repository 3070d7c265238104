"""Many tenants' profiles are read by two processes before the clusters' work is shared
(validate/engine.shared_tenants): the same profiles, in the same order, as one process reads;
a broken profile is the same configuration error, naming its file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.repo.layout import Repository
from auditor.validate import engine
from bench.validate.generate import generate


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shared") / "repo"
    generate(root, engine.SHARED_TENANTS + 11)
    return root


def test_shared_reading_finds_what_one_process_finds(corpus: Path) -> None:
    shared = Repository.open(corpus)
    engine.shared_tenants(shared, None)
    alone = Repository.open(corpus).tenants
    assert list(shared.tenants.items()) == list(alone.items())
    assert len(alone) == engine.SHARED_TENANTS + 11


def test_a_broken_profile_in_either_half_is_the_same_error(corpus: Path) -> None:
    for tenant in ("t00002", "t00003"):  # one in each half
        path = corpus / "tenants" / tenant / "profile.yaml"
        good = path.read_text()
        path.write_text(good.replace("owners:", "owner:"))
        try:
            with pytest.raises(ConfigError) as alone:
                Repository.open(corpus).tenants  # noqa: B018
            with pytest.raises(ConfigError) as shared:
                engine.shared_tenants(Repository.open(corpus), None)
            assert str(shared.value) == str(alone.value)
            assert f"tenants/{tenant}/profile.yaml:" in str(shared.value)
        finally:
            path.write_text(good)
