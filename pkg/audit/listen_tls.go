package audit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// readTLS reads the serving certificate and key, or makes a certificate
// of its own for the address (selfSigned), and the client CA. The
// receiver always serves TLS: client-go, which the API server's webhook
// backend uses, sends a kubeconfig's credentials over TLS only.
func (c *credentials) readTLS(cfg *ListenConfig) error {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w (give HOST:PORT, e.g. 127.0.0.1:8443)", cfg.Addr, err)
	}
	var cert tls.Certificate
	switch {
	case (cfg.CertFile == "") != (cfg.KeyFile == ""):
		return fmt.Errorf("--listen-cert and --listen-key go together")
	case cfg.CertFile != "":
		if cert, err = tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile); err != nil {
			return fmt.Errorf("--listen-cert/--listen-key: %w", err)
		}
	default:
		if cert, err = selfSigned(host); err != nil {
			return fmt.Errorf("--listen %s: %w", cfg.Addr, err)
		}
	}
	c.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	for _, der := range cert.Certificate {
		c.caData = append(c.caData, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	if cfg.ClientCAFile == "" {
		return nil
	}
	data, err := os.ReadFile(cfg.ClientCAFile)
	if err != nil {
		return fmt.Errorf("--listen-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("--listen-client-ca %s: no PEM certificate in it", cfg.ClientCAFile)
	}
	c.tls.ClientCAs, c.tls.ClientAuth, c.clientCAs = pool, tls.RequireAndVerifyClientCert, true
	return nil
}

// selfSigned makes a serving certificate for host (an IP address, or
// localhost), its key kept in memory only: the webhook kubeconfig trusts
// it (WriteWebhookKubeconfig's CAData), for as long as the receiver runs.
func selfSigned(host string) (tls.Certificate, error) {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: "kubectl-rv audit receiver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	switch ip := net.ParseIP(host); {
	case host == "localhost":
		tmpl.DNSNames, tmpl.IPAddresses = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	case ip != nil && !ip.IsUnspecified():
		tmpl.IPAddresses = []net.IP{ip}
	default:
		return tls.Certificate{}, fmt.Errorf("a certificate of its own is made for an IP address or localhost only: give one of those, or --listen-cert and --listen-key")
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl.SerialNumber = serial
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
