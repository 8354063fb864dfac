// Reads hex-encoded JSON documents, one per line, and prints what encoding/json says of each, one
// per line: "ok", or for a syntax error "syntax <offset> <message>", or "error <message>".
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
		var v any
		err = json.Unmarshal(b, &v)
		var syntax *json.SyntaxError
		switch {
		case err == nil:
			fmt.Fprintln(out, "ok")
		case errors.As(err, &syntax):
			fmt.Fprintf(out, "syntax %d %s\n", syntax.Offset, syntax.Error())
		default:
			fmt.Fprintf(out, "error %s\n", err)
		}
	}
}
