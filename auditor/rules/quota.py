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
        (`8`, `500m`, `64Gi`); the API server refuses anything else.""",
        yaml(COHORT_FILE, cohort("3Gi")),
        yaml(COHORT_FILE, cohort("3 GB")),
    ),
)

RULES = QUOTAS + QUANTITIES
