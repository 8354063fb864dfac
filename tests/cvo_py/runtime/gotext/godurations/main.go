// Reads lines of `op args...` and prints what Go's time package (and its int64 arithmetic) gives:
//
//	sub SEC NSEC SEC NSEC   t.Sub(u) in ns, t and u given as Unix seconds and nanoseconds
//	round D M               time.Duration(D).Round(M)
//	truncate D M            time.Duration(D).Truncate(M)
//	string D                time.Duration(D).String()
//	seconds F               time.Duration(F) * time.Second, F a float64 (converted toward zero)
//	add D E                 time.Duration(D) + time.Duration(E)
//	parseduration HEX       time.ParseDuration of the hex-encoded text: "ok D" or "error MESSAGE"
//	parsetime HEX           time.Parse(time.RFC3339, …) of the hex-encoded text: "ok SEC NSEC" or "error"
//	format SEC NSEC         time.Unix(SEC, NSEC).UTC().Format(time.RFC3339Nano)
package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func i64(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return v
}

func unhex(s string) string {
	b, err := hex.DecodeString(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return string(b)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch f[0] {
		case "sub":
			t := time.Unix(i64(f[1]), i64(f[2]))
			u := time.Unix(i64(f[3]), i64(f[4]))
			fmt.Fprintln(out, int64(t.Sub(u)))
		case "round":
			fmt.Fprintln(out, int64(time.Duration(i64(f[1])).Round(time.Duration(i64(f[2])))))
		case "truncate":
			fmt.Fprintln(out, int64(time.Duration(i64(f[1])).Truncate(time.Duration(i64(f[2])))))
		case "string":
			fmt.Fprintln(out, time.Duration(i64(f[1])).String())
		case "seconds":
			x, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Fprintln(out, int64(time.Duration(x)*time.Second))
		case "parseduration":
			text := ""
			if len(f) > 1 {
				text = unhex(f[1])
			}
			if d, err := time.ParseDuration(text); err != nil {
				fmt.Fprintln(out, "error", err)
			} else {
				fmt.Fprintln(out, "ok", int64(d))
			}
		case "parsetime":
			text := ""
			if len(f) > 1 {
				text = unhex(f[1])
			}
			if t, err := time.Parse(time.RFC3339, text); err != nil {
				fmt.Fprintln(out, "error")
			} else {
				fmt.Fprintln(out, "ok", t.Unix(), t.Nanosecond())
			}
		case "format":
			fmt.Fprintln(out, time.Unix(i64(f[1]), i64(f[2])).UTC().Format(time.RFC3339Nano))
		case "add":
			fmt.Fprintln(out, int64(time.Duration(i64(f[1]))+time.Duration(i64(f[2]))))
		default:
			fmt.Fprintln(os.Stderr, "unknown op", f[0])
			os.Exit(1)
		}
	}
}
