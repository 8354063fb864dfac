// Reads lines of `mode key key2 key key2 ...` and prints the input indexes in the order
// sort.Slice, sort.SliceStable or oc's two passes leave them.
package main

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

type item struct{ idx, key, key2 int }

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		f := strings.Fields(in.Text())
		mode := f[0]
		items := []item{}
		for i := 1; i+1 < len(f); i += 2 {
			k, _ := strconv.Atoi(f[i])
			k2, _ := strconv.Atoi(f[i+1])
			items = append(items, item{len(items), k, k2})
		}
		switch mode {
		case "slice":
			sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
		case "stable":
			sort.SliceStable(items, func(i, j int) bool { return items[i].key < items[j].key })
		case "oc":
			sort.Slice(items, func(i, j int) bool { return items[i].key > items[j].key })
			sort.SliceStable(items, func(i, j int) bool { return items[i].key2 > items[j].key2 })
		}
		for i, it := range items {
			if i > 0 {
				out.WriteString(" ")
			}
			out.WriteString(strconv.Itoa(it.idx))
		}
		out.WriteString("\n")
	}
	_ = fmt.Sprint()
}
