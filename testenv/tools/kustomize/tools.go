//go:build tools

// Package tools pins the kustomize command Argo CD v3's repo-server runs (`kustomize build`):
// the release its own toolchain names (hack/tool-versions.sh of the pinned Argo CD).
package tools

import _ "sigs.k8s.io/kustomize/kustomize/v5"
