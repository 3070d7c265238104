//go:build tools

// Package tools pins the Kueue release gpu-staging runs, so `go mod tidy` keeps it.
package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
