"""Where a rendered object's fields were written: the base, the patch, the values key."""

from __future__ import annotations

import time
from pathlib import Path

from auditor.render import locate, tools

BASE = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: vision
spec:
  resourceGroups:
    - coveredResources: [cpu]
      flavors:
        - name: standard
          resources:
            - name: cpu
              nominalQuota: "64"
"""

STRATEGIC = BASE.replace('nominalQuota: "64"', 'nominalQuota: "-8"')  # the patch's one change

JSON6902 = """\
- op: add
  path: /spec/resourceGroups/-
  value:
    coveredResources: [nvidia.com/gpu]
    flavors:
      - name: gpu-a100
        resources:
          - name: nvidia.com/gpu
            nominalQuota: "8"
"""


def _rendered(quota: str) -> dict[str, object]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "east-vision"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [
                        {"name": "standard", "resources": [{"name": "cpu", "nominalQuota": quota}]}
                    ],
                },
                {
                    "coveredResources": ["nvidia.com/gpu"],
                    "flavors": [
                        {
                            "name": "gpu-a100",
                            "resources": [{"name": "nvidia.com/gpu", "nominalQuota": "8"}],
                        }
                    ],
                },
            ]
        },
    }


QUOTA = ("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuota")
GPU_QUOTA = ("spec", "resourceGroups", 1, "flavors", 0, "resources", 0, "nominalQuota")


def test_a_field_a_patch_set_is_at_the_patch_and_the_rest_at_the_base() -> None:
    body = _rendered("-8")
    base = locate.base_of(locate.documents(BASE, "base/cq.yaml"), body)
    patches = locate.documents(STRATEGIC, "overlays/east/quota.yaml") + locate.documents(
        JSON6902, "components/gpu/gpu.yaml"
    )
    places = locate.trace_kustomize(body, base, patches)
    assert places[QUOTA] == ("overlays/east/quota.yaml", 12)
    assert places[GPU_QUOTA] == ("components/gpu/gpu.yaml", 9)  # a JSON 6902 patch's value
    assert places[("metadata", "name")] == ("base/cq.yaml", 4)  # namePrefix: the base's line
    assert places[("spec", "resourceGroups", 1)] == ("components/gpu/gpu.yaml", 4)  # its start


def test_a_field_no_patch_touched_is_at_the_base() -> None:
    body = _rendered("64")
    base = locate.base_of(locate.documents(BASE, "base/cq.yaml"), body)
    places = locate.trace_kustomize(body, base, [])
    assert places[QUOTA] == ("base/cq.yaml", 12)


def test_the_base_is_the_document_whose_name_the_rendered_one_holds() -> None:
    docs = locate.documents(BASE + "---\n" + BASE.replace("vision", "vis"), "base/cq.yaml")
    found = locate.base_of(docs, {"kind": "ClusterQueue", "metadata": {"name": "east-vision"}})
    assert found is not None and found.line == 1


def test_a_helm_field_is_at_the_values_key_that_fed_it_else_at_the_template() -> None:
    values = locate.documents("team: nlp\nqueue:\n  clusterQueue: robotics-cq\n", "env/north.yaml")
    defaults = locate.documents("queue:\n  name: jobs\n  clusterQueue: ''\n", "chart/values.yaml")
    template = (
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata:\n"
        "  name: {{ .Values.queue.name }}\nspec:\n"
        "  clusterQueue: {{ .Values.queue.clusterQueue }}\n"
    )
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": "jobs", "namespace": "nlp"},
        "spec": {"clusterQueue": "robotics-cq"},
    }
    places = locate.trace_helm(body, "chart/templates/lq.yaml", template, [*values, *defaults])
    assert places[("spec", "clusterQueue")] == ("env/north.yaml", 3)
    assert places[("metadata", "name")] == ("chart/values.yaml", 2)  # the default, by its key
    assert places[("apiVersion",)] == ("chart/templates/lq.yaml", 1)


def test_a_render_that_hangs_is_stopped_at_its_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    ran = tools.run(["sleep", "30"], cwd=tmp_path, deadline=0.5)
    assert ran.returncode is None and time.monotonic() - started < 5
