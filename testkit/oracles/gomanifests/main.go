// Reads release-payload manifest files as the CVO reads them (library-go's manifest parser over
// apimachinery's YAML-or-JSON decoder, decoding each document into an unstructured object) and
// computes versionHash as the CVO does (FNV-1 64, URL-safe base64).
//
//	gomanifests parse   input, one per line: hex(file bytes)
//	                    output, one per line: "ok" then " " hex(raw) per manifest, or "error " hex(message)
//	gomanifests hash    input, one per line: hex(bytes); output: the hash of those bytes
package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

type manifest struct {
	raw []byte
	obj *unstructured.Unstructured
}

// UnmarshalJSON keeps the document's bytes and decodes them as an unstructured object, as
// library-go's Manifest does.
func (m *manifest) UnmarshalJSON(in []byte) error {
	if bytes.Equal(in, []byte("null")) {
		m.raw = nil
		return nil
	}
	m.raw = append(m.raw[:0], in...)
	obj := &unstructured.Unstructured{}
	if _, _, err := unstructured.UnstructuredJSONScheme.Decode(in, nil, obj); err != nil {
		return fmt.Errorf("unable to decode manifest: %v", err)
	}
	m.obj = obj
	return nil
}

func parse(data []byte) ([][]byte, error) {
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 1024)
	var raws [][]byte
	seen := map[string]bool{}
	for {
		m := manifest{}
		if err := d.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return raws, nil
			}
			return nil, err
		}
		m.raw = bytes.TrimSpace(m.raw)
		if len(m.raw) == 0 || bytes.Equal(m.raw, []byte("null")) {
			continue
		}
		gvk := m.obj.GroupVersionKind()
		id := fmt.Sprintf("Group: %q Kind: %q Namespace: %q Name: %q", gvk.Group, gvk.Kind, m.obj.GetNamespace(), m.obj.GetName())
		if gvk.Kind == "" || m.obj.GetName() == "" {
			return nil, fmt.Errorf("Resource with fields %s must contain kubernetes required fields kind and name", id)
		}
		if seen[id] {
			return nil, fmt.Errorf("duplicate resource: (%s)", id)
		}
		seen[id] = true
		raws = append(raws, m.raw)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "parse" && os.Args[1] != "hash") {
		fail(errors.New("usage: gomanifests parse|hash"))
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<28)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		data, err := hex.DecodeString(in.Text())
		if err != nil {
			fail(err)
		}
		if os.Args[1] == "hash" {
			h := fnv.New64()
			h.Write(data)
			fmt.Fprintln(out, base64.URLEncoding.EncodeToString(h.Sum(nil)))
			continue
		}
		raws, err := parse(data)
		if err != nil {
			fmt.Fprintln(out, "error", hex.EncodeToString([]byte(err.Error())))
			continue
		}
		fields := []string{"ok"}
		for _, raw := range raws {
			fields = append(fields, hex.EncodeToString(raw))
		}
		fmt.Fprintln(out, strings.Join(fields, " "))
	}
	if err := in.Err(); err != nil {
		fail(err)
	}
}
