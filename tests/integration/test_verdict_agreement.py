"""Offline verdicts held to the real API server, on every supported Kueue release.

tests/data/verdicts/ (its README says what is there) gives a few hundred cases: objects written
in the style of Kueue's documentation and webhook tests, seeded mutations of a small estate, and
changes to existing objects. On a sandbox running each release (its CRDs, its webhooks), each
object is dry-run as Argo CD applies it (server-side apply, dryRun=All, strict field
validation), and each change is applied for real as it was, then dry-run as it becomes. Offline,
each is judged as `validate` (and, for a change, `plan`) judges it with that release's
knowledge. Refused or accepted, the two must agree; a disagreement must be listed, with its
reason, in expected-disagreements.yaml, and a listed one that no longer happens fails too.
"""

from __future__ import annotations

import copy
import random
import typing as t
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from auditor.errors import ClusterAccessError
from auditor.kueue import release, webhooks
from auditor.live.kube import KubeCluster
from auditor.model import Finding, Resource
from auditor.plan import immutable
from auditor.repo.layout import Repository
from auditor.repo.manifests import load_bytes
from auditor.sandbox import Toolchain
from auditor.schemas import validator as schemas_validator
from auditor.schemas.catalog import SchemaCatalog
from auditor.validate import checks
from auditor.validate.checks import kueue_webhook, quantities
from auditor.validate.engine import judged, validator_of
from tests.conftest import ROOT
from tests.estate import ESTATE
from tests.integration.conftest import release_sandbox

CORPUS = ROOT / "tests/data/verdicts"
NAMESPACE = "vd"
MANAGER = "argocd-controller"
# Each supported release, and the repository cluster whose profile and schemas are that release's.
RELEASES = {"v0.19.2": "gpu-staging", "v0.17.0": "gpu-prod"}
Json = dict[str, t.Any]

# What offline findings say the server refuses. A create: the schema stage's errors (but the
# values the server stores: one Kueue cannot decode, a built-in kind's integer wrapped around by
# server-side apply; and what Kueue's defaulting webhook rewrites on create), Kueue's webhook
# rules as the release holds them, and text that is no quantity. An update: those, what the
# defaulting webhook no longer rewrites, and plan's immutable fields.
STORED = {schemas_validator.FORMAT_UNDECODABLE, schemas_validator.FORMAT_WRAPPED}
REWRITTEN_ON_CREATE = {schemas_validator.QUANTITY_NUMBER, schemas_validator.QUANTITY_MISSING}
WEBHOOK = {
    *(r for r in webhooks.RULES.values() if r is not webhooks.CHECK_FLAVOR_IGNORED),
    *kueue_webhook.MIRRORED,
    quantities.QUANTITY_INVALID,
}  # fmt: skip


@dataclass(frozen=True)
class Case:
    name: str
    head: Resource
    base: Resource | None = None  # a change: the object as it is before


def _resources(path: Path) -> list[Resource]:
    found, problems = load_bytes(path.read_bytes(), str(path.relative_to(ROOT)))
    assert problems == [], problems
    return found


def _made(body: Json, origin: str) -> Resource:
    return Resource(body=body, file=origin, line=1)


# -- the seeded mutations of the estate ---------------------------------------------------------


def _cells(body: Json) -> list[Json]:
    spec = body.get("spec") or {}
    return [
        r
        for g in spec.get("resourceGroups") or []
        for f in g.get("flavors") or []
        for r in f.get("resources") or []
    ]


def _quota(value: t.Any) -> t.Callable[[Json, random.Random], bool]:
    def mutate(body: Json, rng: random.Random) -> bool:
        cells = _cells(body)
        if not cells:
            return False
        rng.choice(cells)["nominalQuota"] = value(rng) if callable(value) else value
        return True

    return mutate


def _drop_quota(body: Json, rng: random.Random) -> bool:
    cells = _cells(body)
    if not cells:
        return False
    rng.choice(cells).pop("nominalQuota")
    return True


def _lend_over(body: Json, rng: random.Random) -> bool:
    cells = [c for c in _cells(body) if str(c.get("nominalQuota")).isdigit()]
    if not cells:
        return False
    cell = rng.choice(cells)
    cell["lendingLimit"] = str(int(cell["nominalQuota"]) + rng.randint(1, 8))
    return True


def _weight(value: t.Any) -> t.Callable[[Json, random.Random], bool]:
    def mutate(body: Json, rng: random.Random) -> bool:
        if body["kind"] not in ("ClusterQueue", "Cohort", "LocalQueue"):
            return False
        body.setdefault("spec", {})["fairSharing"] = {"weight": value}
        return True

    return mutate


