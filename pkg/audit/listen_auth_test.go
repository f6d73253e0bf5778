package audit

import (
	"context"
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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/apis/audit/install"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/audit"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func init() { install.Install(audit.Scheme) }

// pki is a CA and certificates it signed, written as PEM files.
type pki struct {
	dir                     string
	caCert                  *x509.Certificate
	caKey                   *ecdsa.PrivateKey
	caFile                  string
	serverCert, serverKey   string
	clientCert, clientKey   string
	clientPEM, clientKeyPEM []byte
}

func newPKI(t *testing.T, name string) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir()}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p.caCert, _ = x509.ParseCertificate(der)
	p.caKey = key
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", der)
	var certPEM, keyPEM []byte
	p.serverCert, p.serverKey, _, _ = p.issue(t, "server", x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey, certPEM, keyPEM = p.issue(t, "kube-apiserver", x509.ExtKeyUsageClientAuth)
	p.clientPEM, p.clientKeyPEM = certPEM, keyPEM
	return p
}

// issue makes a certificate for 127.0.0.1 signed by the CA.
func (p *pki) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (certFile, keyFile string, certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile = p.write(t, name+".pem", "CERTIFICATE", der)
	keyFile = p.write(t, name+"-key.pem", "EC PRIVATE KEY", kder)
	return certFile, keyFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func (p *pki) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// auditEvent is an event as the API server's audit backends take it.
func auditEvent(id string) *auditinternal.Event {
	now := metav1.NewMicroTime(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	return &auditinternal.Event{Level: auditinternal.LevelMetadata, AuditID: types.UID(id), Stage: auditinternal.StageResponseComplete,
		RequestURI: "/api/v1/namespaces/ns/configmaps/c", Verb: "update", ObjectRef: &auditinternal.ObjectReference{Resource: "configmaps", Namespace: "ns", Name: "c"},
		ResponseStatus: &metav1.Status{Code: 409}, RequestReceivedTimestamp: now, StageTimestamp: now}
}

// apiServerSends sends an event the way kube-apiserver's audit webhook
// backend does, configured by the kubeconfig at path, and says whether it
// was taken: the client of k8s.io/apiserver/pkg/util/webhook's
// LoadKubeconfig and NewGenericWebhook, POSTing an EventList as
// plugin/pkg/audit/webhook's processEvents does (those packages need
// modules this one does not require).
func apiServerSends(t *testing.T, path, id string) bool {
	t.Helper()
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		t.Fatalf("the webhook backend cannot load %s: %v", path, err)
	}
	cfg.Timeout, cfg.QPS = 30*time.Second, -1
	cfg.ContentType = runtime.ContentTypeJSON
	cfg.NegotiatedSerializer = serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: audit.Codecs.LegacyCodec(auditv1.SchemeGroupVersion)})
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	list := auditinternal.EventList{Items: []auditinternal.Event{*auditEvent(id)}}
	if err := client.Post().Body(&list).Do(context.Background()).Error(); err != nil {
		t.Logf("the webhook backend: %v", err)
		return false
	}
	return true
}

