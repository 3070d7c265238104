from __future__ import annotations

import copy
import typing as t
from pathlib import Path

import pytest

from auditor.repo.manifests import load_bytes
from auditor.schemas import validator
from auditor.schemas.catalog import SchemaCatalog
from auditor.schemas.validator import ClusterValidator, compiled, python_patterns
from tests.conftest import ROOT
from tests.estate import ESTATE

CATALOG = SchemaCatalog(ESTATE / "schemas", "gpu-prod")
VALIDATOR = ClusterValidator(CATALOG)  # shared: compiling each kind once keeps this test fast
KINDS = sorted(
    (f"{e['group']}/{v}" if e["group"] else v, e["kind"])
    for e in CATALOG.index["kinds"].values()
    for v in e["served"]
)


@pytest.mark.parametrize(("api_version", "kind"), KINDS)
def test_every_committed_schema_compiles_for_both_validators(api_version: str, kind: str) -> None:
    assert ClusterValidator(CATALOG).kind_schema(api_version, kind) is not None


def samples() -> t.Iterator[tuple[str, dict[str, t.Any]]]:
    files = [*(ROOT / "tests/data/cel").glob("*.yaml"), *(ESTATE / "clusters").rglob("*.yaml")]
    files += (ESTATE / "tenants").rglob("*.yaml")
    for path in sorted(files):
        for resource in load_bytes(path.read_bytes(), str(path))[0]:
            if resource.kind.endswith("Profile"):
                continue
            yield str(path.relative_to(ROOT)), resource.body
            broken = copy.deepcopy(resource.body)
            broken.setdefault("metadata", {})["labels"] = {"a": 1}  # wrong type
            yield f"{path.name} (label type)", broken
            broken = copy.deepcopy(resource.body)
            broken["spec" if "spec" in broken else "metadata"]["unknownField"] = True
            yield f"{path.name} (unknown field)", broken


@pytest.mark.parametrize(("name", "body"), list(samples()), ids=lambda v: str(v)[:40])
def test_the_fast_path_agrees_with_jsonschema(name: str, body: dict[str, t.Any]) -> None:
    kind = VALIDATOR.kind_schema(body["apiVersion"], body["kind"])
    if kind is None:
        pytest.fail(f"{name}: no schema for {body['apiVersion']} {body['kind']}")
    assert kind.is_valid(body) == kind.validator.is_valid(body)


def test_go_style_inline_flags_are_moved_to_the_front() -> None:
    schema = {"properties": {"kind": {"type": "string", "pattern": "^(?i)[a-z]+$"}}}
    assert python_patterns(schema)["properties"]["kind"]["pattern"] == "(?i)^[a-z]+\\Z"


@pytest.mark.parametrize(
    ("go", "python"),
    [
        ("^a$", "^a\\Z"),  # RE2's $ is the end of the text; Python's also before a final newline
        ("^(a|b$)$", "^(a|b\\Z)\\Z"),
        ("^[$]\\$$", "^[$]\\$\\Z"),  # in a class, or escaped: a dollar sign
        ("(?m)^a$", "(?m)^a$"),  # multi-line: the end of each line in both
    ],
)
def test_a_patterns_end_means_the_end_of_the_text_as_in_go(go: str, python: str) -> None:
    assert python_patterns({"pattern": go})["pattern"] == python


def test_a_bad_object_still_gets_detailed_findings() -> None:
    [resource], _ = load_bytes(
        b"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
        b"metadata: {name: q, namespace: n}\nspec:\n  clusterQueue: 7\n",
        "lq.yaml",
    )
    findings, sound = ClusterValidator(CATALOG).check(resource)
    assert not sound
    assert [(f.rule.id, f.line, f.path) for f in findings] == [("schema", 5, "spec.clusterQueue")]


