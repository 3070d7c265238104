"""Where a rendered object's fields were written: the base, the patch, the values key."""

from __future__ import annotations

import time
from pathlib import Path

from auditor.render import apps, locate, tools
from auditor.repo import sources
from tests.unit.render.trees import Files

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


APP = """\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: nlp}
spec:
  source:
    path: chart
    helm:
      valueFiles: [../env/all.yaml, ../env/north.yaml]
      parameters:
        - name: queues.jobs.clusterQueue
          value: vision-cq
      valuesObject:
        queues:
          batch:
            clusterQueue: nlp-cq
        team: nlp
  destination: {name: north, namespace: nlp}
"""
ALL = "queues:\n  jobs: {clusterQueue: nlp-cq}\n  night:\n    clusterQueue: vision-cq\n"
NORTH = "queues:\n  night:\n    clusterQueue: nlp-cq\n  spare:\n    clusterQueue: vision-cq\n"
RANGED = """\
{{- range $name, $q := .Values.queues }}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: {{ $name }}
  namespace: {{ $.Release.Namespace }}
spec:
  clusterQueue: {{ $q.clusterQueue }}
{{- end }}
"""


def _app_values(app: str = APP, files: dict[str, str] | None = None) -> list[locate.Doc]:
    """The values of the Application's one source, as the Helm render passes them."""
    tree = Files({"apps/nlp.yaml": app, "chart/Chart.yaml": "name: c\n"})
    found = apps.sources(tree, ["north"])
    assert found is not None
    source = found[0][0]
    files = files if files is not None else {"env/north.yaml": NORTH, "env/all.yaml": ALL}
    return locate.helm_values(
        source.options["helm"], source.app, dict(source.lines), list(files.items())
    )


def _queue(name: str, target: str) -> dict[str, object]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": "nlp"},
        "spec": {"clusterQueue": target},
    }


CQ = ("spec", "clusterQueue")


def test_each_value_is_at_the_override_that_wins_by_its_whole_key_path() -> None:
    values = _app_values()

    def at(name: str, target: str) -> tuple[str, int]:
        return locate.trace_helm(_queue(name, target), "chart/t.yaml", RANGED, values)[CQ]

    assert at("jobs", "vision-cq") == ("apps/nlp.yaml", 11)  # the parameter over the file
    assert at("batch", "nlp-cq") == ("apps/nlp.yaml", 15)  # the valuesObject key's own line
    assert at("night", "nlp-cq") == ("env/north.yaml", 3)  # the later file wins
    assert at("spare", "vision-cq") == ("env/north.yaml", 5)  # not the other vision-cq


def test_a_values_text_is_placed_line_by_line() -> None:
    app = APP.replace(
        "      valuesObject:\n        queues:\n          batch:\n            clusterQueue: nlp-cq\n"
        "        team: nlp\n",
        "      values: |\n        queues:\n          batch:\n            clusterQueue: nlp-cq\n",
    )
    values = _app_values(app)
    places = locate.trace_helm(_queue("batch", "nlp-cq"), "chart/t.yaml", RANGED, values)
    assert places[CQ] == ("apps/nlp.yaml", 15)
    assert places[("metadata", "name")] == ("apps/nlp.yaml", 14)  # the item's key


def test_a_field_no_value_fed_is_at_its_template_line_below_range_and_separator() -> None:
    template = RANGED.replace("{{ $q.clusterQueue }}", '{{ $q.clusterQueue | default "x-cq" }}')
    places = locate.trace_helm(_queue("idle", "x-cq"), "chart/t.yaml", template, _app_values())
    assert places[CQ] == ("chart/t.yaml", 9)
    assert places[("metadata", "namespace")] == ("chart/t.yaml", 7)
    assert locate.kind_line(template, "LocalQueue", "idle") == 4


def test_a_subject_an_override_chose_is_at_the_override() -> None:
    template = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: viewers}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: view}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: admins
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: queue-admin
subjects:
  - kind: Group
    name: {{ .Values.admins }}
