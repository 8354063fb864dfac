// Reads hex-encoded texts, one per line, and prints each as hex after going through
// text/tabwriter configured as oc configures it: tabwriter.NewWriter(w, minwidth, 0, padding, ' ', 0),
// with -minwidth and -padding (default 0 and 3: oc adm upgrade status; 14 and 1: the recommended
// updates of oc adm upgrade).
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
)

func main() {
	minwidth := flag.Int("minwidth", 0, "minimal cell width")
	padding := flag.Int("padding", 3, "padding added to a cell's width")
	flag.Parse()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		text, err := hex.DecodeString(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var formatted bytes.Buffer
		tw := tabwriter.NewWriter(&formatted, *minwidth, 0, *padding, ' ', 0)
		tw.Write(text)
		tw.Flush()
		fmt.Fprintln(out, hex.EncodeToString(formatted.Bytes()))
	}
}
