// What Go's encoding/json and strconv say, one input line to one output line:
//
//	"decode <hex>"          json.Unmarshal of those bytes: "ok", for a syntax error
//	                        "syntax <offset> <message>", else "error <message>"
//	"json <16 hex digits>"  json.Marshal of the float64 with those bits, or "error <message>"
//	"g32 <16 hex digits>"   strconv.FormatFloat of that float64, 'g', -1, 32
//	"str <hex bytes>"       hex(json.Marshal of the string made of those bytes)
//	"int <text>"            strconv.ParseInt(text, 0, 64), else ParseUint(text, 0, 64), else "none"
//	"float <text>"          strconv.ParseFloat(text, 64) as 16 hex digits of its bits, or "none"
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func decode(arg string) string {
	b, err := hex.DecodeString(arg)
	if err != nil {
		fail(err)
	}
	var v any
	err = json.Unmarshal(b, &v)
	var syntax *json.SyntaxError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &syntax):
		return fmt.Sprintf("syntax %d %s", syntax.Offset, syntax.Error())
	default:
		return fmt.Sprintf("error %s", err)
	}
}

func float(arg string) float64 {
	bits, err := strconv.ParseUint(arg, 16, 64)
	if err != nil {
		fail(err)
	}
	return math.Float64frombits(bits)
}

func answer(mode, arg string) string {
	switch mode {
	case "decode":
		return decode(arg)
	case "g32":
		return strconv.FormatFloat(float(arg), 'g', -1, 32)
	case "json":
		b, err := json.Marshal(float(arg))
		if err != nil {
			return fmt.Sprintf("error %s", err)
		}
		return string(b)
	case "str":
		raw, err := hex.DecodeString(arg)
		if err != nil {
			fail(err)
		}
		b, _ := json.Marshal(string(raw))
		return hex.EncodeToString(b)
	case "int":
		if v, err := strconv.ParseInt(arg, 0, 64); err == nil {
			return strconv.FormatInt(v, 10)
		}
		if u, err := strconv.ParseUint(arg, 0, 64); err == nil {
			return strconv.FormatUint(u, 10)
		}
		return "none"
	case "float":
		if v, err := strconv.ParseFloat(arg, 64); err == nil {
			return fmt.Sprintf("%016x", math.Float64bits(v))
		}
		return "none"
	}
	fail(fmt.Errorf("unknown mode %q", mode))
	return ""
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		mode, arg, _ := strings.Cut(in.Text(), " ")
		fmt.Fprintln(out, answer(mode, arg))
	}
}
