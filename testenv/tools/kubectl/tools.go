//go:build tools

// Package tools pins kubectl, the peer the drift benchmark compares against (`kubectl diff`).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kubectl"
)
