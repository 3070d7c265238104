"""Which folder syncs where, as Applications and ApplicationSets say (auditor/render/apps.py)."""

from __future__ import annotations

from auditor.render import apps
from tests.unit.render.trees import Files

APPSET = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: sites}
spec:
  goTemplate: @go@
  generators:
    - git:
        repoURL: https://git.example/x.git
        directories:
          - path: sites/*/*
          - path: sites/old/*
            exclude: true
  template:
    metadata: {name: "@name@"}
    spec:
      source: {repoURL: https://git.example/x.git, path: "@path@"}
      destination: {name: "@cluster@", namespace: "@ns@"}
"""


def appset(**fill: str) -> str:
    text = APPSET
    for key, value in fill.items():
        text = text.replace(f"@{key}@", value)
    return text


def test_a_git_directory_generator_maps_each_folder_with_go_templates() -> None:
    text = appset(
        go="true", name="{{.path.basename}}", path="{{.path.path}}",
        cluster="{{index .path.segments 1}}", ns="{{.path.basename}}",
    )  # fmt: skip
    tree = Files(
        {
            "argo/sites.yaml": text,
            "sites/east/vision/kustomization.yaml": "resources: []\n",
            "sites/west/speech/lq.yaml": "{}\n",
            "sites/old/legacy/lq.yaml": "{}\n",
        }
    )
    found = apps.sources(tree, {"east", "west"})
    assert found is not None
    sources, findings = found
    assert findings == []
    assert {(s.path, s.cluster, s.namespace) for s in sources} == {
        ("sites/east/vision", "east", "vision"),
        ("sites/west/speech", "west", "speech"),
    }


def test_fasttemplate_parameters_are_filled_too() -> None:
    text = appset(
        go="false", name="{{path.basename}}", path="{{path}}", cluster="{{path[1]}}",
        ns="{{path.basename}}",
    )  # fmt: skip
    tree = Files({"argo/sites.yaml": text, "sites/east/vision/lq.yaml": "{}\n"})
    found = apps.sources(tree, {"east"})
    assert found is not None
    assert [(s.path, s.cluster) for s in found[0]] == [("sites/east/vision", "east")]


def test_an_expression_it_cannot_fill_is_a_finding_on_the_applicationset() -> None:
    text = appset(
        go="true", name="x", path="{{.path.path}}", cluster="{{.path.basename | upper}}", ns="n"
    )
    tree = Files({"argo/sites.yaml": text, "sites/east/vision/lq.yaml": "{}\n"})
    found = apps.sources(tree, {"east"})
    assert found is not None
    sources, findings = found
    assert sources == []
    assert [(f.rule.id, f.file, f.line) for f in findings] == [
        ("argocd-application-unread", "argo/sites.yaml", 1)
    ]
    assert "upper" in findings[0].message


def test_a_repository_without_argo_cd_objects_has_no_mapping() -> None:
    assert apps.sources(Files({"a/lq.yaml": "kind: LocalQueue\n"}), {"east"}) is None


APP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: vision}
spec:
  source: {repoURL: https://git.example/x.git, path: @path@}
  destination: {name: east, namespace: vision}
"""


def test_an_application_whose_path_is_no_folder_is_a_finding_not_a_silent_skip() -> None:
    tree = Files({"argo/vision.yaml": APP.replace("@path@", "sites/east/vison"),
                  "sites/east/vision/lq.yaml": "{}\n"})  # fmt: skip
    found = apps.sources(tree, {"east"})
    assert found is not None
    sources, findings = found
    assert sources == []
    assert [(f.rule.id, f.file, f.line) for f in findings] == [
        ("argocd-application-unread", "argo/vision.yaml", 1)
    ]
    assert "'sites/east/vison' is no folder" in findings[0].message
    right = Files({"argo/vision.yaml": APP.replace("@path@", "sites/east/vision"),
                   "sites/east/vision/lq.yaml": "{}\n"})  # fmt: skip
    assert [(s.path, s.cluster) for s in apps.sources(right, {"east"})[0]] == [  # type: ignore[index]
        ("sites/east/vision", "east")
    ]
