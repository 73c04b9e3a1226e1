package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fingraph test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// Optional TLS from certificate files, and /metrics moved to its own
// listener so that it need not be public.
func TestTLSAndASeparateMetricsListener(t *testing.T) {
	certFile, keyFile, pool := selfSigned(t)
	a, g := startApp(t, "-register-webhook", "false", "-reconcile-interval", "0",
		"-tls-cert", certFile, "-tls-key", keyFile, "-metrics-addr", "127.0.0.1:0")
	t.Cleanup(func() { _ = a.Shutdown() })
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	https := strings.Replace(g.URL, "http://", "https://", 1)

	resp, err := client.Post(https+"/graphql", "application/json", strings.NewReader(`{"query":"{ __typename }"}`))
	if err != nil {
		t.Fatalf("HTTPS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil {
		t.Errorf("HTTPS answered %d (TLS %v)", resp.StatusCode, resp.TLS != nil)
	}
	if resp, err := http.Get(g.URL + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("plain HTTP served %d on the TLS listener", resp.StatusCode)
		}
	}

	resp, err = client.Get(https + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("/metrics on the public listener: %d, want 404", resp.StatusCode)
	}
	resp, err = http.Get("http://" + a.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 1<<16)
	n, _ := resp.Body.Read(buf)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(buf[:n]), "# HELP") {
		t.Errorf("/metrics on its own listener: %d %.200s", resp.StatusCode, buf[:n])
	}
}