func TestListenRefusesSendersWithoutCredentials(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		cfg  ListenConfig
		want string
	}{
		{"no credentials", ListenConfig{}, "senders must authenticate: give --webhook-kubeconfig"},
		{"an empty token file", ListenConfig{TokenFile: write("empty", " \n")}, "is empty"},
		{"a short token", ListenConfig{TokenFile: write("short", "abc\n")}, "give at least 16"},
		{"a token with a space", ListenConfig{Token: "0123456789 abcdef"}, "not printable ASCII, or white space"},
		{"a token and a token file", ListenConfig{Token: testToken, TokenFile: write("t", testToken)}, "not both"},
		{"a missing token file", ListenConfig{TokenFile: filepath.Join(dir, "none")}, "--listen-token-file"},
		{"a client CA that is not PEM", ListenConfig{ClientCAFile: write("ca", "x")}, "no PEM certificate in it"},
		{"a wildcard address", ListenConfig{Addr: "0.0.0.0:0", Token: testToken}, "give one of those, or --listen-cert and --listen-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Addr == "" {
				tc.cfg.Addr = "127.0.0.1:0"
			}
			l, err := Listen(tc.cfg)
			if err == nil {
				_ = l.End(context.Background())
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Listen: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// TestListenerRefusesForgedRequests: requests as another local process,
// or a web page in a browser on the host, can make them (no token, a
// wrong one, a form's text/plain, a GET) are refused before their body is
// read, counted by reason, and pass nothing on; the sender with the token
// gets through.
func TestListenerRefusesForgedRequests(t *testing.T) {
	l := startListener(t, ListenConfig{TokenFile: writeFile(t, "token", testToken+"\n")})
	got := readAll(l)
	body := eventList(0, 2, false)
	for _, tc := range []struct {
		name   string
		header map[string]string
		code   int
	}{
		{"no token", map[string]string{"Content-Type": "application/json"}, 401},
		{"a wrong token", map[string]string{"Authorization": "Bearer " + testToken + "x", "Content-Type": "application/json"}, 401},
		{"basic auth", map[string]string{"Authorization": "Basic dXNlcjpwYXNz", "Content-Type": "application/json"}, 401},
		{"a browser's no-cors form", map[string]string{"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://evil.example"}, 401},
		{"text/plain with the token", map[string]string{"Authorization": "Bearer " + testToken, "Content-Type": "text/plain"}, 415},
		{"no content type", map[string]string{"Authorization": "Bearer " + testToken}, 415},
		{"the sender, its scheme in lower case", map[string]string{"Authorization": "bearer " + testToken, "Content-Type": "application/json; charset=utf-8"}, 200},
	} {
		if code := do(t, l.URL(), body, tc.header); code != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, code, tc.code)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, l.URL(), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if resp, err := testClient.Do(req); err != nil || resp.StatusCode != 405 {
		t.Errorf("GET with the token: %v %v, want 405", resp, err)
	}
	_ = l.Close(context.Background())
	if lines := <-got; len(lines) != 2 {
		t.Errorf("%d lines passed on, want the 2 of the one good request", len(lines))
	}
	st := l.Stats()
	want := map[string]int64{RejectNoCredentials: 3, RejectWrongToken: 1, RejectContentType: 2, RejectMethod: 1}
	if st.Rejected != 7 || len(st.RejectedBy) != len(want) || st.Batches != 1 || st.Events != 2 {
		t.Errorf("stats %+v, want 7 refused %v, 1 batch of 2 events", st, want)
	}
	for reason, n := range want {
		if st.RejectedBy[reason] != n {
			t.Errorf("refused for %q: %d, want %d", reason, st.RejectedBy[reason], n)
		}
	}
	if len(st.Rejects) != 7 || !strings.HasPrefix(st.Rejects[0].Remote, "127.0.0.1:") {
		t.Errorf("refusals kept: %+v", st.Rejects)
	}
}

// clientcmdConfig is a webhook kubeconfig for url that trusts p's CA and
// presents p's client certificate, as an operator writes it for mTLS.
func clientcmdConfig(url string, p *pki) clientcmdapi.Config {
	caPEM, _ := os.ReadFile(p.caFile)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["rv"] = &clientcmdapi.Cluster{Server: url, CertificateAuthorityData: caPEM}
	cfg.AuthInfos["apiserver"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.clientPEM, ClientKeyData: p.clientKeyPEM}
	cfg.Contexts["rv"] = &clientcmdapi.Context{Cluster: "rv", AuthInfo: "apiserver"}
	cfg.CurrentContext = "rv"
	return *cfg
}

func writeFile(t *testing.T, name, s string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestWebhookKubeconfigLetsTheAPIServerIn: the kubeconfig Listen writes
// (0600, once it listens) is loaded by client-go and used by the API
// server's own webhook backend, whose batch gets through; requests
// without its token get 401. The kubeconfig trusts the serving
// certificate: the receiver's own, or the operator's.
func TestWebhookKubeconfigLetsTheAPIServerIn(t *testing.T) {
	p := newPKI(t, "serving")
	for _, tc := range []struct {
		name string
		cfg  ListenConfig
	}{
		{"a certificate of its own", ListenConfig{}},
		{"the operator's certificate", ListenConfig{CertFile: p.serverCert, KeyFile: p.serverKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
			tc.cfg.WebhookKubeconfig = path
			l := startListener(t, tc.cfg)
			got := readAll(l)
			fi, err := os.Lstat(path)
			if err != nil || fi.Mode() != 0o600 {
				t.Fatalf("the kubeconfig: %v, mode %v, want 0600", err, fi.Mode())
			}
			kc, err := clientcmd.LoadFromFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cluster, user := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster], kc.AuthInfos[kc.Contexts[kc.CurrentContext].AuthInfo]
			if cluster.Server != l.URL() || len(user.Token) < 40 || len(cluster.CertificateAuthorityData) == 0 {
				t.Fatalf("the kubeconfig names %s with a token of %d characters and %d bytes of CA; want %s", cluster.Server, len(user.Token), len(cluster.CertificateAuthorityData), l.URL())
			}
			if !apiServerSends(t, path, "from-the-api-server") {
				t.Fatalf("the API server's webhook backend was refused: %+v", l.Stats())
			}
			for _, auth := range []string{"", "Bearer " + user.Token + "x"} {
				req, _ := http.NewRequest(http.MethodPost, l.URL(), strings.NewReader(string(eventList(0, 1, false))))
				req.Header.Set("Content-Type", "application/json")
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := testClient.Do(req)
				if err != nil || resp.StatusCode != 401 {
					t.Errorf("POST with %q: %v %v, want 401", auth, resp, err)
				}
			}
			_ = l.Close(context.Background())
			lines := <-got
			if len(lines) != 1 || !strings.Contains(lines[0], `"auditID":"from-the-api-server"`) {
				t.Errorf("passed on: %q, want the API server's event only", lines)
			}
			if st := l.Stats(); st.RejectedBy[RejectNoCredentials] != 1 || st.RejectedBy[RejectWrongToken] != 1 {
				t.Errorf("refused %v", st.RejectedBy)
			}
		})
	}
}

// TestListenerRequiresClientCertificates: with a client CA, the TLS
// handshake refuses a client without a certificate and one whose
// certificate another CA signed (each counted); the API server's backend
// with its client certificate in the kubeconfig gets through.
func TestListenerRequiresClientCertificates(t *testing.T) {
	p, other := newPKI(t, "ours"), newPKI(t, "another")
	l := startListener(t, ListenConfig{CertFile: p.serverCert, KeyFile: p.serverKey, ClientCAFile: p.caFile})
	got := readAll(l)
	roots := x509.NewCertPool()
	roots.AddCert(p.caCert)
	otherCert, err := tls.LoadX509KeyPair(other.clientCert, other.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, certs := range map[string][]tls.Certificate{"no certificate": nil, "another CA's": {otherCert}} {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		req, _ := http.NewRequest(http.MethodPost, l.URL(), strings.NewReader(string(eventList(0, 1, false))))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := client.Do(req); err == nil {
			t.Errorf("%s: %d, want the handshake refused", name, resp.StatusCode)
		}
	}
	path := filepath.Join(t.TempDir(), "webhook.kubeconfig")
	cfg := clientcmdConfig(l.URL(), p)
	if err := clientcmd.WriteToFile(cfg, path); err != nil {
		t.Fatal(err)
	}
	if !apiServerSends(t, path, "with-a-client-certificate") {
		t.Fatal("the API server's webhook backend, with its client certificate, was refused")
	}
	_ = l.Close(context.Background())
	if lines := <-got; len(lines) != 1 || !strings.Contains(lines[0], "with-a-client-certificate") {
		t.Errorf("passed on: %q", lines)
	}
	if st := l.Stats(); st.RejectedBy[RejectTLS] != 2 || st.Rejected != 2 {
		t.Errorf("refused %v, want 2 handshakes", st.RejectedBy)
	}
}
