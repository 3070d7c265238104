"""`validate`: schemas, CEL, the version contract and the policy checks over the repository."""
