"""Rules about objects against their cluster's API: versions, schemas, CEL (auditor/schemas/)."""

from __future__ import annotations

from auditor.rules.rule import rule, said, yaml

FILE = "clusters/gpu-prod/resourceflavors.yaml"
FLAVOR = yaml(
    FILE,
    """
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata: {name: a100}
    spec:
      nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    """,
)
CQ_FILE = "clusters/gpu-prod/clusterqueues.yaml"
CQ = yaml(
    CQ_FILE,
    """
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {name: team-a-cq}
    spec:
      cohortName: ai-shared
      preemption: {reclaimWithinCohort: LowerPriority}
    """,
)

RULES = (
    rule(
        "unknown-kind",
        "error",
        "version",
        "schema",
        "The cluster serves no such kind.",
        """The object's group and kind have no schema in `schemas/<cluster>/`: a typo in
        `kind` or `apiVersion`, or a CRD not installed there. If the CRD was just installed,
        run `kueue-gitops schemas fetch --cluster <cluster>` and commit the schemas.""",
        FLAVOR,
        yaml(
            FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ResourceFlavour
            metadata: {name: a100}
            """,
        ),
    ),
    rule(
        "version-not-served",
        "error",
        "version",
        "schema",
        "The cluster does not serve the object's apiVersion.",
        """The kind exists on the cluster but not in this version, so the sync would fail. The
        message lists the versions served; write the object to one of them (its fields too:
        changing the apiVersion string alone does not migrate an object).""",
        FLAVOR,
        yaml(
            FILE,
            """
            apiVersion: kueue.x-k8s.io/v1alpha1
            kind: ResourceFlavor
            metadata: {name: a100}
            """,
        ),
    ),
    rule(
        "version-deprecated",
        "warning",
        "version",
        "schema",
        "The object's apiVersion is deprecated on the cluster.",
        """It still works, but a later Kueue or Kubernetes release stops serving it and the
        sync will then fail. Migrate the object to the storage version the message names.""",
        FLAVOR,
        yaml(
            FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta1
            kind: ResourceFlavor
            metadata: {name: a100}
            spec:
              nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
            """,
        ),
    ),
    rule(
        "field-of-other-version",
        "error",
        "version",
        "schema",
        "A field belongs to another version of the kind: the object is half migrated.",
        """The field is unknown in the object's apiVersion but exists in another served version
        (v1beta1 `spec.cohort` in a v1beta2 ClusterQueue, which calls it `cohortName`). The API
        server would drop it, silently changing what the object means. Write every field to the
        schema of the object's version.""",
        CQ,
        yaml(
            CQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ClusterQueue
            metadata: {name: team-a-cq}
            spec:
              cohort: ai-shared
            """,
        ),
    ),
    rule(
        "unknown-field",
        "error",
        "schema",
        "schema",
        "A field the kind's schema does not have.",
        """The API server drops unknown fields (or refuses them, with strict field validation),
        so a misspelt field silently does nothing. Fix the spelling or remove the field; the
        finding points at its line.""",
        FLAVOR,
        yaml(
            FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ResourceFlavor
            metadata: {name: a100}
            spec:
              nodeLabel: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}
            """,
        ),
    ),
    rule(
        "schema",
        "error",
        "schema",
        "schema",
        "A value breaks the kind's JSON Schema (type, enum, pattern, required field).",
        """The object is checked against the schema committed in `schemas/<cluster>/` for its
        kind and version, as the API server would check it, and the sync would be refused. The
        message says which constraint failed at which field.""",
        CQ,
        yaml(
            CQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ClusterQueue
            metadata: {name: team-a-cq}
            spec:
              cohortName: ai-shared
              queueingStrategy: FIFO
            """,
        ),
    ),
    rule(
        "invalid-name",
        "error",
        "schema",
        "schema",
        "metadata.name or metadata.namespace is not a name the API server accepts.",
        """Names are DNS-1123 subdomains (lower-case letters, digits, `-` and `.`, at most 253
        characters); Namespaces and namespace references are DNS-1123 labels (no `.`, at most
        63); RBAC objects may hold anything but `/` and `%`. The API server refuses others.""",
        FLAVOR,
        yaml(
            FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ResourceFlavor
            metadata: {name: A100_80GB}
            """,
        ),
    ),
    rule(
        "missing-schema",
        "error",
        "schema",
        "schema",
        "The schema index lists the kind but its schema file is gone.",
        """`schemas/<cluster>/index.json` says the cluster serves the kind and version, but the
        schema file next to it is missing, so the object cannot be checked. Run `kueue-gitops
        schemas fetch --cluster <cluster>` and commit what it writes.""",
        said("`schemas/gpu-prod/` holds `index.json` and every schema file it lists."),
        said("`schemas/gpu-prod/kueue.x-k8s.io/resourceflavor_v1beta2.json` was deleted."),
    ),
    rule(
        "cel",
        "error",
        "cel",
        "schema",
        "The object breaks one of its CRD's CEL validation rules.",
        """CRDs carry rules the JSON Schema cannot express (`x-kubernetes-validations`), and
        the API server refuses an object that breaks one. They are evaluated offline, after
        the schema's defaults are applied; the message quotes the rule. Transition rules
        (`oldSelf`) only apply to updates and are not checked offline.""",
        CQ,
        yaml(
            CQ_FILE,
            """
            apiVersion: kueue.x-k8s.io/v1beta2
            kind: ClusterQueue
            metadata: {name: team-a-cq}
            spec:
              cohortName: ai-shared
              preemption:
                borrowWithinCohort: {policy: LowerPriority}
            """,
        ),
    ),
    rule(
        "server-side-rejected",
        "error",
        "server-side",
        "schema",
        "The cluster's API server refuses the object in a dry-run apply (`validate "
        "--server-side`).",
        """With `--server-side`, each object is applied with `dryRun=All` and strict field
        validation, in Argo CD's sync order, so the real API server (with its admission
        webhooks) judges it. The message is the server's; a refusal here means the sync
        would fail the same way.""",
        said("A LocalQueue the cluster's API server and Kueue's webhook accept."),
        said(
            "A ClusterQueue the Kueue webhook refuses, e.g. one whose flavors are in a "
            "different order than the webhook requires."
        ),
    ),
)
