"""kueue-gitops: validate, audit and operate a GitOps repository of Kueue quota."""
