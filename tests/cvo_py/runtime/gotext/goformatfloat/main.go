// Reads float64 values as 16 hex digits of their IEEE 754 bits, one per line, and prints
// strconv.FormatFloat(value, 'f', -1, 64) of each, one per line.
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		bits, err := strconv.ParseUint(in.Text(), 16, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Fprintln(out, strconv.FormatFloat(math.Float64frombits(bits), 'f', -1, 64))
	}
}
