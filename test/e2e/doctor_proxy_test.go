//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubectl-rv/kubectl-rv/test/e2e/framework"
)

// fault is one way a misbehaving endpoint breaks the resourceVersion
// contract; badProxy breaks it in front of the real API server.
type fault string

const (
	dropInitialEventsEnd fault = "drop-initial-events-end"
	stripItemRVs         fault = "strip-item-resource-versions"
	ignoreRVMatch        fault = "ignore-resource-version-match"
	compactedWatchOK     fault = "compacted-watch-200"
	slowConsistentLists  fault = "slow-consistent-lists"
	stripWatchEventRVs   fault = "strip-watch-event-resource-versions"
)

// consistentListDelay is how long slowConsistentLists holds a consistent
// list: more than doctor's 1 s threshold.
const consistentListDelay = 1500 * time.Millisecond

// badProxy starts a proxy in front of the test cluster's API server
// (frontProxy) that breaks the contract as f says, and returns a kubeconfig
// that reaches the server through it as rv-admin. It is a test fixture: the
// server behind it is the real one, and only the broken rule differs.
func badProxy(t *testing.T, f fault) string {
	t.Helper()
	return frontProxy(t, cluster, func(rp *httputil.ReverseProxy) http.Handler {
		director := rp.Director
		rp.Director = func(r *http.Request) {
			director(r)
			// JSON on the wire, so that the fixture can read and change it.
			r.Header.Set("Accept", jsonOnly(r.Header.Get("Accept")))
			q := r.URL.Query()
			if f == ignoreRVMatch && q.Get("watch") != "true" {
				q.Del("resourceVersionMatch")
				r.URL.RawQuery = q.Encode()
			}
		}
		rp.ModifyResponse = func(resp *http.Response) error { return breakResponse(f, resp) }
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			isWatch := q.Get("watch") == "true"
			switch {
			case f == compactedWatchOK && isWatch && q.Get("resourceVersion") == "1":
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				return
			case f == slowConsistentLists && !isWatch && r.Method == http.MethodGet && q.Get("resourceVersion") == "" && isCollection(r.URL.Path):
				time.Sleep(consistentListDelay)
			}
			rp.ServeHTTP(w, r)
		})
	})
}

// frontProxy starts an HTTPS proxy on loopback in front of c's API server
// and returns a kubeconfig that reaches the server through it. serve gets
// the reverse proxy to the server (watch events pass at once) and returns
// the handler the proxy serves, which may change requests and answers on
// their way. kubeconfig credentials are sent over https only: the proxy
// serves TLS with a throwaway certificate, as the test cluster does.
func frontProxy(t *testing.T, c *framework.Cluster, serve func(rp *httputil.ReverseProxy) http.Handler) string {
	t.Helper()
	upstream, err := url.Parse(c.APIServer)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(upstream)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // loopback, self-signed test server
	rp.FlushInterval = -1
	srv := httptest.NewUnstartedServer(serve(rp))
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return proxyKubeconfig(t, c, srv.URL)
}

// proxyKubeconfig copies c's kubeconfig with its server replaced.
func proxyKubeconfig(t *testing.T, c *framework.Cluster, server string) string {
	t.Helper()
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfg.Clusters {
		c.Server = server
		c.InsecureSkipTLSVerify = true
		c.CertificateAuthority, c.CertificateAuthorityData = "", nil
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func jsonOnly(accept string) string {
	var keep []string
	for _, part := range strings.Split(accept, ",") {
		if !strings.Contains(part, "protobuf") && strings.TrimSpace(part) != "" {
			keep = append(keep, strings.TrimSpace(part))
		}
	}
	if len(keep) == 0 {
		return "application/json"
	}
	return strings.Join(keep, ",")
}

// isCollection says whether path names a collection (a list), not an
// object or discovery: /api/v1/namespaces/ns/configmaps.
func isCollection(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return false
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	return len(parts) == 1
}

func breakResponse(f fault, resp *http.Response) error {
	q := resp.Request.URL.Query()
	isWatch := q.Get("watch") == "true"
	switch {
	case f == stripItemRVs && !isWatch && resp.StatusCode == 200 && isCollection(resp.Request.URL.Path):
		return rewriteBody(resp, stripItems)
	case f == dropInitialEventsEnd && isWatch && q.Get("sendInitialEvents") == "true":
		pr, pw := io.Pipe()
		body := resp.Body
		go func() { pw.CloseWithError(dropInitialEnd(body, pw)) }()
		resp.Body = pr
	case f == stripWatchEventRVs && isWatch:
		pr, pw := io.Pipe()
		body := resp.Body
		go func() { pw.CloseWithError(stripEventRVs(body, pw)) }()
		resp.Body = pr
	}
	return nil
}

// stripEventRVs copies a JSON watch stream, one event a line, with
// metadata.resourceVersion removed from every event's object but
// bookmarks' (a front proxy that rewrites objects and loses it).
func stripEventRVs(in io.ReadCloser, out io.Writer) error {
	defer in.Close()
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var ev map[string]any
			if json.Unmarshal(line, &ev) == nil && ev["type"] != "BOOKMARK" && ev["type"] != "ERROR" {
				if obj, ok := ev["object"].(map[string]any); ok {
					if md, ok := obj["metadata"].(map[string]any); ok {
						delete(md, "resourceVersion")
					}
				}
				line, _ = json.Marshal(ev)
				line = append(line, '\n')
			}
			if _, werr := out.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func rewriteBody(resp *http.Response, change func(map[string]any)) error {
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err == nil {
		change(doc)
		data, _ = json.Marshal(doc)
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
	return nil
}

func stripItems(list map[string]any) {
	items, _ := list["items"].([]any)
	for _, it := range items {
		if md, ok := it.(map[string]any)["metadata"].(map[string]any); ok {
			delete(md, "resourceVersion")
		}
	}
}

// dropInitialEnd copies a JSON watch stream, one event a line, without the
// bookmark that ends a streaming list's initial events.
func dropInitialEnd(in io.ReadCloser, out io.Writer) error {
	defer in.Close()
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && !isInitialEventsEnd(line) {
			if _, werr := out.Write(line); werr != nil {
				return werr
			}
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

func isInitialEventsEnd(line []byte) bool {
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"object"`
	}
	return json.Unmarshal(line, &ev) == nil && ev.Type == "BOOKMARK" && ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true"
}
