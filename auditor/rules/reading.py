"""Rules about reading the repository: YAML, files and folders (auditor/repo/)."""

from __future__ import annotations

from auditor.rules.rule import rule, said, yaml

LQ_FILE = "tenants/team-a/gpu-prod/localqueues.yaml"
LQ = yaml(
    LQ_FILE,
    """
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {name: batch, namespace: team-a}
    spec: {clusterQueue: team-a-cq}
    """,
)
FLAVOR = yaml(
    "clusters/gpu-prod/more-flavors.yaml",
    """
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata: {name: l4}
    spec:
      nodeLabels: {nvidia.com/gpu.product: NVIDIA-L4}
    """,
)

RULES = (
    rule(
        "yaml-syntax",
        "error",
        "input",
        "input",
        "The file is not valid YAML.",
        """The document cannot be parsed, so nothing in it is checked or synced. The finding
        names the line where the parser gave up; the mistake is often a line or two above it
        (an unclosed bracket or quote, a tab used for indentation).""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a
            spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
    rule(
        "yaml-duplicate-key",
        "error",
        "input",
        "input",
        "A mapping repeats a key.",
        """YAML parsers silently keep one of the two values (kubectl and Argo CD keep the
        last), so a reviewer reading the first one approves something that never applies.
        Remove one of them.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a}
            spec:
              clusterQueue: team-a-cq
              clusterQueue: team-b-cq
            """,
        ),
    ),
    rule(
        "yaml-merge-key",
        "error",
        "input",
        "input",
        "A mapping uses a YAML merge key (<<).",
        """Merge keys are not part of YAML 1.2 and Kubernetes tools disagree on them, so what
        the cluster receives depends on which tool read the file. Write the fields out.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a}
            spec:
              <<: {clusterQueue: team-a-cq}
            """,
        ),
    ),
    rule(
        "yaml-bad-key",
        "error",
        "input",
        "input",
        "A mapping key is a list or a mapping, not a scalar.",
        """Kubernetes objects are JSON, whose keys are strings: a complex key (`? [a, b]`)
        cannot be sent to the API server. Use a string key.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a}
            spec:
              ? [clusterQueue]
              : team-a-cq
            """,
        ),
    ),
    rule(
        "yaml-too-large",
        "error",
        "input",
        "input",
        "A document expands to more nodes than any manifest has (an alias bomb?).",
        """Anchors and aliases let a few lines expand to millions of nodes, which would exhaust
        the memory of every tool that reads the file. The document is not read; write it
        without nested aliases.""",
        LQ,
        yaml(
            "clusters/gpu-prod/bomb.yaml",
            """
            a: &a [x, x, x, x, x, x, x, x, x, x]
            b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
            c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
            d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
            e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
            f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
            """,
        ),
    ),
    rule(
        "yaml-recursive-alias",
        "error",
        "input",
        "input",
        "An alias refers to a node that contains it, so the document never ends.",
        """An anchor used inside its own node (`spec: &s {again: *s}`) describes an infinitely
        deep object, which no JSON document can hold and every tool reading it loops on. The
        document is not read; write the value out.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a}
            spec: &spec {clusterQueue: team-a-cq, again: *spec}
            """,
        ),
    ),
    rule(
        "yaml-too-deep",
        "error",
        "input",
        "input",
        "A document nests mappings and lists deeper than any Kubernetes object does.",
        """No Kubernetes object nests anywhere near 100 levels; a document that does is
        generated by mistake or made to exhaust the stack of the tools that read it. The
        document is not read.""",
        said("A ClusterQueue, about eight levels deep at its quota."),
        said("A document of 1,000 nested lists, `[[[[...]]]]`."),
    ),
    rule(
        "yaml-bad-number",
        "error",
        "input",
        "input",
        "A number cannot be carried to the API server: infinite, not a number, or too long.",
        """Kubernetes turns manifests into JSON, which has no infinity or NaN (`.inf`, `.nan`),
        and integers of thousands of digits are refused by every JSON reader on the way. The
        finding is at the value; write a real number, or a quoted string if text was meant.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a}
            spec: {clusterQueue: team-a-cq, weight: .inf}
            """,
        ),
    ),
    rule(
        "not-a-mapping",
        "error",
        "input",
        "input",
        "A YAML document is a list or a scalar, not an object.",
        """Every document in a manifest file must be one Kubernetes object. A list of objects
        is written as documents separated by `---`, not as a YAML list.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            - apiVersion: kueue.x-k8s.io/v1beta2
              kind: LocalQueue
              metadata: {name: batch, namespace: team-a}
              spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
    rule(
        "missing-identity",
        "error",
        "input",
        "input",
        "An object has no apiVersion, kind or metadata.name.",
        """Without them the object cannot be matched to a schema, a cluster object or a line
        in a later version of the file, so it is not checked at all.""",
        LQ,
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {namespace: team-a}
            spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
    rule(
        "not-utf8",
        "error",
        "input",
        "input",
        "A manifest file is not UTF-8.",
        """Kubernetes and Argo CD read manifests as UTF-8; a file saved in another encoding
        (Latin-1, UTF-16) is misread or refused. The finding names the first bad byte; save
        the file as UTF-8.""",
        said("A file saved as UTF-8 (a byte-order mark is allowed)."),
        said("A file with a Latin-1 `é` (byte 0xe9) in an annotation."),
    ),
    rule(
        "unreadable-file",
        "error",
        "input",
        "input",
        "A file in the repository cannot be read.",
        """The file exists but reading it failed (permissions, a broken file system), so its
        objects are neither checked nor compared; the message has the operating system's
        reason.""",
        said("Every file under clusters/ and tenants/ is readable by the user running the tool."),
        said("`chmod 000 clusters/gpu-prod/clusterqueues.yaml`."),
    ),
    rule(
        "special-file",
        "error",
        "input",
        "input",
        "A manifest path is a FIFO, socket or device, not a regular file.",
        """Git cannot hold such a file and Argo CD never syncs one; reading a FIFO would wait
        forever for a writer. It is refused without being opened: remove it, or replace it
        with the file it stands for.""",
        said("`clusters/gpu-prod/clusterqueues.yaml` is a regular file."),
        said("`mkfifo clusters/gpu-prod/extra.yaml`."),
    ),
    rule(
        "symlink-loop",
        "error",
        "input",
        "input",
        "A symbolic link leads back into a folder that holds it, or links go in a circle.",
        """Following it would list the same files forever, so the folder behind it is not
        read, and nothing in it is checked. A linked folder elsewhere in the repository is
        followed and judged like any other; link to that instead.""",
        said("`clusters/gpu-staging/shared` is a link to `../gpu-prod/shared`."),
        said("`tenants/team-a/gpu-prod/again` is a link to `..`."),
    ),
    rule(
        "file-too-large",
        "error",
        "input",
        "input",
        "A manifest file is larger than Argo CD syncs (10 MiB).",
        """Argo CD refuses a directory application whose manifests pass 10M together (its
        repo server's `reposerver.max.combined.directory.manifests.size`), so this file can
        never sync. It is not read, which keeps the audit's time and memory bounded; split it
        or generate its objects elsewhere.""",
        said("A ClusterQueue file of a few kilobytes."),
        said("A 50 MB file of 122,000 ConfigMaps under `tenants/team-a/gpu-prod/`."),
    ),
    rule(
        "symlink-outside",
        "error",
        "input",
        "input",
        "A symbolic link points outside the repository.",
        """Argo CD refuses such links, and following them would read files nobody reviewed in
        this repository. The file is not read; copy the content in, or link within the
        repository.""",
        said("`clusters/gpu-staging/rbac.yaml` is a link to `../gpu-prod/rbac.yaml`."),
        said(
            "`clusters/gpu-prod/extra.yaml` is a link to `/etc/kueue/extra.yaml`, or the folder "
            "`tenants/team-a/gpu-prod` is a link to `/srv/team-a`."
        ),
    ),
    rule(
        "duplicate-object",
        "error",
        "input",
        "input",
        "The same object is defined twice for one cluster.",
        """Two files (or two documents) define the same kind, namespace and name for the same
        cluster: Argo CD would apply both and the cluster would flip between them. The finding
        is at the second definition and names the first; keep one.""",
        FLAVOR,
        yaml(
            "clusters/gpu-prod/more-flavors.yaml",
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ResourceFlavor
            metadata: {name: a100}
            spec:
              nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}
            """,
        ),
    ),
    rule(
        "unknown-cluster-folder",
        "error",
        "layout",
        "input",
        "A tenant folder has a subfolder that names no cluster.",
        """`tenants/<tenant>/<cluster>/` is synced to the cluster of that name; a folder whose
        name is not a folder of clusters/ (a typo, a cluster since removed) is synced nowhere,
        so its manifests silently do nothing. Rename or remove it.""",
        LQ,
        yaml(
            "tenants/team-a/gpu-prd/localqueues.yaml",
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a}
            spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
    rule(
        "stray-manifest",
        "error",
        "layout",
        "input",
        "A manifest lies directly in a tenant folder, outside any cluster's folder.",
        """Only `tenants/<tenant>/profile.yaml` belongs directly in a tenant folder; Argo CD
        syncs the cluster subfolders, so any other file there is synced nowhere. Move it into
        the folder of the cluster it is for.""",
        LQ,
        yaml(
            "tenants/team-a/localqueues.yaml",
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata: {name: batch, namespace: team-a}
            spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
    rule(
        "rendered-folder-unsupported",
        "error",
        "layout",
        "input",
        "A folder is built by kustomize or Helm, which kueue-gitops does not support yet.",
        """A folder with a kustomization.yaml or a Chart.yaml is rendered by Argo CD before it is
        synced, so the files in it are not the objects the cluster gets, and kueue-gitops
        cannot check them: the whole folder is left out of validate, drift and plan. Commit
        the rendered manifests instead (`kustomize build` or `helm template` into the folder),
        or keep the folder out of clusters/ and tenants/.""",
        FLAVOR,
        yaml(
            "clusters/gpu-prod/monitoring/kustomization.yaml",
            """
            apiVersion: kustomize.config.k8s.io/v1beta1
            kind: Kustomization
            resources: [alerts.yaml]
            """,
        ),
    ),
    rule(
        "suppression-invalid",
        "error",
        "input",
        "input",
        "A suppress.kueue-gitops.io/ annotation names no rule or has no date and reason.",
        """An object accepts a finding on purpose with the annotation
        `suppress.kueue-gitops.io/<rule>: "YYYY-MM-DD: reason"`: the rule ID (`kueue-gitops
        rules` lists them), the last day the suppression holds, and why (ten characters at
        least). One that cannot be read suppresses nothing, so it is reported instead of
        silently ignored.""",
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata:
              name: batch
              namespace: team-a
              annotations:
                suppress.kueue-gitops.io/stop-policy-holds: "2027-03-31: held for the Q1 migration"
            spec: {clusterQueue: team-a-cq}
            """,
        ),
        yaml(
            LQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: LocalQueue
            metadata:
              name: batch
              namespace: team-a
              annotations:
                suppress.kueue-gitops.io/stop-policy-holds: "until the migration is done"
            spec: {clusterQueue: team-a-cq}
            """,
        ),
    ),
)
