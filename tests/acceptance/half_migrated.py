"""A repository half way through a migration, for the suppression and JUnit tests."""

from __future__ import annotations

CQS = "clusters/gpu-prod/clusterqueues.yaml"


def half_migrated(annotation: str | None) -> str:
    """A v1beta2 ClusterQueue still using v1beta1's spec.cohort (an error), guarded from prune."""
    extra = f"\n    {annotation}" if annotation else ""
    return f"""
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: half-migrated
  annotations:
    argocd.argoproj.io/sync-options: Prune=false,Delete=false{extra}
spec:
  cohort: ai-shared
  namespaceSelector: {{matchLabels: {{platform.example.com/kueue: enabled}}}}
  resourceGroups:  # enough that a Job asking cpu and memory could be admitted
    - coveredResources: [cpu, memory]
      flavors:
        - name: cpu-only
          resources:
            - {{name: cpu, nominalQuota: "1"}}
            - {{name: memory, nominalQuota: 1Gi}}
"""
