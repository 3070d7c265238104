"""The repository side: YAML manifests with their positions, profiles, and git revisions."""
