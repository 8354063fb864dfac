// What Go's encoding/json and strconv say, one input line to one output line:
//
//	"decode <hex>"          json.Unmarshal of those bytes: "ok", for a syntax error
//	                        "syntax <offset> <message>", else "error <message>"
//	"json <16 hex digits>"  json.Marshal of the float64 with those bits, or "error <message>"
//	"g32 <16 hex digits>"   strconv.FormatFloat of that float64, 'g', -1, 32
//	"str <hex bytes>"       hex(json.Marshal of the string made of those bytes)
//	"int <text>"            strconv.ParseInt(text, 0, 64), else ParseUint(text, 0, 64), else "none"
//	"float <text>"          strconv.ParseFloat(text, 64) as 16 hex digits of its bits, or "none"
//	"<hex>"                 as "decode", into what the argument names: nothing (an interface{}),
//	                        "kubeconfig" (the types of client-go's clientcmd/api/v1, with their JSON
//	                        names) or "release" (a release-metadata's fields as the CVO reads them)
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

type Config struct {
	Kind           string           `json:"kind,omitempty"`
	APIVersion     string           `json:"apiVersion,omitempty"`
	Preferences    Preferences      `json:"preferences"`
	Clusters       []NamedCluster   `json:"clusters"`
	AuthInfos      []NamedAuthInfo  `json:"users"`
	Contexts       []NamedContext   `json:"contexts"`
	CurrentContext string           `json:"current-context"`
	Extensions     []NamedExtension `json:"extensions,omitempty"`
}

type Preferences struct {
	Colors     bool             `json:"colors,omitempty"`
	Extensions []NamedExtension `json:"extensions,omitempty"`
}

type Cluster struct {
	Server                   string           `json:"server"`
	TLSServerName            string           `json:"tls-server-name,omitempty"`
	InsecureSkipTLSVerify    bool             `json:"insecure-skip-tls-verify,omitempty"`
	CertificateAuthority     string           `json:"certificate-authority,omitempty"`
	CertificateAuthorityData []byte           `json:"certificate-authority-data,omitempty"`
	ProxyURL                 string           `json:"proxy-url,omitempty"`
	DisableCompression       bool             `json:"disable-compression,omitempty"`
	Extensions               []NamedExtension `json:"extensions,omitempty"`
}

type AuthInfo struct {
	ClientCertificate     string              `json:"client-certificate,omitempty"`
	ClientCertificateData []byte              `json:"client-certificate-data,omitempty"`
	ClientKey             string              `json:"client-key,omitempty"`
	ClientKeyData         []byte              `json:"client-key-data,omitempty"`
	Token                 string              `json:"token,omitempty"`
	TokenFile             string              `json:"tokenFile,omitempty"`
	Impersonate           string              `json:"as,omitempty"`
	ImpersonateUID        string              `json:"as-uid,omitempty"`
	ImpersonateGroups     []string            `json:"as-groups,omitempty"`
	ImpersonateUserExtra  map[string][]string `json:"as-user-extra,omitempty"`
	Username              string              `json:"username,omitempty"`
	Password              string              `json:"password,omitempty"`
	AuthProvider          *AuthProviderConfig `json:"auth-provider,omitempty"`
	Exec                  *ExecConfig         `json:"exec,omitempty"`
	Extensions            []NamedExtension    `json:"extensions,omitempty"`
}

type Context struct {
	Cluster    string           `json:"cluster"`
	AuthInfo   string           `json:"user"`
	Namespace  string           `json:"namespace,omitempty"`
	Extensions []NamedExtension `json:"extensions,omitempty"`
}

type NamedCluster struct {
	Name    string  `json:"name"`
	Cluster Cluster `json:"cluster"`
}

type NamedContext struct {
	Name    string  `json:"name"`
	Context Context `json:"context"`
}

type NamedAuthInfo struct {
	Name     string   `json:"name"`
	AuthInfo AuthInfo `json:"user"`
}

type NamedExtension struct {
	Name      string          `json:"name"`
	Extension json.RawMessage `json:"extension"`
}

type AuthProviderConfig struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
}

type ExecConfig struct {
	Command            string       `json:"command"`
	Args               []string     `json:"args"`
	Env                []ExecEnvVar `json:"env"`
	APIVersion         string       `json:"apiVersion,omitempty"`
	InstallHint        string       `json:"installHint,omitempty"`
	ProvideClusterInfo bool         `json:"provideClusterInfo"`
	InteractiveMode    string       `json:"interactiveMode,omitempty"`
}

type ExecEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type metadata struct {
	Kind     string                 `json:"kind"`
	Version  string                 `json:"version"`
	Previous []string               `json:"previous"`
	Next     []string               `json:"next"`
	Metadata map[string]interface{} `json:"metadata"`
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func decode(arg, target string) string {
	b, err := hex.DecodeString(arg)
	if err != nil {
		fail(err)
	}
	switch target {
	case "kubeconfig":
		var config Config
		err = json.Unmarshal(b, &config)
	case "release":
		var m metadata
		err = json.Unmarshal(b, &m)
	default:
		var v any
		err = json.Unmarshal(b, &v)
	}
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
		return decode(arg, "")
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
	target := ""
	if len(os.Args) > 1 {
		target = os.Args[1]
	}
	for in.Scan() {
		mode, arg, found := strings.Cut(in.Text(), " ")
		if !found { // a bare hex document
			fmt.Fprintln(out, decode(mode, target))
			continue
		}
		fmt.Fprintln(out, answer(mode, arg))
	}
}
