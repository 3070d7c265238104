//go:build tools

// Package tools pins kwok, which simulates the sandbox's nodes (no kubelet, no containers).
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
