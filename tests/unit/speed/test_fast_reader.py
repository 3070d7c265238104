"""The fast reader (rapidyaml) reads what it takes exactly as PyYAML's path does, and leaves
everything else to that path (auditor/repo/fast_reader.py; the loader, auditor/repo/manifests.py,
asks it first)."""

from __future__ import annotations

import os
import typing as t
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.repo import fast_reader, manifests
from tests.estate import ESTATE

ROOT = Path(__file__).resolve().parents[3]


Read = tuple[list[tuple[int, int, dict[str, t.Any]]], list[tuple[str, int, str]]]


def read(text: str) -> Read:
    """What the loader makes of `text`: (index, line, body) per object, and the findings."""
    found, problems = manifests.load_text(text, "f.yaml")
    objects = [(t.cast(t.Any, r.line_source).index, r.line, r.body) for r in found]
    return objects, [(p.rule.id, p.line or 0, p.message) for p in problems]


def slow(text: str) -> Read:
    """What PyYAML's path alone makes of `text`."""
    saved, fast_reader.ENABLED = fast_reader.ENABLED, False
    try:
        return read(text)
    finally:
        fast_reader.ENABLED = saved


def fast(text: str) -> list[tuple[int, int, dict[str, t.Any]]] | None:
    with manifests.quiet():
        return fast_reader.documents(text.encode())


def same_as_slow(text: str) -> bool:
    """Whether the fast reader took `text` (and then it must agree with PyYAML's path)."""
    got = fast(text)
    if got is None:
        return False
    objects, problems = slow(text)
    kept = {index for index, _line, _body in objects}
    assert [g for g in got if g[0] in kept] == objects
    assert len(got) - len(objects) == len(problems)  # the rest lack an identity
    assert all(rule == "missing-identity" for rule, _line, _message in problems)
    assert read(text) == (objects, problems)
    return True


def repository_yaml() -> list[Path]:
    out = []
    for folder in ("deploy", "tests/data"):  # tests/data/estate/: clusters/, tenants/, argocd/
        for here, _dirs, files in os.walk(ROOT / folder):
            out += [Path(here, f) for f in files if f.endswith((".yaml", ".yml"))]
    return sorted(out)


def test_every_yaml_file_of_the_repository_reads_alike() -> None:
    taken = 0
    for path in repository_yaml():
        try:
            text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
        except UnicodeDecodeError:
            continue
        taken += same_as_slow(text)
    assert taken > 50  # the fast reader took most of them: the comparison compared something


OBJECT = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"


@pytest.mark.parametrize(
    "text",
    [
        OBJECT,
        "# a comment\n\n" + OBJECT,
        "---\n" + OBJECT,
        OBJECT + "---\n",
        OBJECT + "---\n---\n" + OBJECT.replace("a\n", "b\n"),
        "--- # first\n" + OBJECT + "--- \n" + OBJECT,
        OBJECT + "data:\n  n: '1'\n  q: \"0\"\n  s: 10Gi\n  f: 0.5\n  g: .5\n  h: 5.\n",
        OBJECT + "data:\n  e: 1e3\n  big: 1.5e+3\n  quote: 'it''s'\n  esc: \"a\\tb\\u00e9\"\n",
        OBJECT + "data:\n  folded: >-\n    one\n    two\n  literal: |\n    x\n    y\n",
        OBJECT + "data:\n  url: http://example.com/a#b\n  list: [a, 'b', \"c\"]\n",
        OBJECT + "spec:\n  n: 8\n  t: true\n  f: false\n  z: null\n  e:\n",
        "kind: ConfigMap\nmetadata:\n  name: a\n",  # no apiVersion: a finding, from both
        OBJECT.replace("name: a", "name: cq-1") + 'data:\n  q: "1"\n',  # -1 is no plain 1
    ],
)
def test_what_both_read_alike(text: str) -> None:
    assert same_as_slow(text)


