//go:build tools

// Package tools pins the older Kueue the legacy sandbox cluster runs.
package tools

import _ "sigs.k8s.io/kueue/cmd/kueue"