def test_compiled_validators_are_kept_by_fingerprint_and_rebuilt_when_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fastjsonschema

    monkeypatch.setenv("KUEUE_GITOPS_CACHE", str(tmp_path))
    definition = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    first = compiled(definition)
    [kept] = (tmp_path / "validators").iterdir()
    generated: list[int] = []
    real = fastjsonschema.compile_to_code

    def counting(*args: t.Any, **kwargs: t.Any) -> str:
        generated.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(fastjsonschema, "compile_to_code", counting)
    again = compiled(definition)  # from the kept code: nothing generated
    assert generated == []
    for check in (first, again):
        check({"n": 2})
        with pytest.raises(fastjsonschema.JsonSchemaException):
            check({"n": 0})
    compiled({**definition, "required": ["n"]})  # another fingerprint
    assert generated == [1]
    kept.write_bytes(b"not marshal data")
    with pytest.raises(fastjsonschema.JsonSchemaException):
        compiled(definition)({"n": "x"})
    assert generated == [1, 1]  # generated again, and kept again
    assert compiled(definition) is not None and generated == [1, 1]


def _judged(cluster: str, version: str | None, text: str) -> list[tuple[str, str]]:
    from auditor.kueue import release

    [resource], _ = load_bytes(text.encode(), "x.yaml")
    known = release.get(version) if version else None
    findings, sound = ClusterValidator(SchemaCatalog(ESTATE / "schemas", cluster), known).check(
        resource
    )
    assert sound  # a value past its format leaves the object well-typed for the checks
    return [(f.rule.id, f.message) for f in findings]


def test_an_int32_past_its_range_in_a_kind_kueues_webhook_decodes_is_refused_by_it() -> None:
    [(rule, message)] = _judged(
        "gpu-staging",
        "v0.19.2",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\n"
        "spec:\n  preemption:\n    reclaimWithinCohort: Any\n"
        "    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 3000000000}\n",
    )
    assert rule == "format"
    assert "maxPriorityThreshold: 3000000000 is outside int32" in message
    assert "Kueue v0.19.2's webhook cannot decode it" in message


def test_a_workload_priority_class_past_int32_is_stored_and_breaks_kueues_listing() -> None:
    [(rule, message)] = _judged(
        "gpu-prod",
        "v0.17.0",
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: p}\n"
        "value: 3000000000\n",
    )
    assert rule == "format-undecodable"
    assert "the API server accepts it" in message
    assert "Kueue v0.17.0 cannot decode it" in message
    assert "listing any WorkloadPriorityClass fails" in message


def test_a_built_in_kind_past_its_format_is_stored_wrapped_around_by_server_side_apply() -> None:
    [(rule, message)] = _judged(
        "gpu-prod",
        None,
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: p}\n"
        "value: 3000000000\n",
    )
    assert rule == "format-wrapped"
    assert "stores it wrapped around, as -1294967296" in message


def test_values_within_their_format_pass() -> None:
    assert (
        _judged(
            "gpu-prod",
            "v0.17.0",
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\n"
            "metadata: {name: p}\nvalue: 2147483647\n",
        )
        == []
    )


def test_the_fast_path_holds_integers_to_their_format_too() -> None:
    kind = VALIDATOR.kind_schema("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass")
    assert kind is not None
    body = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass"}
    for value, valid in ((2**31 - 1, True), (2**31, False)):
        doc = {**body, "metadata": {"name": "p"}, "value": value}
        assert kind.is_valid(doc) is valid and kind.validator.is_valid(doc) is valid


def test_a_custom_resources_metadata_is_the_servers_to_fill_not_a_format_finding() -> None:
    """The API server replaces a custom resource's creationTimestamp (a sandbox accepted "last
    week" there); a built-in kind decodes it, and refuses it."""
    body = "metadata: {name: p, namespace: n, creationTimestamp: last week}\n"
    assert _judged("gpu-prod", "v0.17.0", "apiVersion: kueue.x-k8s.io/v1beta2\n"
                   "kind: WorkloadPriorityClass\nvalue: 1\n" + body) == []  # fmt: skip
    [(rule, message)] = _judged("gpu-prod", None, "apiVersion: v1\nkind: ConfigMap\n" + body)
    assert rule == "format" and message.endswith("the API server refuses it")
    assert 'metadata.creationTimestamp: "last week" is outside date-time' in message


# -- a trailing newline (a YAML block scalar's), and the two validators disagreeing -------------

