//go:build tools

// Package crio pins the CRI-O release the local node runs: `go build github.com/cri-o/cri-o/cmd/crio`
// in this module builds it with exactly the dependency versions CRI-O v1.34.0 itself requires.
package crio

import _ "github.com/cri-o/cri-o/cmd/crio"
