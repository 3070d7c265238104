"""`plan replay` and `trace`: a workload trace replayed through the real Kueue, base and head."""
