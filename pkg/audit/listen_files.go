package audit

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/clientcmd/api/latest"
	"sigs.k8s.io/yaml"
)

// credentials are what a receiver asks of its senders, read from the
// files ListenConfig names.
type credentials struct {
	tls       *tls.Config
	clientCAs bool
	token     string
	tokenSum  *[sha256.Size]byte
	// caData is the serving certificates (PEM): what the webhook
	// kubeconfig trusts.
	caData []byte
}

// readCredentials checks cfg and reads the files it names; a token is
// made when a webhook kubeconfig is to be written and none is given.
func readCredentials(cfg *ListenConfig) (credentials, error) {
	var c credentials
	if err := c.readTLS(cfg); err != nil {
		return c, err
	}
	var err error
	if c.token, err = readToken(cfg); err != nil {
		return c, err
	}
	if c.token != "" {
		sum := sha256.Sum256([]byte(c.token))
		c.tokenSum = &sum
	} else if !c.clientCAs {
		return c, fmt.Errorf("--listen %s: senders must authenticate: give --webhook-kubeconfig FILE (it writes the API server's --audit-webhook-config-file, with a new token), --listen-token-file FILE, or --listen-client-ca FILE", cfg.Addr)
	}
	return c, nil
}

// readToken returns the token cfg gives or names, or a new one when a
// webhook kubeconfig is to be written without one.
func readToken(cfg *ListenConfig) (string, error) {
	token, flag := cfg.Token, "the token"
	if cfg.TokenFile != "" {
		if token != "" {
			return "", fmt.Errorf("give a token or --listen-token-file, not both")
		}
		data, err := os.ReadFile(cfg.TokenFile)
		if err != nil {
			return "", fmt.Errorf("--listen-token-file: %w", err)
		}
		// As client-go reads a kubeconfig's tokenFile.
		token, flag = strings.TrimSpace(string(data)), "--listen-token-file "+cfg.TokenFile
	}
	switch {
	case token == "" && cfg.TokenFile != "":
		return "", fmt.Errorf("%s is empty", flag)
	case token == "" && cfg.WebhookKubeconfig != "":
		return NewToken()
	case token == "":
		return "", nil
	case len(token) < minTokenLen:
		return "", fmt.Errorf("%s is %d characters: give at least %d (e.g. head -c 32 /dev/urandom | base64)", flag, len(token), minTokenLen)
	case strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0:
		return "", fmt.Errorf("%s holds a character that is not printable ASCII, or white space: an HTTP header cannot carry it", flag)
	}
	return token, nil
}

// minTokenLen is the shortest token accepted.
const minTokenLen = 16

// NewToken returns a new random bearer token: 32 bytes from crypto/rand,
// base64url.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making a token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// WebhookKubeconfig is what the API server's --audit-webhook-config-file
// needs to send to a receiver.
type WebhookKubeconfig struct {
	// URL is the receiver's (Listener.URL).
	URL string
	// Token is the bearer token the API server sends.
	Token string
	// CAData is the PEM the API server trusts the receiver's certificate
	// by (certificate-authority-data), with TLS.
	CAData []byte
}

// WriteWebhookKubeconfig writes k as a kubeconfig (one cluster, user and
// context, current) to a new file at path: created 0600, refused if
// anything is there already, a symbolic link included.
func WriteWebhookKubeconfig(path string, k WebhookKubeconfig) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubectl-rv"] = &clientcmdapi.Cluster{Server: k.URL, CertificateAuthorityData: k.CAData}
	cfg.AuthInfos["kube-apiserver"] = &clientcmdapi.AuthInfo{Token: k.Token}
	cfg.Contexts["kubectl-rv"] = &clientcmdapi.Context{Cluster: "kubectl-rv", AuthInfo: "kube-apiserver"}
	cfg.CurrentContext = "kubectl-rv"
	// clientcmd.Write's encoding, without clientcmd's flags (pflag),
	// which no engine package links.
	data, err := runtime.Encode(latest.Codec, cfg)
	if err == nil {
		data, err = yaml.JSONToYAML(data)
	}
	if err != nil {
		return fmt.Errorf("--webhook-kubeconfig: %w", err)
	}
	f, err := createNew(path, "--webhook-kubeconfig")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("--webhook-kubeconfig %s: %w", path, err)
	}
	return nil
}

// OpenRecord opens the --record file for writing: a new file, created
// 0600 (it holds what the audit policy logs, request bodies and Secret
// data at the Request level), refused if anything is at path already; or
// with appendTo an existing regular file (or a new one) to append to,
// refused if others may read it. It never follows a symbolic link.
func OpenRecord(path string, appendTo bool) (*os.File, error) {
	if !appendTo {
		return createNew(path, "--record")
	}
	if err := refuseSymlink(path, "--record"); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|openNoFollow, 0o600)
	if err != nil {
		return nil, fmt.Errorf("--record %s: %w%s", path, err, symlinkHint(err))
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = errors.New("not a regular file: name a file")
	case fi.Mode().Perm()&0o077 != 0:
		err = fmt.Errorf("others may read it (mode %v): chmod 600 it, or name a new file", fi.Mode().Perm())
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("--record %s: %w", path, err)
	}
	return f, nil
}

// createNew creates a file at path, 0600, failing if anything is there
// (a symbolic link included: O_EXCL does not follow one).
func createNew(path, flag string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, 0o600)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("%s %s: the file exists: name a new file (it is not overwritten)", flag, path)
	case err != nil:
		return nil, fmt.Errorf("%s %s: %w", flag, path, err)
	}
	return f, nil
}

// createFiles opens the record and writes the webhook kubeconfig, once
// the receiver listens; a failure leaves nothing it made behind.
func (l *Listener) createFiles(c credentials) error {
	cfg := l.cfg
	if cfg.RecordPath != "" {
		f, err := OpenRecord(cfg.RecordPath, cfg.RecordAppend)
		if err != nil {
			return err
		}
		l.recFile, l.rec = f, f
	}
	if cfg.WebhookKubeconfig == "" {
		return nil
	}
	err := WriteWebhookKubeconfig(cfg.WebhookKubeconfig, WebhookKubeconfig{URL: l.url, Token: c.token, CAData: c.caData})
	if err != nil && l.recFile != nil {
		_ = l.recFile.Close()
		if !cfg.RecordAppend {
			_ = os.Remove(cfg.RecordPath)
		}
	}
	return err
}
