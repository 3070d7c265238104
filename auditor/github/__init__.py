"""What the GitHub workflows do on GitHub (drift issues, the plan comment, schema PRs)."""