def _spec_field(kind: str, field: str, value: t.Any) -> t.Callable[[Json, random.Random], bool]:
    def mutate(body: Json, rng: random.Random) -> bool:
        if body["kind"] != kind:
            return False
        body.setdefault("spec", {})[field] = value
        return True

    return mutate


def _check_flavor(body: Json, rng: random.Random) -> bool:
    if body["kind"] != "ClusterQueue":
        return False
    flavor = rng.choice(["vd-e-h100", "spot", "vd-e-gpu-spot-v2"])
    checks_ = body["spec"].setdefault("admissionChecksStrategy", {"admissionChecks": []})
    checks_["admissionChecks"].append({"name": "vd-e-extra", "onFlavors": [flavor]})
    return True


def _threshold(value: int) -> t.Callable[[Json, random.Random], bool]:
    def mutate(body: Json, rng: random.Random) -> bool:
        if body["kind"] == "WorkloadPriorityClass":
            body["value"] = value
            return True
        preemption = (body.get("spec") or {}).get("preemption")
        if body["kind"] != "ClusterQueue" or preemption is None:
            return False
        preemption["borrowWithinCohort"]["maxPriorityThreshold"] = value
        return True

    return mutate


def _drop_cohort(body: Json, rng: random.Random) -> bool:
    if body["kind"] != "ClusterQueue" or "cohortName" not in body["spec"]:
        return False
    del body["spec"]["cohortName"]  # its borrowing and lending limits have no parent now
    return True


def _label(body: Json, rng: random.Random) -> bool:
    if body["kind"] != "ResourceFlavor":
        return False
    body["spec"]["nodeLabels"] = {"cloud.example.com/accelerator": rng.choice(["a 100", "-a100"])}
    return True


def _repeat_taint(body: Json, rng: random.Random) -> bool:
    if body["kind"] != "ResourceFlavor":
        return False
    taint = dict(body["spec"]["nodeTaints"][0], value="other")
    body["spec"]["nodeTaints"].append(taint)
    return True


def _unknown(body: Json, rng: random.Random) -> bool:
    body.setdefault("spec", {})[rng.choice(["quotas", "nodeLabel", "clusterqueue"])] = "x"
    return True


MUTATIONS: dict[str, t.Callable[[Json, random.Random], bool]] = {
    "quota-fraction": _quota(lambda rng: rng.choice([4.5, 0.25, 12.75])),
    "quota-whole-float": _quota(lambda rng: rng.choice([1000.0, 12.0])),
    "quota-int": _quota(lambda rng: rng.randint(1, 64)),
    "quota-missing": _drop_quota,
    "quota-negative": _quota(lambda rng: f"-{rng.randint(1, 9)}"),
    "quota-huge": _quota("1e309"),
    "quota-words": _quota(lambda rng: rng.choice(["4 cores", "8 GB", "lots"])),
    "quota-suffix": _quota(lambda rng: rng.choice(["1500m", "3Gi", "2k"])),
    "lending-over-nominal": _lend_over,
    "weight-fraction": _weight(0.5),
    "weight-tiny": _weight("1n"),
    "weight-negative": _weight("-1"),
    "strategy-typo": _spec_field("ClusterQueue", "queueingStrategy", "FIFO"),
    "stop-hold": _spec_field("ClusterQueue", "stopPolicy", "Hold"),
    "lq-stop-typo": _spec_field("LocalQueue", "stopPolicy", "Pause"),
    "check-unknown-flavor": _check_flavor,
    "int32-past": _threshold(3000000000),
    "int32-max": _threshold(2147483647),
    "int32-below": _threshold(-3000000000),
    "no-cohort": _drop_cohort,
    "label-invalid": _label,
    "taint-repeated": _repeat_taint,
    "unknown-field": _unknown,
}
SEED = 35
ROUNDS = 3  # each mutation drawn this many times per object (a repeated draw is dropped)


def mutated() -> list[Case]:
    rng = random.Random(SEED)
    out = []
    for resource in _resources(CORPUS / "estate.yaml"):
        out.append(Case(resource.name, resource))
        for name, mutate in MUTATIONS.items():
            drawn: list[Json] = []
            for round_ in range(ROUNDS):
                body = copy.deepcopy(resource.body)
                if not mutate(body, rng) or body in drawn:
                    continue
                drawn.append(copy.deepcopy(body))
                body["metadata"]["name"] = f"{resource.name}-{name}-{round_}"
                out.append(Case(body["metadata"]["name"], _made(body, f"estate.yaml ({name})")))
    return out