@pytest.mark.parametrize(
    "text",
    [
        OBJECT + "data:\n  b: yes\n",  # YAML 1.1: a boolean
        OBJECT + "data:\n  b: ~\n",  # null
        OBJECT + "data:\n  o: 012\n",  # octal
        OBJECT + "data:\n  u: 1_000\n",
        OBJECT + "data:\n  s: -.5\n",  # a string in YAML 1.1, -0.5 in rapidyaml's JSON
        OBJECT + "data:\n  p: +1\n",
        OBJECT + "data:\n  d: 2024-01-01\n",  # a timestamp
        OBJECT + 'data:\n  q: "1"\n  n: 1\n',  # a quoted and a plain "1": which is which?
        OBJECT + 'data:\n  q: "1"\nlist:\n- 1\n',  # an item 1 beside a quoted "1"
        OBJECT + "data:\n  yes: x\n",  # a key YAML 1.1 reads as a boolean
        OBJECT + "data:\n  a: 1\n  a: 2\n",  # a duplicate key
        OBJECT + "data: &x\n  a: 1\nother: *x\n",  # an anchor and an alias
        OBJECT + "data: !!str 1\n",  # a tag
        OBJECT + "data:\n  <<: {a: 1}\n",  # a merge key
        OBJECT + "data:\n\ta: 1\n",  # a tab
        OBJECT.replace("\n", "\r\n"),  # carriage returns
        "%YAML 1.1\n---\n" + OBJECT,  # a directive
        "--- !tag\n" + OBJECT,
        "? [a]\n: b\n",  # an explicit key
        "- a\n- b\n",  # not a mapping
        OBJECT + "data: [unclosed\n",  # malformed
        OBJECT + "deep: " + "[" * 120 + "]" * 120 + "\n",  # past MAX_DEPTH
        "\x00" + OBJECT[1:],  # a NUL (rapidyaml reads it as the end; YAML refuses it)
        OBJECT + "data:\n  a: x\x1by\n",  # a C0 control
        OBJECT + "data:\n  a: x\x7fy\n",  # DEL
        OBJECT + "data:\n  a: x\x85y\x86\n",  # NEL (allowed) beside a C1 control
        OBJECT + "data:\n  a: x\ufffey\n",  # a noncharacter
    ],
)
def test_what_the_fast_reader_leaves_to_pyyaml(text: str) -> None:
    assert fast(text) is None
    assert read(text) == slow(text)  # so the loader's answer is PyYAML's path's


def test_a_control_character_is_a_finding_at_its_line() -> None:
    text = OBJECT + "data:\n  a: x\x00y\n"
    found, [problem] = manifests.load_bytes(text.encode(), "f.yaml")
    assert found == []
    assert (problem.rule.id, problem.line) == ("yaml-syntax", 6)
    assert "#x0000" in problem.message


def test_a_malformed_file_still_gets_pyyamls_message_and_line(
    capfd: pytest.CaptureFixture[str],
) -> None:
    text = OBJECT + "data:\n  a: [unclosed\n  b: c\n"
    found, [problem] = manifests.load_bytes(text.encode(), "f.yaml")
    assert found == []
    assert problem.rule.id == "yaml-syntax"
    assert (problem.file, problem.line) == ("f.yaml", 7)
    assert capfd.readouterr().err == ""  # rapidyaml's own report on fd 2 is hidden


SAMPLE = (ESTATE / "clusters/gpu-prod/clusterqueues.yaml").read_text()


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, len(SAMPLE) - 1), st.characters(codec="utf-8")),
        min_size=1,
        max_size=4,
    )
)
def test_a_corrupted_manifest_reads_as_pyyamls_path_reads_it(
    edits: list[tuple[int, str]],
) -> None:
    """Whatever a stray character does, the loader's answer is PyYAML's path's (a file the fast
    reader took and PyYAML refuses would fail later, where a field's line is looked up)."""
    chars = list(SAMPLE)
    for at, char in edits:
        chars[at] = char
    text = "".join(chars)  # a file's text: no lone surrogates (codec="utf-8")
    assert read(text) == slow(text)


@pytest.mark.parametrize(
    "text", ["]kind: ClusterQueue\n", "a: }b\n", "a:\n  - ,b\n", "a: [x, ]y]\n"]
)
def test_a_plain_scalar_starting_with_an_indicator_reads_as_pyyamls_path_reads_it(
    text: str,
) -> None:
    """rapidyaml reads `]kind` as a key; PyYAML refuses it (found by the test above in CI)."""
    assert read(text) == slow(text)


