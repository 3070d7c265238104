"""Policy rules that are Kueue's validating webhooks, offline (check kueue-webhook in
auditor/validate/checks/): what the pinned Kueue refuses although its CRDs accept it."""

from __future__ import annotations

from auditor.rules.rule import rule, yaml

CQ_FILE = "clusters/gpu-prod/clusterqueues.yaml"
RF_FILE = "clusters/gpu-prod/resourceflavors.yaml"


def cluster_queue(spec: str) -> str:
    return f"""
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ClusterQueue
    metadata: {{name: team-a-cq}}
    spec:
      cohortName: ai-shared
      {spec}
    """


def quota(nominal: str, covered: str = "nvidia.com/gpu") -> str:
    return (
        f"resourceGroups:\n        - coveredResources: [{covered}]\n          flavors:\n"
        f'            - {{name: a100, resources: [{{name: {covered}, nominalQuota: "{nominal}"}}]}}'
    )


def flavor(spec: str) -> str:
    return f"""
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: ResourceFlavor
    metadata: {{name: a100}}
    spec:
      {spec}
    """


SELECTOR = (
    "namespaceSelector:\n        matchExpressions:\n          - {{key: {key}, operator: {op}}}"
)
TAINT = "{key: nvidia.com/gpu, value: present, effect: NoSchedule}"

RULES = (
    rule(
        "quantity-negative",
        "error",
        "quota",
        "policy",
        "A quota or fair-sharing weight is negative.",
        """The CRDs' pattern accepts a sign, so `nominalQuota: "-2"` passes the schema and CEL;
        Kueue's webhook refuses a negative nominalQuota, borrowingLimit, lendingLimit or
        fairSharing.weight ("must be greater than or equal to 0"), and the sync fails.""",
        yaml(CQ_FILE, cluster_queue(quota("2"))),
        yaml(CQ_FILE, cluster_queue(quota("-2"))),
    ),
    rule(
        "fair-sharing-weight-tiny",
        "error",
        "quota",
        "policy",
        "A fairSharing.weight is above 0 but not above 1n.",
        """Kueue refuses a weight that small ("When not 0, weight must be > 10e-9"): shares
        computed with it would overflow. Use 0 (always last) or a real weight.""",
        yaml(CQ_FILE, cluster_queue("fairSharing: {weight: 500m}")),
        yaml(CQ_FILE, cluster_queue("fairSharing: {weight: 1n}")),
    ),
    rule(
        "resource-name-invalid",
        "error",
        "quota",
        "policy",
        "A covered resource is not a qualified name.",
        """Resource names are label keys: an optional DNS prefix and `/`, then at most 63
        letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit. Kueue's
        webhook refuses others (the CRD does not).""",
        yaml(CQ_FILE, cluster_queue(quota("2"))),
        yaml(CQ_FILE, cluster_queue(quota("2", covered="nvidia.com/gpu_"))),
    ),
    rule(
        "quota-too-many",
        "error",
        "quota",
        "policy",
        "A ClusterQueue has more flavors, resources or flavor-resource pairs than Kueue takes.",
        """The CRD allows 16 groups of 64 flavors and 64 resources; Kueue's webhook allows at
        most 256 flavors and 256 covered resources in all, and 512 flavor-resource pairs in one
        group. Split the queue, or group flavors differently.""",
        yaml(CQ_FILE, cluster_queue(quota("2"))),
        yaml(
            CQ_FILE,
            cluster_queue(
                "resourceGroups:\n        - coveredResources: [r0, r1, r2, r3, r4, r5, r6, r7, "
                "r8]\n          flavors:\n"
                + "\n".join(
                    f"            - {{name: f{f}, resources: ["
                    + ", ".join(f"{{name: r{r}, nominalQuota: 1}}" for r in range(9))
                    + "]}"
                    for f in range(57)
                )
            ),
        ),
    ),
    rule(
        "namespace-selector-invalid",
        "error",
        "label",
        "policy",
        "A ClusterQueue's namespaceSelector is not a valid label selector.",
        """Kueue's webhook validates it as Kubernetes does: operators In, NotIn (with values),
        Exists and DoesNotExist (without), keys that are qualified names, values that are
        label values. The CRD accepts any strings.""",
        yaml(
            CQ_FILE, cluster_queue(SELECTOR.format(key="platform.example.com/kueue", op="Exists"))
        ),
        yaml(CQ_FILE, cluster_queue(SELECTOR.format(key="platform.example.com/kueue", op="Has"))),
    ),
    rule(
        "flavor-labels-invalid",
        "error",
        "flavor",
        "policy",
        "A ResourceFlavor's nodeLabels, taint or toleration key or value is not a valid label.",
        """Kueue's webhook validates node labels, taint keys and values, and toleration keys
        as Kubernetes validates labels; the CRD does not.""",
        yaml(RF_FILE, flavor("nodeLabels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}")),
        yaml(RF_FILE, flavor("nodeLabels: {nvidia.com/gpu.product: NVIDIA A100 80GB}")),
    ),
    rule(
        "flavor-taint-repeated",
        "error",
        "flavor",
        "policy",
        "A ResourceFlavor repeats a node taint with the same key and effect.",
        """Kueue's webhook refuses taints that are not unique by key and effect pair, as the
        API server does on Nodes.""",
        yaml(RF_FILE, flavor(f"nodeTaints: [{TAINT}]")),
        yaml(RF_FILE, flavor(f"nodeTaints: [{TAINT}, {TAINT.replace('present', 'absent')}]")),
    ),
)
