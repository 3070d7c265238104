"""Kubernetes meaning, without I/O: object keys, quantities, selectors, the one RBAC model."""