BLOCK_SCALAR_QUOTA = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  resourceGroups:
    - coveredResources: [memory]
      flavors:
        - name: default-flavor
          resources:
            - name: memory
              nominalQuota: |
                10Gi
"""
QUOTA_PATH = "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"


def test_a_quantity_with_a_trailing_newline_is_refused_at_its_line_as_the_server_does() -> None:
    [resource], _ = load_bytes(BLOCK_SCALAR_QUOTA.encode(), "cq.yaml")
    assert (
        resource.body["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"]
        == "10Gi\n"
    )
    kind = VALIDATOR.kind_schema(resource.api_version, resource.kind)
    assert kind is not None
    assert kind.is_valid(resource.body) is kind.validator.is_valid(resource.body) is False
    findings, sound = ClusterValidator(CATALOG).check(resource)
    assert not sound
    assert [(f.rule.id, f.line, f.path) for f in findings] == [("schema", 11, QUOTA_PATH)]
    assert "'10Gi\\n' is not a quantity" in findings[0].message


def test_a_refusal_the_explanation_cannot_point_at_is_still_a_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without its patterns made Go's, jsonschema takes "10Gi\\n" and fastjsonschema does not:
    the two disagree, and the object must be judged invalid by the fast one's verdict."""
    monkeypatch.setattr(validator, "python_patterns", lambda schema: schema)
    [resource], _ = load_bytes(BLOCK_SCALAR_QUOTA.encode(), "cq.yaml")
    disagreeing = ClusterValidator(CATALOG)
    kind = disagreeing.kind_schema(resource.api_version, resource.kind)
    assert kind is not None and kind.validator.is_valid(resource.body)  # the disagreement
    findings, sound = disagreeing.check(resource)
    assert not sound
    assert [(f.rule.id, f.line, f.path) for f in findings] == [("schema", 1, None)]
    assert "refuses this object" in findings[0].message and "nominalQuota" in findings[0].message


# -- lists that hold each entry once (x-kubernetes-list-type set and map) ------------------------

TWICE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  resourceGroups:
    - coveredResources: [cpu]
      flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: "9"}]}]
  admissionChecksStrategy:
    admissionChecks:
      - name: prov
        onFlavors: [default-flavor, default-flavor]
      - name: prov
"""


def test_a_list_that_holds_each_entry_once_refuses_a_repeat_at_its_line() -> None:
    """A v0.19.2 API server refused both ("duplicate entries for key"); offline, JSON Schema
    has no word for it."""
    [resource], _ = load_bytes(TWICE.encode(), "cq.yaml")
    findings, sound = ClusterValidator(CATALOG).check(resource)
    assert sound  # well-typed: the policy checks still see the queue
    checks = "spec.admissionChecksStrategy.admissionChecks"
    assert sorted((f.rule.id, f.line, f.path) for f in findings) == [
        ("list-duplicate", 11, f"{checks}[0].onFlavors[1]"),
        ("list-duplicate", 12, f"{checks}[1]"),
    ]
    said = sorted(f.message for f in findings)
    assert said[0].endswith('"default-flavor" is listed twice: the list holds each value once')
    assert said[1].endswith('the entry with name="prov" is listed twice: the list holds each '
                            "entry by its name once")  # fmt: skip
    once = TWICE.replace("default-flavor, default-flavor", "default-flavor")
    once = once.removesuffix("      - name: prov\n") + "      - name: other\n"
    [resource], _ = load_bytes(once.encode(), "cq.yaml")
    assert ClusterValidator(CATALOG).check(resource) == ([], True)


def test_a_list_entry_yaml_reads_as_a_date_is_judged_not_a_crash() -> None:
    """YAML reads an unquoted 2001-12-14 as a date, which JSON has not: the schema names its
    type, and the list check tells the entries apart by its text (a crash made the cluster
    incomplete: found by tests/fuzz)."""
    text = TWICE.replace("- name: prov\n        onFlavors", "- name: 2001-12-14\n        onFlavors")
    [resource], _ = load_bytes(text.encode(), "cq.yaml")
    findings, sound = ClusterValidator(CATALOG).check(resource)
    assert not sound and "schema" in {f.rule.id for f in findings}
