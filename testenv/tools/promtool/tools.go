//go:build tools

// Package tools pins the promtool command so `go build` can build it from this module.
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
