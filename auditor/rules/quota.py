"""Policy rules about quota: what Kueue would refuse, never use, or the nodes cannot hold
(checks quotas and quantities in auditor/validate/checks/)."""

from __future__ import annotations

from auditor.rules.rule import rule, yaml

CQ_FILE = "clusters/gpu-prod/clusterqueues.yaml"


def cluster_queue(groups: str, cohort: str = "cohortName: ai-shared") -> str:
    """team-a-cq with the given resource groups."""
    head = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: team-a-cq}"
    return f"{head}\nspec:\n  {cohort}\n  resourceGroups:\n{groups}"


def group(covered: str, *flavors: tuple[str, list[str]]) -> str:
    """One resource group: each flavor's name with its resource entries (flow mappings)."""
    lines = [f"    - coveredResources: [{covered}]", "      flavors:"]
    for name, resources in flavors:
        lines += [f"        - name: {name}", "          resources:"]
        lines += [f"            - {{{entry}}}" for entry in resources]
    return "\n".join(lines)


CPU = 'name: cpu, nominalQuota: "64"'


def gpu(nominal: str = "8", **limits: str) -> str:
    fields = "".join(f', {k}: "{v}"' for k, v in limits.items())
    return f'name: nvidia.com/gpu, nominalQuota: "{nominal}"{fields}'


def flavor(*resources: str, name: str = "a100") -> tuple[str, list[str]]:
    return name, list(resources)


BOTH = "cpu, nvidia.com/gpu"
CQ = yaml(CQ_FILE, cluster_queue(group(BOTH, flavor(CPU, gpu(lendingLimit="4")))))

QUOTAS = (
    rule(
        "limit-without-cohort",
        "error",
        "quota",
        "policy",
        "A borrowingLimit or lendingLimit on a ClusterQueue (or Cohort) with no cohort.",
        """Limits say how much may be borrowed from or lent to the rest of a cohort; without
        `spec.cohortName` (a Cohort: `spec.parentName`) there is nobody to borrow from, and
        Kueue's webhook refuses the object. Join a cohort or drop the limit.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(
                group(BOTH, flavor(CPU, gpu(borrowingLimit="4"))),
                cohort="queueingStrategy: BestEffortFIFO",
            ),
        ),
    ),
    rule(
        "lending-over-nominal",
        "error",
        "quota",
        "policy",
        "A ClusterQueue's lendingLimit is larger than its nominalQuota.",
        """A queue cannot lend more than it has; Kueue's webhook refuses it. Lower the
        lendingLimit to at most the nominalQuota.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(group(BOTH, flavor(CPU, gpu(lendingLimit="16")))),
        ),
    ),
    rule(
        "flavor-missing",
        "error",
        "quota",
        "policy",
        "A ClusterQueue names a ResourceFlavor the cluster does not define.",
        """Kueue marks such a ClusterQueue inactive and admits nothing through it. Define the
        flavor in `clusters/<cluster>/` or fix the name (the message lists the known ones).""",
        CQ,
        yaml(CQ_FILE, cluster_queue(group(BOTH, flavor(CPU, gpu(), name="v100")))),
    ),
    rule(
        "flavor-repeated",
        "error",
        "quota",
        "policy",
        "A flavor appears twice in a ClusterQueue's or Cohort's resourceGroups.",
        """Each flavor may be listed once across all resource groups; Kueue's webhook refuses
        a repeat. Merge the entries.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(group(BOTH, flavor(CPU, gpu()), flavor(CPU, gpu()))),
        ),
    ),
    rule(
        "resource-repeated",
        "error",
        "quota",
        "policy",
        "A resource is covered by two resource groups.",
        """Each resource belongs to exactly one resource group (its coveredResources); Kueue's
        webhook refuses a repeat. Move all its flavors into one group.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(
                group(BOTH, flavor(CPU, gpu())) + "\n" + group("cpu", flavor(CPU, name="cpu-only"))
            ),
        ),
    ),
    rule(
        "resource-order",
        "error",
        "quota",
        "policy",
        "A flavor's resources differ from its group's coveredResources, or are in another order.",
        """Every flavor of a resource group must list exactly the group's coveredResources, in
        the same order; Kueue's webhook refuses anything else.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(group(BOTH, flavor(gpu(), CPU))),
        ),
    ),
    rule(
        "borrowing-over-lendable",
        "warning",
        "quota",
        "policy",
        "A borrowingLimit is more than the rest of the cohort could ever lend.",
        """The limit promises borrowing that cannot happen: the other members of the cohort
        tree (their nominal quota, capped by their lendingLimit) hold less. The estimate
        ignores Cohort-level limits, so it never warns wrongly. Lower the limit, or raise what
        the others lend.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(group(BOTH, flavor(CPU, gpu(borrowingLimit="8")))),
        ),
    ),
    rule(
        "capacity-exceeded",
        "error",
        "quota",
        "policy",
        "The nominal quotas of a flavor on a cluster add up to more than its nodes hold.",
        """The cluster profile's `capacity` says what the nodes behind each flavor really
        hold; quota beyond it admits work that then cannot be scheduled. The message lists
        each queue's share; lower one, or raise the declared capacity after adding nodes.""",
        CQ,
        yaml(
            CQ_FILE,
            cluster_queue(group(BOTH, flavor(CPU, gpu("64")))),
        ),
    ),
)


