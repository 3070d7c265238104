"""Policy rules about the boundaries the cluster itself holds: the generated admission policies
and Kueue's Configuration (checks admission-policies and kueue-config in
auditor/validate/checks/)."""

from __future__ import annotations

from auditor.rules.rule import rule, yaml

LQ_FILE = "tenants/team-a/gpu-prod/localqueues.yaml"
BATCH = """
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata:
      name: batch
      namespace: team-a
      annotations: {argocd.argoproj.io/sync-wave: "1"%s}
    spec: {clusterQueue: team-a-cq}
"""
CONFIG_FILE = "clusters/gpu-prod/kueue/manager-config.yaml"


def kueue_config(configuration: str) -> str:
    """The ConfigMap Kueue reads, holding `configuration` (indented under the key)."""
    body = "\n".join(f"        {line}" for line in configuration.strip().splitlines())
    return f"""
    apiVersion: v1
    kind: ConfigMap
    metadata: {{name: kueue-manager-config, namespace: kueue-system}}
    data:
      controller_manager_config.yaml: |
{body}
    """


CONFIGURATION = """
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels: {platform.example.com/kueue: enabled}
integrations:
  frameworks: [batch/job]
"""

RULES = (
    rule(
        "admission-policies-stale",
        "error",
        "admission",
        "policy",
        "A cluster's admission policies differ from what the profiles and LocalQueues generate.",
        """clusters/<cluster>/admission-policies.yaml is made by `kueue-gitops generate
        policies` from the cluster profile (admission label, platform identities), the tenant
        profiles (approved priority levels), the LocalQueues of each namespace that admits work
        and the frameworks in Kueue's Configuration. The API server enforces what the file says,
        not what the profiles say: a profile or queue changed without regenerating leaves the
        cluster holding the old boundaries. Run `kueue-gitops generate policies` and commit the
        result; the finding shows the difference.""",
        yaml(LQ_FILE, BATCH % ", note: an annotation is not a boundary"),
        yaml(
            LQ_FILE,
            (BATCH % "")
            + """    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {name: urgent, namespace: team-a}
    spec: {clusterQueue: team-a-cq}
""",
        ),
    ),
    rule(
        "kueue-config-missing",
        "error",
        "kueue-config",
        "policy",
        "The repository holds no Kueue Configuration for a cluster.",
        """Kueue's own Configuration decides whether a Job without a queue name is managed at
        all (`manageJobsWithoutQueueName`) and in which namespaces (`managedJobsNamespaceSelector`).
        Left to upstream's defaults, such a Job runs outside every quota. Keep the ConfigMap
        Kueue reads, `kueue-system/kueue-manager-config` with the key
        `controller_manager_config.yaml`, in clusters/<cluster>/kueue/.""",
        yaml(CONFIG_FILE, kueue_config(CONFIGURATION)),
        yaml(
            CONFIG_FILE,
            """
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: kueue-config, namespace: kueue-system}
            data: {note: Kueue reads kueue-manager-config; this name is not it}
            """,
        ),
    ),
    rule(
        "kueue-config-invalid",
        "error",
        "kueue-config",
        "policy",
        "Kueue's Configuration is not what the cluster's Kueue release accepts.",
        """Kueue decodes its Configuration strictly when it starts: an unknown field, a value
        of the wrong type or an unknown framework stops the controller, and with it every
        admission. The Configuration is checked against the API of the release the cluster
        profile names (`spec.kueue.version`), derived from that release's Go types, at the line
        inside the ConfigMap.""",
        yaml(CONFIG_FILE, kueue_config(CONFIGURATION)),
        yaml(
            CONFIG_FILE,
            kueue_config(CONFIGURATION + "manageJobsWithoutQueueNames: true\n"),
        ),
    ),
    rule(
        "kueue-config-unmanaged-jobs",
        "error",
        "kueue-config",
        "policy",
        "Kueue's Configuration lets Jobs in namespaces that admit work escape its management.",
        """In a namespace with the admission label, Kueue must manage every Job, named queue or
        not: `manageJobsWithoutQueueName: true`, and a `managedJobsNamespaceSelector` that
        selects exactly the namespaces carrying the cluster's admission label. Otherwise a Job
        without `kueue.x-k8s.io/queue-name` starts at once, outside every quota, whenever the
        admission policy is not there to refuse it.""",
        yaml(CONFIG_FILE, kueue_config(CONFIGURATION)),
        yaml(
            CONFIG_FILE,
            kueue_config(CONFIGURATION.replace("QueueName: true", "QueueName: false")),
        ),
    ),
)
