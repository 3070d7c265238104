//go:build tools

// Package tools pins the upstream commands the sandbox builds, so `go mod tidy` keeps them.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	_ "sigs.k8s.io/kueue/cmd/kueue"
)
