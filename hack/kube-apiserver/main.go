// Command kube-apiserver-harness runs a real kube-apiserver next to an embedded etcd on
// 127.0.0.1, for cvo-py's integration tests and demo.
//
// It prepares everything a loopback control plane needs in --data-dir (serving certificate,
// admin token, service-account signing key, audit policy), writes an admin kubeconfig and a
// state.json describing the endpoints, then runs until SIGTERM/SIGINT. Restarting it with the
// same --data-dir keeps the etcd data and, when possible, the same port.
package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// state is what clients of the harness read from <data-dir>/state.json.
type state struct {
	PID            int    `json:"pid"`
	Port           int    `json:"port"`
	Server         string `json:"server"`
	EtcdClientURL  string `json:"etcdClientURL"`
	Kubeconfig     string `json:"kubeconfig"`
	AdminToken     string `json:"adminToken"`
	AuditLog       string `json:"auditLog"`
	KubeVersion    string `json:"kubernetesVersion"`
	EtcdVersion    string `json:"etcdVersion"`
	ServiceAccount string `json:"serviceAccountIssuer"`
	ClientCA       string `json:"clientCAFile"`
	ClientCAKey    string `json:"clientCAKeyFile"`
	ScraperCert    string `json:"scraperCertFile"`
	ScraperKey     string `json:"scraperKeyFile"`
}

const (
	kubeVersion = "v1.36.3"
	etcdVersion = "v3.6.8"
	issuer      = "https://kubernetes.default.svc.cluster.local"
)

func main() {
	dataDir := flag.String("data-dir", ".local-cluster", "directory for etcd data, credentials and state")
	port := flag.Int("port", 0, "secure port for the API server (0: reuse the previous port if free, else any free port)")
	kubeconfig := flag.String("kubeconfig", "", "where to write the admin kubeconfig (default <data-dir>/kubeconfig)")
	var extra argList
	flag.Var(&extra, "apiserver-arg", "a kube-apiserver flag `--name=value` replacing the harness's own --name (repeatable)")
	flag.Parse()
	if err := run(*dataDir, *port, *kubeconfig, extra); err != nil {
		fmt.Fprintf(os.Stderr, "kube-apiserver-harness: %v\n", err)
		os.Exit(1)
	}
}

