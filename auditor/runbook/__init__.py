"""The stop-admission runbook: hold/resume through the repo, dry run, Workload export, ledger."""
