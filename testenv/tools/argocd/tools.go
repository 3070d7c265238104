//go:build tools

// Package tools pins Argo CD's multi-call command so `go build` can build it from this module.
package tools

import _ "github.com/argoproj/argo-cd/v3/cmd"