func run(dataDir string, port int, kubeconfig string, extra []string) error {
	dataDir, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if kubeconfig == "" {
		kubeconfig = filepath.Join(dataDir, "kubeconfig")
	}
	pki := filepath.Join(dataDir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return err
	}
	if port == 0 {
		port = previousPort(dataDir)
	}
	if port == 0 {
		if port, err = freePort(); err != nil {
			return err
		}
	} else if err := portFree(port); err != nil {
		return fmt.Errorf("port %d is not available for the API server: %v (stop whatever holds it, or pass --port)", port, err)
	}
	etcdClientPort, err := freePort()
	if err != nil {
		return err
	}
	etcdPeerPort, err := freePort()
	if err != nil {
		return err
	}

	caPEM, err := ensureServingCert(pki)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	clientCA, clientCAKey := filepath.Join(pki, "client-ca.crt"), filepath.Join(pki, "client-ca.key")
	if err := ensureCA(clientCA, clientCAKey, "cvo-py-local-client-ca"); err != nil {
		return fmt.Errorf("client CA: %w", err)
	}
	scraperCert, scraperKey := filepath.Join(pki, "scraper.crt"), filepath.Join(pki, "scraper.key")
	if err := ensureClientCert(clientCA, clientCAKey, scraperCert, scraperKey, scraperCommonName); err != nil {
		return fmt.Errorf("scraper certificate: %w", err)
	}
	if err := ensureRSAKey(filepath.Join(pki, "sa.key")); err != nil {
		return fmt.Errorf("service-account key: %w", err)
	}
	token, err := ensureAdminToken(filepath.Join(pki, "tokens.csv"))
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	policy := filepath.Join(dataDir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return err
	}
	auditLog := filepath.Join(dataDir, "audit.log")

	etcd, etcdURL, err := startEtcd(filepath.Join(dataDir, "etcd"), etcdClientPort, etcdPeerPort)
	if err != nil {
		return fmt.Errorf("embedded etcd did not start: %w", err)
	}
	defer etcd.Close()

	server := fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := writeKubeconfig(kubeconfig, server, caPEM, token); err != nil {
		return err
	}
	st := state{
		PID: os.Getpid(), Port: port, Server: server, EtcdClientURL: etcdURL, Kubeconfig: kubeconfig,
		AdminToken: token, AuditLog: auditLog, KubeVersion: kubeVersion, EtcdVersion: etcdVersion,
		ServiceAccount: issuer, ClientCA: clientCA, ClientCAKey: clientCAKey,
		ScraperCert: scraperCert, ScraperKey: scraperKey,
	}
	raw, _ := json.MarshalIndent(st, "", "  ")
	if err := os.WriteFile(filepath.Join(dataDir, "state.json"), raw, 0o600); err != nil {
		return err
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	etcdDied := make(chan error, 1)
	go func() {
		select {
		case err := <-etcd.Err():
			etcdDied <- err
		case <-ctx.Done():
		}
	}()

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(withArgs([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		"--tls-cert-file=" + filepath.Join(pki, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "serving.key"),
		"--cert-dir=" + pki,
		"--service-cluster-ip-range=10.96.0.0/24",
		"--service-account-issuer=" + issuer,
		"--service-account-key-file=" + filepath.Join(pki, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--token-auth-file=" + filepath.Join(pki, "tokens.csv"),
		// Published, as on a real cluster, in kube-system/extension-apiserver-authentication
		// (client-ca-file); the CVO's metrics server trusts scrapers' certificates signed by it.
		"--client-ca-file=" + clientCA,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// No controller-manager creates "default" ServiceAccounts here; tests play that part.
		"--disable-admission-plugins=ServiceAccount",
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + auditLog,
		"--audit-log-format=json",
		"--audit-log-maxsize=200",
		"--audit-log-maxbackup=1",
		"--endpoint-reconciler-type=none",
		// PodTemplates bypass the watch cache, so a watch from a compacted resourceVersion gets a
		// real 410 Gone from etcd; the cvo-py tests use them to exercise relisting.
		"--watch-cache-sizes=podtemplates#0",
		"--v=0",
	}, extra))
	apiDone := make(chan error, 1)
	go func() { apiDone <- cmd.ExecuteContext(ctx) }()
	select {
	case err := <-apiDone:
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("kube-apiserver exited: %w", err)
		}
		return nil
	case err := <-etcdDied:
		return fmt.Errorf("embedded etcd died: %v", err)
	case <-ctx.Done():
		select {
		case <-apiDone:
		case <-time.After(10 * time.Second):
		}
		return nil
	}
}

// argList collects the repeated -apiserver-arg values.
type argList []string

func (a *argList) String() string { return strings.Join(*a, " ") }
func (a *argList) Set(v string) error {
	if !strings.HasPrefix(v, "--") || !strings.Contains(v, "=") {
		return fmt.Errorf("%q is not of the form --name=value", v)
	}
	*a = append(*a, v)
	return nil
}

// withArgs is base with each of extra replacing the base flag of the same name, or added.
// A local node needs a few flags the test cluster must not have (the ServiceAccount admission
// plugin, how to reach kubelets); the rest stays as the harness sets it.
func withArgs(base, extra []string) []string {
	name := func(arg string) string { return strings.SplitN(arg, "=", 2)[0] }
	replaced := map[string]bool{}
	for _, arg := range extra {
		replaced[name(arg)] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, arg := range base {
		if !replaced[name(arg)] {
			out = append(out, arg)
		}
	}
	return append(out, extra...)
}

const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  nonResourceURLs: ["/readyz*", "/livez*", "/healthz*"]
- level: Metadata
`

func startEtcd(dir string, clientPort, peerPort int) (*embed.Etcd, string, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.LogLevel = "error"
	clientURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", clientPort))
	peerURL, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", peerPort))
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// A restart reuses the data directory with new ports: let etcd accept the new peer URL.
	if _, err := os.Stat(filepath.Join(dir, "member")); err == nil {
		cfg.ForceNewCluster = true
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, clientURL.String(), nil
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", errors.New("not ready after 60s")
	}
}

func previousPort(dataDir string) int {
	raw, err := os.ReadFile(filepath.Join(dataDir, "state.json"))
	if err != nil {
		return 0
	}
	var st state
	if json.Unmarshal(raw, &st) != nil || st.Port == 0 || portFree(st.Port) != nil {
		return 0
	}
	return st.Port
}

func portFree(port int) error {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return err
	}
	return l.Close()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ensureServingCert makes a CA and a serving certificate for 127.0.0.1/localhost once, and
// returns the CA certificate PEM so the kubeconfig can verify the server.
func ensureServingCert(pki string) ([]byte, error) {
	caPath := filepath.Join(pki, "ca.crt")
	if ca, err := os.ReadFile(caPath); err == nil {
		if _, err := os.Stat(filepath.Join(pki, "serving.key")); err == nil {
			return ca, nil
		}
	}
	caKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cvo-py-local-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := os.WriteFile(filepath.Join(pki, "serving.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(pki, "serving.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return nil, err
	}
	return caPEM, os.WriteFile(caPath, caPEM, 0o600)
}

// ensureCA makes a self-signed CA certificate and its key once; tests sign client certificates
// with the key (e.g. a scraper's, for the metrics endpoint's mutual TLS).
func ensureCA(certPath, keyPath, commonName string) error {
	if filesExist(certPath, keyPath) {
		return nil
	}
	return issue(certPath, keyPath, &x509.Certificate{
		Subject:  pkix.Name{CommonName: commonName},
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true,
	}, nil, nil)
}

// scraperCommonName is the identity the CVO's metrics server accepts: the in-cluster Prometheus.
const scraperCommonName = "system:serviceaccount:openshift-monitoring:prometheus-k8s"

// ensureClientCert signs, once, a client certificate for commonName with the CA at caPath/caKeyPath.
func ensureClientCert(caPath, caKeyPath, certPath, keyPath, commonName string) error {
	if filesExist(certPath, keyPath) {
		return nil
	}
	caCert, caKey, err := loadCA(caPath, caKeyPath)
	if err != nil {
		return err
	}
	return issue(certPath, keyPath, &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, caCert, caKey)
}

func filesExist(paths ...string) bool {
	for _, path := range paths {
		if _, err := os.Stat(path); err != nil {
			return false
		}
	}
	return true
}

// issue makes a new key and a ten-year certificate from tmpl, signed by parent (self-signed when
// parent is nil), and writes both as PEM.
func issue(certPath, keyPath string, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *rsa.PrivateKey) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl.SerialNumber = big.NewInt(now.UnixNano())
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.AddDate(10, 0, 0)
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return err
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	return os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
}

func loadCA(certPath, keyPath string) (*x509.Certificate, *rsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		return nil, nil, fmt.Errorf("%s or %s is not PEM", certPath, keyPath)
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParsePKCS1PrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func ensureRSAKey(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
}

func ensureAdminToken(path string) (string, error) {
	if raw, err := os.ReadFile(path); err == nil {
		var token string
		if _, err := fmt.Sscanf(string(raw), "%64s", &token); err == nil && len(token) == 64 {
			return token, nil
		}
	}
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	token := hex.EncodeToString(buf)
	line := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", token)
	return token, os.WriteFile(path, []byte(line), 0o600)
}

func writeKubeconfig(path, server string, caPEM []byte, token string) error {
	ca := base64.StdEncoding.EncodeToString(caPEM)
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: local
  context:
    cluster: local
    user: admin
current-context: local
`, server, ca, token)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}