def cohort(memory: str) -> str:
    head = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: ai-shared}"
    memory_only = flavor(f"name: memory, nominalQuota: {memory}", name="cpu-only")
    return f"{head}\nspec:\n  resourceGroups:\n{group('memory', memory_only)}"


COHORT_FILE = "clusters/gpu-prod/cohorts.yaml"
QUANTITIES = (
    rule(
        "quantity-not-canonical",
        "warning",
        "quota",
        "policy",
        "A quantity is not written the way the API server prints it back.",
        """Kueue re-encodes quota quantities (`1000m` becomes `1`, `3072Mi` becomes `3Gi`), so
        Argo CD shows the object OutOfSync forever. Write the value the message gives.""",
        yaml(COHORT_FILE, cohort("3Gi")),
        yaml(COHORT_FILE, cohort("3072Mi")),
    ),
    rule(
        "quantity-invalid",
        "error",
        "quota",
        "policy",
        "A quota field is not a Kubernetes quantity.",
        """nominalQuota, borrowingLimit, lendingLimit and fairSharing.weight are quantities
        (`8`, `500m`, `64Gi`); the API server refuses anything else. A value beyond 1e100
        (`1e309`) is refused too: no node holds it, and Kueue's 64-bit arithmetic cannot.""",
        yaml(COHORT_FILE, cohort("3Gi")),
        yaml(COHORT_FILE, cohort("3 GB")),
    ),
)


def cohorts(*links: tuple[str, str | None]) -> str:
    """Cohorts by (name, parentName)."""
    return "\n---\n".join(
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\n"
        + (f"spec: {{parentName: {parent}}}" if parent else "spec: {}")
        for name, parent in links
    )


TREE = yaml(COHORT_FILE, cohorts(("ai-shared", "example-org"), ("example-org", None)))
COHORT_TREE = (
    rule(
        "cohort-cycle",
        "error",
        "quota",
        "policy",
        "Cohorts' parentNames form a cycle.",
        """Kueue accepts each Cohort, then admits nothing anywhere in a tree whose parents loop
        until the loop is broken. Make one Cohort of the loop a root (no parentName).""",
        TREE,
        yaml(COHORT_FILE, cohorts(("ai-shared", "example-org"), ("example-org", "ai-shared"))),
    ),
    rule(
        "cohort-parent-missing",
        "error",
        "quota",
        "policy",
        "A Cohort's parentName names no Cohort on its cluster.",
        """Kueue makes an implicit, empty cohort of the name, so the subtree is cut off from
        the tree and pool it was meant to join (a typo, or a Cohort not yet committed). Define
        the parent, or fix the name.""",
        TREE,
        yaml(COHORT_FILE, cohorts(("ai-shared", "exmaple-org"), ("example-org", None))),
    ),
)

RF_FILE = "clusters/gpu-prod/resourceflavors.yaml"


def flavors(*entries: tuple[str, str]) -> str:
    """ResourceFlavors by (name, spec in flow style)."""
    return "\n---\n".join(
        f"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\n"
        f"spec: {spec}"
        for name, spec in entries
    )


def labels(model: str) -> str:
    return f"{{nodeLabels: {{nvidia.com/gpu.product: {model}}}}}"


def tolerating(names: str) -> str:
    return f"""
    apiVersion: kueue-gitops.io/v1alpha1
    kind: TenantProfile
    metadata: {{name: team-b}}
    spec:
      owners: ["@example-org/team-b"]
      clusters:
        gpu-prod: {{namespaces: [team-b], clusterQueues: [team-b-cq]}}
      flavors: [{names}]
    """


A100 = ("a100", labels("NVIDIA-A100-SXM4-80GB"))
FLAVORS = (
    rule(
        "gpu-flavor-unlabelled",
        "error",
        "flavor",
        "policy",
        "A ClusterQueue offers a GPU resource in a flavor with no nodeLabels.",
        """A flavor without nodeLabels matches every node, so quota given for one GPU model
        admits work onto any: the models are no longer distinct. Label each GPU flavor with
        what tells its nodes apart (nvidia.com/gpu.product, a pool label).""",
        yaml(RF_FILE, flavors(A100)),
        yaml(RF_FILE, flavors(("a100", "{}"))),
    ),
    rule(
        "flavor-overlap",
        "error",
        "flavor",
        "policy",
        "Two ResourceFlavors of a cluster have the same nodeLabels and nodeTaints.",
        """They select the same nodes, so the quota of each is quota for one class of hardware
        and capacity is counted twice. Give every flavor a label (or taint) of its own.""",
        yaml(RF_FILE, flavors(A100, ("h100", labels("NVIDIA-H100-80GB-HBM3")))),
        yaml(RF_FILE, flavors(A100, ("h100", labels("NVIDIA-A100-SXM4-80GB")))),
    ),
    rule(
        "flavor-not-tolerated",
        "error",
        "flavor",
        "policy",
        "A ClusterQueue offers a tenant a flavor its profile does not list in `flavors`.",
        """Some flavors cost failures: spot nodes are reclaimed at short notice. A tenant
        profile's `flavors` lists the ones its jobs tolerate; every ClusterQueue the tenant
        uses offers only those. Remove the flavor from the queue, or add it to the profile
        once the jobs are known to survive it.""",
        yaml("tenants/team-b/profile.yaml", tolerating("cpu-only, a100, h100")),
        yaml("tenants/team-b/profile.yaml", tolerating("cpu-only, a100")),
    ),
)

RULES = QUOTAS + COHORT_TREE + FLAVORS + QUANTITIES
