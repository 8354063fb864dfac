// Reads hex-encoded texts, one per line, and prints each as hex after going through
// text/tabwriter configured as oc configures it (minwidth 0, tabwidth 0, padding 3, ' ', no flags).
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"text/tabwriter"
)

func main() {
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
		tw := tabwriter.NewWriter(&formatted, 0, 0, 3, ' ', 0)
		tw.Write(text)
		tw.Flush()
		fmt.Fprintln(out, hex.EncodeToString(formatted.Bytes()))
	}
}
