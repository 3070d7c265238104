"""Reading and writing live clusters. Only `auditor.live.kube` imports the kubernetes client."""
