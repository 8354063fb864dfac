// Reads hex-encoded byte strings, one per line, and prints strconv.Quote of each, one per line.
// With the argument "unquote", prints strconv.Unquote of each instead: "ok HEX" or "error".
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
)

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
		if len(os.Args) > 1 && os.Args[1] == "unquote" {
			if s, err := strconv.Unquote(string(b)); err != nil {
				fmt.Fprintln(out, "error")
			} else {
				fmt.Fprintln(out, "ok", hex.EncodeToString([]byte(s)))
			}
			continue
		}
		fmt.Fprintln(out, strconv.Quote(string(b)))
	}
}
