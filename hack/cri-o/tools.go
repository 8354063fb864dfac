//go:build tools

// Package crio pins the CRI-O release the local node runs: `go build github.com/cri-o/cri-o/cmd/crio`
// in this module builds it with exactly the dependency versions CRI-O v1.34.0 itself requires, and
// `go build github.com/opencontainers/runc` the runc it depends on (v1.2.6, OCI runtime-spec 1.2.1).
package crio

import (
	_ "github.com/cri-o/cri-o/cmd/crio"
	_ "github.com/opencontainers/runc"
)