def corpus() -> list[Case]:
    cases = [Case(r.name, r) for p in sorted((CORPUS / "objects").glob("*.yaml")) for r in
             _resources(p)]  # fmt: skip
    for path in sorted((CORPUS / "updates").glob("*.yaml")):
        found = _resources(path)
        assert len(found) % 2 == 0, f"{path}: changes come in pairs"
        for base, head in zip(found[::2], found[1::2], strict=True):
            assert base.key == head.key, (base.key, head.key)
            cases.append(Case(f"{head.name} (update)", head, base))
    return cases + mutated()


CASES = corpus()


def expected() -> dict[tuple[str, str], str]:
    listed = yaml.safe_load((CORPUS / "expected-disagreements.yaml").read_text()) or []
    return {(e["release"], e["case"]): e["reason"] for e in listed}


# -- the two verdicts -----------------------------------------------------------------------------


class Offline:
    """validate's verdict (and plan's, for a change) with one release's knowledge."""

    def __init__(self, cluster: str) -> None:
        self.repo = Repository.open(ESTATE)
        self.profile = self.repo.cluster(cluster)
        self.kueue = release.nearest_release(self.profile.kueue_version)
        self.validator = validator_of(self.repo, ESTATE / "schemas", cluster)
        self.catalog = SchemaCatalog(ESTATE / "schemas", cluster)

    def refusals(self, case: Case) -> list[Finding]:
        found, sound = self.validator.check(case.head)
        ctx = checks.CheckContext(self.repo, self.profile, (case.head,), self.repo.tenants)
        found += checks.run(ctx, only=["quotas", "quantities", kueue_webhook.ID]) if sound else []
        update = case.base is not None
        refused = [
            f
            for f in found
            if f.severity == "error"
            and f.rule not in STORED
            and (f.rule.stage == "schema" or f.rule in WEBHOOK)
            and (update or f.rule not in REWRITTEN_ON_CREATE)
        ]
        if case.base is not None:
            refused += immutable.refused(
                self.profile.name, self.catalog, self.kueue, case.base, case.head
            )
        return refused


def server(cluster: KubeCluster, case: Case) -> str | None:
    """The API server's refusal of the case, or None when it accepts it."""
    if case.base is not None:
        cluster.apply(case.base.body, manager=MANAGER)  # the object as it is; it must be taken
    try:
        cluster.apply(case.head.body, manager=MANAGER, dry_run=True, field_validation="Strict")
    except ClusterAccessError as exc:
        assert judged(exc), exc  # the server refused the object, it did not fail to answer
        return str(exc)
    return None


@pytest.fixture(scope="module", params=sorted(RELEASES))
def kueue_box(
    request: pytest.FixtureRequest, toolchain: Toolchain, sandboxes_dir: Path
) -> t.Iterator[tuple[str, KubeCluster]]:
    version = str(request.param)
    box = release_sandbox(toolchain, sandboxes_dir, "verdicts", version)
    try:
        live = box.connect()
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        live.apply(namespace, manager=MANAGER)
        yield version, live
    finally:
        box.down()


def test_offline_verdicts_agree_with_each_release(kueue_box: tuple[str, KubeCluster]) -> None:
    version, live = kueue_box
    offline = Offline(RELEASES[version])
    assert offline.kueue.version == version  # the repository cluster runs the release under test
    listed = {case: why for (v, case), why in expected().items() if v == version}
    unlisted, agreeing = [], []
    for case in CASES:
        refusals = offline.refusals(case)
        refused_by = server(live, case)
        agree = bool(refusals) == (refused_by is not None)
        if not agree and case.name not in listed:
            ours = [f"{f.rule.id}: {f.message}" for f in refusals]
            unlisted.append(
                f"{case.name}: offline {ours or 'accepts'}; server {refused_by or 'accepts'}"
            )
        if agree and case.name in listed:
            agreeing.append(case.name)
    assert unlisted == [], "\n".join(unlisted)
    assert agreeing == [], f"listed in expected-disagreements.yaml, but they agree now: {agreeing}"


def test_the_corpus_is_a_few_hundred_distinct_cases_of_our_own() -> None:
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert 150 <= len(CASES) <= 600
    assert all(c.head.name.lower().startswith("vd") for c in CASES)
    assert sum(c.base is not None for c in CASES) >= 10
    assert {c.head.kind for c in CASES} >= {
        "ClusterQueue", "Cohort", "LocalQueue", "ResourceFlavor", "WorkloadPriorityClass",
        "AdmissionCheck", "PriorityClass",
    }  # fmt: skip


def test_the_mutations_are_seeded() -> None:
    assert [c.head.body for c in mutated()] == [c.head.body for c in mutated()]


def test_every_expected_disagreement_names_a_case_a_release_and_a_reason() -> None:
    names = {c.name for c in CASES}
    for (version, case), reason in expected().items():
        assert version in RELEASES and case in names and len(reason) > 20, (version, case)
