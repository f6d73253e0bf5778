//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// TestConflictsListenAuthenticatesTheAPIServer: conflicts --listen
// --webhook-kubeconfig writes the API server's webhook kubeconfig (0600,
// its URL https, a token, its certificate); a real kube-apiserver started
// with --audit-webhook-config-file naming it gets its events through, and
// the report counts its writer as the writer logged itself. Requests
// another process can forge are refused and counted by reason (no token,
// a wrong token, text/plain), pass nothing on, and a batch with the token
// and one malformed item costs that item only. 50 slow senders with the
// token (a byte a second) hold connections open while the API server
// sends, and its batches still arrive; the slow bodies are cut and
// counted. The --record file is 0600 and reads back to the same writers.
func TestConflictsListenAuthenticatesTheAPIServer(t *testing.T) {
	t.Parallel() // see TestMain: its own plane
	addr := freeLoopbackAddr(t)
	dir := t.TempDir()
	kubeconfig, rec := filepath.Join(dir, "webhook.kubeconfig"), filepath.Join(dir, "received.log")
	bg := cluster.StartRV(t, "conflicts", "--listen", addr, "--webhook-kubeconfig", kubeconfig, "--record", rec, "--view", "writers", "-o", "json")
	waitFile(t, kubeconfig)
	for _, f := range []string{kubeconfig, rec} {
		if fi, err := os.Lstat(f); err != nil || fi.Mode() != 0o600 {
			t.Fatalf("%s: %v, mode %v; want 0600", f, err, fi.Mode())
		}
	}
	kc, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kctx := kc.Contexts[kc.CurrentContext]
	server, ca, token := kc.Clusters[kctx.Cluster].Server, kc.Clusters[kctx.Cluster].CertificateAuthorityData, kc.AuthInfos[kctx.AuthInfo].Token
	if server != "https://"+addr || len(token) < 40 || len(ca) == 0 {
		t.Fatalf("the webhook kubeconfig names %s, a token of %d characters, %d bytes of CA; want https://%s, a token, the certificate", server, len(token), len(ca), addr)
	}

	p, err := cluster.StartPlane(framework.PlaneOptions{AuditWebhookKubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.StopPlane(); err != nil {
			t.Error(err)
		}
	}()
	const agent = "e2e-listen-auth-writer/1.0"
	slow := slowSenders(addr, token, 50)
	own, _ := staleWriter(t, p, agent)

	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("the webhook kubeconfig's certificate-authority-data is not PEM")
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	forged := forgedList(forgedItem("forged-1", "e2e-listen-unauthenticated/1.0"))
	for _, tc := range []struct {
		name, auth, contentType string
		body                    []byte
		code                    int
	}{
		{"no token", "", "application/json", forged, 401},
		{"a wrong token", "Bearer " + token + "x", "application/json", forged, 401},
		{"a browser's form, no token", "", "text/plain;charset=UTF-8", forged, 401},
		{"text/plain with the token", "Bearer " + token, "text/plain", forged, 415},
		{"the token, one malformed item", "Bearer " + token, "application/json",
			forgedList(forgedItem("token-1", "e2e-listen-token/1.0"), `{"verb":5}`), 200},
	} {
		req, _ := http.NewRequest(http.MethodPost, server, bytes.NewReader(tc.body))
		req.Header.Set("Content-Type", tc.contentType)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.code)
		}
	}

	// The webhook flushes its batches every second; the slow bodies are
	// cut within 10 s and a second (the body timeout, plus 64 KiB/s).
	time.Sleep(5 * time.Second)
	if cut := <-slow; cut != 50 {
		t.Errorf("%d of 50 slow senders were cut by the listener, want all", cut)
	}
	r := bg.Stop(t)
	if r.Code != 0 || !strings.Contains(r.Stderr, "receiving audit events at https://"+addr) {
		t.Fatalf("conflicts --listen: %s", r)
	}
	if !strings.Contains(r.Stderr, "50 body cut short or too slow") {
		t.Errorf("standard error does not count the 50 slow bodies:\n%s", r.Stderr)
	}
	// The refusals by reason (pkg/audit's Reject constants), and the
	// malformed item with its sender.
	for _, want := range []string{"no credentials", "wrong token", "not application/json", "item 1:"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("standard error does not say %q:\n%s", want, r.Stderr)
		}
	}
	var live conflictsReport
	if err := json.Unmarshal([]byte(r.Stdout), &live); err != nil {
		t.Fatalf("conflicts --listen -o json: %v\n%s", err, r.Stdout)
	}
	if got := writerByAgent(live, agent); got == nil || got.conflictsTally != own {
		t.Errorf("the listener counts %+v for %s; the writer logged %+v", got, agent, own)
	}
	if w := writerByAgent(live, "e2e-listen-unauthenticated/1.0"); w != nil {
		t.Errorf("a refused request's event was analysed: %+v", w)
	}
	if w := writerByAgent(live, "e2e-listen-token/1.0"); w == nil || w.Attempts != 1 {
		t.Errorf("the event beside the malformed item: %+v, want 1 attempt", w)
	}
	back := runConflicts(t, "--audit-log", rec, "--view", "writers")
	if fmt.Sprint(back.Writers) != fmt.Sprint(live.Writers) {
		t.Errorf("--audit-log of the --record file differs from the listener's report:\nrecord: %+v\nlive:   %+v", back.Writers, live.Writers)
	}
}