"""
    values = locate.helm_values(
        {"parameters": [{"name": "admins", "value": "acme:nlp"}]},
        "apps/nlp.yaml",
        {("helm", "parameters", 0): 20, ("helm", "parameters", 0, "value"): 21},
        [("chart/values.yaml", "admins: acme:platform\n")],
    )
    body = {
        "kind": "RoleBinding",
        "metadata": {"name": "admins"},
        "roleRef": {"kind": "ClusterRole", "name": "queue-admin"},
        "subjects": [{"kind": "Group", "name": "acme:nlp"}],
    }
    places = locate.trace_helm(body, "chart/rb.yaml", template, values)
    assert places[("subjects", 0)] == ("apps/nlp.yaml", 21)
    assert places[("subjects", 0, "kind")] == ("chart/rb.yaml", 15)
    assert places[("roleRef", "name")] == ("chart/rb.yaml", 13)  # the second document's
    assert locate.kind_line(template, "RoleBinding", "admins") == 7


def test_a_set_name_is_its_key_path() -> None:
    assert locate.set_path("a.b[0].c") == ("a", "b", 0, "c")
    assert locate.set_path(r"labels.acme\.io/team") == ("labels", "acme.io/team")


def test_a_value_an_application_sets_list_element_filled_in_is_at_the_element() -> None:
    appset = """\
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: teams}
spec:
  goTemplate: true
  generators:
    - list:
        elements:
          - team: nlp
            queue: nlp-cq
          - team: speech
            queue: vision-cq
  template:
    metadata: {name: "{{.team}}"}
    spec:
      source:
        path: chart
        helm:
          parameters:
            - name: queues.jobs.clusterQueue
              value: "{{.queue}}"
      destination: {name: north, namespace: "{{.team}}"}
"""
    tree = Files({"apps/teams.yaml": appset, "chart/Chart.yaml": "name: c\n"})
    found = apps.sources(tree, ["north"])
    assert found is not None
    speech = next(s for s in found[0] if s.application == "speech")
    values = locate.helm_values(speech.options["helm"], speech.app, dict(speech.lines), [])
    places = locate.trace_helm(_queue("jobs", "vision-cq"), "chart/t.yaml", RANGED, values)
    assert places[CQ] == ("apps/teams.yaml", 12)  # speech's element, not the template's line


def test_a_parameter_of_the_root_files_sources_is_at_its_line() -> None:
    root = """\
apiVersion: kueue-gitops.io/v1alpha1
kind: Layout
sources:
  - path: chart
    cluster: north
    namespace: nlp
    helm:
      parameters:
        - {name: queues.jobs.clusterQueue, value: vision-cq}
"""
    found = sources.root_file(Files({"kueue-gitops.yaml": root}))
    assert found is not None and found.sources is not None
    [source] = found.sources
    values = locate.helm_values(source.options["helm"], source.app, dict(source.lines), [])
    places = locate.trace_helm(_queue("jobs", "vision-cq"), "chart/t.yaml", RANGED, values)
    assert places[CQ] == ("kueue-gitops.yaml", 9)


def test_values_read_through_with_index_and_a_mapping_written_whole_are_traced() -> None:
    template = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: {{ index .Values.names "main" }}
{{- with .Values.queue }}
  labels: {tier: {{ .tier }}}
spec:
  resourceGroups:
    {{- toYaml .groups | nindent 4 }}
{{- end }}
"""
    text = """\
names: {main: vision}
queue:
  tier: gold
  groups:
    - coveredResources: [cpu]
      flavors:
        - name: standard
          resources:
            - {name: cpu, nominalQuota: "64"}
"""
    values = locate.helm_values({}, "apps/a.yaml", {}, [("chart/values.yaml", text)])
    body = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "vision", "labels": {"tier": "gold"}},
        "spec": {"resourceGroups": _rendered("64")["spec"]["resourceGroups"][:1]},  # type: ignore[index]
    }
    places = locate.trace_helm(body, "chart/cq.yaml", template, values)
    assert places[("metadata", "name")] == ("chart/values.yaml", 1)
    assert places[("metadata", "labels", "tier")] == ("chart/values.yaml", 3)
    assert places[QUOTA] == ("chart/values.yaml", 9)  # under the mapping toYaml wrote
