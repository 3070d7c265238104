//go:build tools

// Package tools pins the helm command Argo CD v3's repo-server runs (`helm template`).
package tools

import _ "helm.sh/helm/v4/cmd/helm"