// TestConflictsListenRequiresTheAPIServersCertificate: with
// --listen-client-ca, a real kube-apiserver whose webhook kubeconfig
// presents a client certificate of that CA gets its events through; a
// client without a certificate, or with one of another CA, fails the TLS
// handshake, counted.
func TestConflictsListenRequiresTheAPIServersCertificate(t *testing.T) {
	t.Parallel() // its own plane
	addr := freeLoopbackAddr(t)
	dir := t.TempDir()
	ours, other := newTestCA(t, dir, "ours"), newTestCA(t, dir, "other")
	serverCert, serverKey := ours.issue(t, dir, "server", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ours.issue(t, dir, "kube-apiserver", x509.ExtKeyUsageClientAuth)
	otherCert, otherKey := other.issue(t, dir, "intruder", x509.ExtKeyUsageClientAuth)
	bg := cluster.StartRV(t, "conflicts", "--listen", addr, "--listen-cert", serverCert, "--listen-key", serverKey,
		"--listen-client-ca", ours.file, "--view", "writers", "-o", "json")
	waitListening(t, addr)

	kubeconfig := filepath.Join(dir, "webhook.kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["rv"] = &clientcmdapi.Cluster{Server: "https://" + addr, CertificateAuthority: ours.file}
	cfg.AuthInfos["kube-apiserver"] = &clientcmdapi.AuthInfo{ClientCertificate: clientCert, ClientKey: clientKey}
	cfg.Contexts["rv"] = &clientcmdapi.Context{Cluster: "rv", AuthInfo: "kube-apiserver"}
	cfg.CurrentContext = "rv"
	if err := clientcmd.WriteToFile(*cfg, kubeconfig); err != nil {
		t.Fatal(err)
	}
	p, err := cluster.StartPlane(framework.PlaneOptions{AuditWebhookKubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.StopPlane(); err != nil {
			t.Error(err)
		}
	}()
	const agent = "e2e-listen-mtls-writer/1.0"
	own, _ := staleWriter(t, p, agent)

	roots := x509.NewCertPool()
	roots.AddCert(ours.cert)
	intruder, err := tls.LoadX509KeyPair(otherCert, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, certs := range map[string][]tls.Certificate{"no certificate": nil, "another CA's certificate": {intruder}} {
		client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: certs}}}
		resp, err := client.Post("https://"+addr, "application/json", bytes.NewReader(forgedList(forgedItem("x", "e2e-listen-intruder/1.0"))))
		if err == nil {
			_ = resp.Body.Close()
			t.Errorf("%s: answered %d, want the TLS handshake refused", name, resp.StatusCode)
		}
	}

	time.Sleep(5 * time.Second)
	r := bg.Stop(t)
	if r.Code != 0 || !strings.Contains(r.Stderr, "TLS handshake failed") {
		t.Fatalf("conflicts --listen: %s", r)
	}
	var live conflictsReport
	if err := json.Unmarshal([]byte(r.Stdout), &live); err != nil {
		t.Fatalf("conflicts --listen -o json: %v\n%s", err, r.Stdout)
	}
	if got := writerByAgent(live, agent); got == nil || got.conflictsTally != own {
		t.Errorf("the listener counts %+v for %s; the writer logged %+v", got, agent, own)
	}
	if w := writerByAgent(live, "e2e-listen-intruder/1.0"); w != nil {
		t.Errorf("an intruder's event was analysed: %+v", w)
	}
}

// staleWriter creates a ConfigMap in p, then updates it four times with
// the resourceVersion it read first, and returns the outcomes it counted
// itself (the first update wins, the other three are 409s, each a
// give-up) and the namespace it wrote in.
func staleWriter(t *testing.T, p *framework.Cluster, agent string) (conflictsTally, string) {
	t.Helper()
	cs := p.Clientset(t, agent)
	ctx := context.Background()
	ns := p.Namespace(t)
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hot"}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{FieldManager: "listen-writer"})
	if err != nil {
		t.Fatal(err)
	}
	own := conflictsTally{Attempts: 1, Successes: 1}
	for i := range 4 {
		c := cm.DeepCopy()
		c.Data["n"] = fmt.Sprint(i + 1)
		own.Attempts++
		switch _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, c, metav1.UpdateOptions{FieldManager: "listen-writer"}); {
		case err == nil:
			own.Successes++
		case apierrors.IsConflict(err):
			// It never reads again to retry: each 409 is a give-up.
			own.Conflicts++
			own.GiveUps++
		default:
			t.Fatal(err)
		}
	}
	if own.Conflicts != 3 {
		t.Fatalf("the writer logged %d 409s, want 3 (the first stale update wins)", own.Conflicts)
	}
	return own, ns
}

