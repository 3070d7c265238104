//go:build tools

// Package tools pins the toxiproxy server so `go build` can build it from this module.
package tools

import _ "github.com/Shopify/toxiproxy/v2/cmd/server"