def test_a_quoted_string_starting_with_an_indicator_is_still_read_fast() -> None:
    text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: "]b", c: "{d}"}\n'
    assert fast(text) is not None
    assert read(text) == slow(text)


PROFILE = """apiVersion: kueue-gitops.io/v1alpha1
kind: TenantProfile
metadata:
  name: team-a
spec:
  owners: ["@example-org/team-a", '@example-org/ml']
  group: example-org:team-a
  clusters:
    gpu-prod: {namespaces: [team-a], clusterQueues: [cq-1]}
  labels: {a: "yes", b: 'no', n: "1", t: "2024-01-01", s: "1 2", z: "0"}
"""


def test_a_profile_of_quoted_owners_is_read_without_asking_every_node(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A quoted `"@org/team"`, `"yes"` or `"1"` is read as the string it is: a byte check
    (nowhere is it written plain) decides it, not a walk of rapidyaml's tree in Python, a call
    per node (it was 0.2 s of every run over 1,700 tenants)."""

    def walk(*_args: object) -> bool:
        raise AssertionError("the tree was walked")

    monkeypatch.setattr(fast_reader, "_plain_among", walk)
    assert same_as_slow(PROFILE)
    assert same_as_slow(SAMPLE)  # nominalQuota: "1" beside cq-1, v1beta2, t00001


@pytest.mark.parametrize(
    "text",
    [
        PROFILE + "extra: @example-org/team-a\n",  # the same string, plain: PyYAML refuses it
        PROFILE + "extra: [1]\n",  # a plain 1 in a flow sequence beside a quoted "1"
        PROFILE + "extra: {a: yes}\n",
        PROFILE + "extra:\n  - 0\n",
        PROFILE + "extra: 2024-01-01\n",
        PROFILE + "1: x\n",  # a plain key
        PROFILE + "extra: 1\n  2\n",  # "1 2" folded from two lines: a string either way
    ],
)
def test_a_plain_twin_of_a_quoted_string_still_reads_as_pyyamls_path_reads_it(
    text: str,
) -> None:
    assert read(text) == slow(text)


PROFILE_SAMPLE = PROFILE + "---\n" + (ESTATE / "tenants/team-a/profile.yaml").read_text()


@settings(max_examples=400, derandomize=True, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(PROFILE_SAMPLE) - 1),
            st.sampled_from(list(" \n\"'[]{},:#-@`01yn")) | st.characters(codec="utf-8"),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_a_corrupted_profile_of_quoted_strings_reads_as_pyyamls_path_reads_it(
    edits: list[tuple[int, str]],
) -> None:
    """Quotes dropped, moved or doubled around `"@org/team"`, `"yes"` and `"1"`: the byte check
    never keeps a plain one from the walk that would have sent the file to PyYAML."""
    chars = list(PROFILE_SAMPLE)
    for at, char in edits:
        chars[at] = char
    text = "".join(chars)
    assert read(text) == slow(text)


@settings(max_examples=2000, derandomize=True, deadline=None)
@given(st.text(alphabet=st.sampled_from(list(" \n\t\"\\[]{},:#|>'@`ab\u00a0")), max_size=40))
def test_the_indicator_gate_lets_every_match_through(text: str) -> None:
    """_INDICATOR_GATE (a literal-led search) is asked before _INDICATOR_FIRST (a class-led
    one, ten times slower): it must find something wherever the exact pattern does."""
    if fast_reader._INDICATOR_FIRST.search(text):
        assert fast_reader._INDICATOR_GATE.search(text) or text.lstrip()[:1] == '"'


def test_every_file_of_the_benchmark_corpus_reads_alike(tmp_path: Path) -> None:
    """The validate benchmark's corpus (bench/validate/generate.py: quoted `"@org/team"`
    owners, quoted quotas beside `cq-1` and `t00001`, flow sequences, many-document files):
    each file read alike by both, and every one by the fast reader."""
    from bench.validate.generate import generate

    generate(tmp_path, 45)
    paths = sorted(tmp_path.rglob("*.yaml"))
    assert len(paths) > 45 * 7
    for path in paths:
        assert same_as_slow(path.read_text()), path
