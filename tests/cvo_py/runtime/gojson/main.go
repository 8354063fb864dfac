// Reads hex-encoded JSON documents, one per line, and prints what encoding/json says of each, one
// per line: "ok", or for a syntax error "syntax <offset> <message>", or "error <message>". What it
// decodes into is the argument: nothing (an interface{}), "kubeconfig" (the types of client-go's
// clientcmd/api/v1, with their JSON names) or "release" (the fields of a release's
// release-metadata as the CVO reads them).
package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
		b, err := hex.DecodeString(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
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
			fmt.Fprintln(out, "ok")
		case errors.As(err, &syntax):
			fmt.Fprintf(out, "syntax %d %s\n", syntax.Offset, syntax.Error())
		default:
			fmt.Fprintf(out, "error %s\n", err)
		}
	}
}
