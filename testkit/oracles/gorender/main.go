// Renders manifests as the CVO renders its image's /manifests: each input is executed as a Go
// text/template named "manifest" (no extra functions, default missing-key handling) on a value
// with the fields ReleaseImage, ClusterProfile and Images.
//
// Input, one per line: hex(JSON data) SPACE hex(template bytes).
// Output, one per line: "ok " hex(rendered bytes), or "error " hex(error text).
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/template"
)

type renderData struct {
	ReleaseImage   string
	ClusterProfile string
	Images         map[string]string
}

func render(data renderData, text []byte) ([]byte, error) {
	tmpl, err := template.New("manifest").Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("failed to parse manifest: %w", err)
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, data); err != nil {
		return nil, fmt.Errorf("failed to execute template: %w", err)
	}
	return out.Bytes(), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		fields := strings.SplitN(in.Text(), " ", 2)
		if len(fields) != 2 {
			fail(fmt.Errorf("want two hex fields, got %d", len(fields)))
		}
		rawData, err := hex.DecodeString(fields[0])
		if err != nil {
			fail(err)
		}
		text, err := hex.DecodeString(fields[1])
		if err != nil {
			fail(err)
		}
		var data renderData
		if err := json.Unmarshal(rawData, &data); err != nil {
			fail(err)
		}
		rendered, err := render(data, text)
		if err != nil {
			fmt.Fprintln(out, "error", hex.EncodeToString([]byte(err.Error())))
			continue
		}
		fmt.Fprintln(out, "ok", hex.EncodeToString(rendered))
	}
	if err := in.Err(); err != nil {
		fail(err)
	}
}
