// Reads hex-encoded JSON documents, one per line, and prints what encoding/json says of each when
// decoding it into the fields of a release's release-metadata as the CVO reads them: "ok" or
// "error MESSAGE".
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
)

type metadata struct {
	Kind     string                 `json:"kind"`
	Version  string                 `json:"version"`
	Previous []string               `json:"previous"`
	Next     []string               `json:"next"`
	Metadata map[string]interface{} `json:"metadata"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		b, err := hex.DecodeString(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var m metadata
		if err := json.Unmarshal(b, &m); err != nil {
			fmt.Fprintln(out, "error", err)
		} else {
			fmt.Fprintln(out, "ok")
		}
	}
}