// forgedItem is an EventList item for an update's 409, completed now, by
// userAgent: what another process might post.
func forgedItem(id, userAgent string) string {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	return fmt.Sprintf(`{"level":"Metadata","auditID":"%s","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/forged/configmaps/c?fieldManager=forger","verb":"update","user":{"username":"forger"},"userAgent":"%s","objectRef":{"resource":"configmaps","namespace":"forged","name":"c","apiVersion":"v1","resourceVersion":"1"},"responseStatus":{"metadata":{},"code":409},"requestReceivedTimestamp":"%s","stageTimestamp":"%s"}`, id, userAgent, now, now)
}

func forgedList(items ...string) []byte {
	return []byte(`{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[` + strings.Join(items, ",") + `]}`)
}

// slowSenders opens n connections to the listener at addr, each sending
// a request with the token whose 1,000-byte body comes a byte a second,
// for at most 30 s; the channel yields how many the listener cut first.
func slowSenders(addr, token string, n int) <-chan int {
	cut := make(chan bool, n)
	for range n {
		go func() {
			conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
			if err != nil {
				cut <- false
				return
			}
			defer func() { _ = conn.Close() }()
			_ = conn.SetDeadline(time.Now().Add(35 * time.Second))
			if _, err := fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", token); err != nil {
				cut <- false
				return
			}
			closed := make(chan struct{})
			go func() {
				_, _ = io.Copy(io.Discard, conn)
				close(closed)
			}()
			for range 30 {
				select {
				case <-closed:
					cut <- true
					return
				case <-time.After(time.Second):
				}
				if _, err := conn.Write([]byte("[")); err != nil {
					cut <- true
					return
				}
			}
			cut <- false
		}()
	}
	total := make(chan int, 1)
	go func() {
		k := 0
		for range n {
			if <-cut {
				k++
			}
		}
		total <- k
	}()
	return total
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Lstat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s is not there after a minute", path)
}

// testCA is a CA made for a test, its certificate written to file.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, file: writePEM(t, filepath.Join(dir, name+"-ca.pem"), "CERTIFICATE", der)}
}

// issue makes a certificate for 127.0.0.1 and the hosts dnsNames that
// the CA signed, and returns its file and its key's.
func (ca *testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage, dnsNames ...string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: dnsNames}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der), writePEM(t, filepath.Join(dir, name+"-key.pem"), "EC PRIVATE KEY", kder)
}

func writePEM(t *testing.T, path, typ string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
