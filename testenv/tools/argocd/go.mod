// Argo CD, pinned only so `go mod download` fetches its source and we install its CRDs
// (manifests/crds) into the sandbox. Nothing here is built.
module github.com/kueue-gitops/testenv/tools/argocd

go 1.26.3

require github.com/argoproj/argo-cd/v3 v3.5.7
