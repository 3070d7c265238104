//go:build tools

// Package tools pins the kubeconform command so `go build` can build it from this module.
package tools

import _ "github.com/yannh/kubeconform/cmd/kubeconform"
