package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-rv/kubectl-rv/pkg/cmd/cmdutil"
)

// fakeAPIServer serves discovery for pods, namespaces, configmaps (core)
// and deployments (apps), and lists of the objects in objs, keyed by
// "resource" (cluster-scoped or all namespaces) or "namespace/resource".
type fakeAPIServer struct {
	objs map[string][]string

	// mu guards lists.
	mu    sync.Mutex
	lists []string
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	reply := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	res := func(name, kind string, namespaced bool, short ...string) map[string]any {
		return map[string]any{"name": name, "singularName": strings.ToLower(kind), "kind": kind, "namespaced": namespaced,
			"verbs": []string{"get", "list", "watch"}, "shortNames": short}
	}
	switch p := r.URL.Path; p {
	case "/api":
		reply(map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case "/apis":
		reply(map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{map[string]any{
			"name": "apps", "versions": []any{map[string]any{"groupVersion": "apps/v1", "version": "v1"}},
			"preferredVersion": map[string]any{"groupVersion": "apps/v1", "version": "v1"},
		}}})
	case "/api/v1":
		reply(map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{
			res("pods", "Pod", true, "po"), res("pods/status", "Pod", true), res("namespaces", "Namespace", false, "ns"),
			res("configmaps", "ConfigMap", true, "cm"),
			// Bindings can only be created: not a type to complete.
			map[string]any{"name": "bindings", "kind": "Binding", "namespaced": true, "verbs": []string{"create"}},
		}})
	case "/apis/apps/v1":
		reply(map[string]any{"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": []any{
			res("deployments", "Deployment", true, "deploy"), res("deployments/scale", "Scale", true),
		}})
	default:
		// /api/v1/namespaces/NS/pods, /apis/apps/v1/deployments, ...
		parts := strings.Split(strings.Trim(p, "/"), "/")
		key := parts[len(parts)-1]
		if len(parts) >= 2 && parts[len(parts)-3] == "namespaces" {
			key = parts[len(parts)-2] + "/" + key
		}
		s.mu.Lock()
		s.lists = append(s.lists, key)
		s.mu.Unlock()
		var items []any
		for _, n := range s.objs[key] {
			items = append(items, map[string]any{"metadata": map[string]any{"name": n}})
		}
		reply(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items})
	}
}

// newCompletionFactory returns a factory whose kubeconfig points at srv,
// with the context's namespace team-a.
func newCompletionFactory(t testing.TB, srv *httptest.Server) *cmdutil.Factory {
	t.Helper()
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: %q}
users:
- name: tester
  user: {token: t}
contexts:
- name: fake
  context: {cluster: fake, user: tester, namespace: team-a}
- name: other
  context: {cluster: fake, user: tester}
current-context: fake
`, srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(true)
	flags.KubeConfig = &kubeconfig
	cacheDir := filepath.Join(dir, "cache")
	flags.CacheDir = &cacheDir
	return cmdutil.NewFactory(flags)
}

func newCompletionCmd() *cobra.Command {
	c := &cobra.Command{Use: "x"}
	c.Flags().BoolP("all-namespaces", "A", false, "")
	return c
}

func TestResourceTypeOrNameCompletion(t *testing.T) {
	api := &fakeAPIServer{objs: map[string][]string{
		"team-a/pods":        {"web-1", "web-2", "db-0"},
		"pods":               {"web-1", "api-0", "web-1"},
		"team-a/deployments": {"web", "worker"},
		"namespaces":         {"team-a", "team-b", "kube-system"},
	}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	f := newCompletionFactory(t, srv)

	allTypes := []string{"configmaps", "deployments.apps", "namespaces", "pods"}
	tests := []struct {
		name       string
		single     bool
		all        bool
		args       []string
		toComplete string
		want       []string
		directive  cobra.ShellCompDirective
	}{
		{name: "every readable type", want: allTypes},
		{name: "types by prefix", toComplete: "de", want: []string{"deployments.apps"}},
		{name: "after a comma", toComplete: "pods,c", want: []string{"pods,configmaps"}},
		{name: "names of a plural type in the context namespace", args: []string{"pods"}, want: []string{"db-0", "web-1", "web-2"}},
		{name: "names by prefix", args: []string{"pods"}, toComplete: "web", want: []string{"web-1", "web-2"}},
		{name: "names already given are not offered again", args: []string{"pods", "web-1"}, want: []string{"db-0", "web-2"}},
		{name: "short name", args: []string{"deploy"}, want: []string{"web", "worker"}},
		{name: "singular with group", args: []string{"deployment.apps"}, toComplete: "w", want: []string{"web", "worker"}},
		{name: "cluster-scoped type", args: []string{"ns"}, toComplete: "team", want: []string{"team-a", "team-b"}},
		{name: "all namespaces, each name once", all: true, args: []string{"pods"}, want: []string{"api-0", "web-1"}},
		{name: "type/name", toComplete: "deploy/w", want: []string{"deploy/web", "deploy/worker"}},
		{name: "type/name not repeated", args: []string{"deploy/web"}, toComplete: "deploy/", want: []string{"deploy/worker"}},
		{name: "after type/name, types with a slash", args: []string{"deploy/web"}, toComplete: "po", want: []string{"pods/"}, directive: cobra.ShellCompDirectiveNoSpace},
		{name: "unknown type gives nothing", args: []string{"gizmos"}},
		{name: "single object: nothing after the name", single: true, args: []string{"deploy", "web"}},
		{name: "single object: nothing after type/name", single: true, args: []string{"deploy/web"}, toComplete: "deploy/"},
		{name: "single object: the name", single: true, args: []string{"deploy"}, want: []string{"web", "worker"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCompletionCmd()
			if tc.all {
				if err := c.Flags().Set("all-namespaces", "true"); err != nil {
					t.Fatal(err)
				}
			}
			fn := cmdutil.ResourceTypeOrNameCompletion(f)
			if tc.single {
				fn = cmdutil.SingleObjectCompletion(f)
			}
			got, directive := fn(c, tc.args, tc.toComplete)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
			if want := cobra.ShellCompDirectiveNoFileComp | tc.directive; directive != want {
				t.Errorf("directive = %d, want %d", directive, want)
			}
		})
	}
}

func TestResourceTypeAndNameCompletion(t *testing.T) {
	api := &fakeAPIServer{objs: map[string][]string{"team-a/configmaps": {"settings", "kube-root-ca.crt"}}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	f := newCompletionFactory(t, srv)

	got, _ := cmdutil.ResourceTypeCompletion(f)(newCompletionCmd(), nil, "p")
	if diff := cmp.Diff([]string{"pods"}, got); diff != "" {
		t.Errorf("ResourceTypeCompletion (-want +got):\n%s", diff)
	}
	got, _ = cmdutil.ResourceTypeCompletion(f)(newCompletionCmd(), []string{"pods"}, "p")
	if len(got) != 0 {
		t.Errorf("ResourceTypeCompletion after the argument: want nothing, got %q", got)
	}
	got, _ = cmdutil.ResourceNameCompletion(f, "cm")(newCompletionCmd(), nil, "s")
	if diff := cmp.Diff([]string{"settings"}, got); diff != "" {
		t.Errorf("ResourceNameCompletion (-want +got):\n%s", diff)
	}
	got, directive := cmdutil.ObjectRefCompletion(f)(newCompletionCmd(), nil, "config")
	if diff := cmp.Diff([]string{"configmaps/"}, got); diff != "" || directive != cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace {
		t.Errorf("ObjectRefCompletion of a type (-want +got):\n%s (directive %d)", diff, directive)
	}
	got, _ = cmdutil.ObjectRefCompletion(f)(newCompletionCmd(), nil, "cm/")
	if diff := cmp.Diff([]string{"cm/kube-root-ca.crt", "cm/settings"}, got); diff != "" {
		t.Errorf("ObjectRefCompletion of a name (-want +got):\n%s", diff)
	}
	got, _ = cmdutil.ObjectRefCompletion(f)(newCompletionCmd(), []string{"cm/settings"}, "")
	if len(got) != 0 {
		t.Errorf("ObjectRefCompletion after the object: want nothing, got %q", got)
	}
}

// TestCompletionThroughTheRootCommand runs cobra's __complete the way
// kubectl_complete-rv does: subcommands, flags, and the global flags' values.
func TestCompletionThroughTheRootCommand(t *testing.T) {
	api := &fakeAPIServer{objs: map[string][]string{"namespaces": {"team-a", "team-b", "kube-system"}}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	f := newCompletionFactory(t, srv)
	kubeconfig := *f.RESTClientGetter.(*genericclioptions.ConfigFlags).KubeConfig

	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{name: "subcommands", args: []string{""}, want: []string{"version\t"}},
		{name: "subcommands by prefix", args: []string{"ver"}, want: []string{"version\t"}},
		{name: "flags of a subcommand", args: []string{"version", "--"}, want: []string{"--client\t", "--output\t", "--namespace\t", "--context\t"}},
		{name: "short flags", args: []string{"version", "-"}, want: []string{"-o\t", "-n\t"}},
		{name: "namespaces from the cluster", args: []string{"version", "-n", "team"}, want: []string{"team-a", "team-b"}, not: []string{"kube-system"}},
		{name: "contexts from the kubeconfig", args: []string{"version", "--context", ""}, want: []string{"fake", "other"}},
		{name: "-o values", args: []string{"version", "-o", ""}, want: []string{"table", "json", "yaml"}, not: []string{"wide"}},
		{name: "--color values", args: []string{"watch", "--color", ""}, want: []string{"auto", "always", "never"}},
		{name: "--view values", args: []string{"owners", "--view", ""}, want: []string{"tree", "blame", "table", "summary"}},
		{name: "predict --method", args: []string{"predict", "--method", ""}, want: []string{"all", "all-update", "all-merge-patch", "all-apply", "kubectl", "update-no-rv", "apply", "apply-force", "client-apply", "server-side-apply"}},
		{name: "predict --type", args: []string{"predict", "--type", ""}, want: []string{"json", "merge", "strategic", "apply"}},
		{name: "predict --fail-on", args: []string{"predict", "--fail-on", ""}, want: []string{"conflict", "clobber", "invalid", "unknown", "any", "none"}},
		{name: "simulate etcdctl -w", args: []string{"simulate", "etcdctl", "-w", ""}, want: []string{"simple", "json"}},
		{name: "simulate run --builtin", args: []string{"simulate", "run", "--builtin", ""}, want: []string{"two-clients\t", "lost-update\t"}},
		{name: "lag offers the types it checks", args: []string{"lag", ""}, want: []string{"deployments.apps", "pods"}, not: []string{"configmaps", "namespaces"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			root := NewCmdRV(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &bytes.Buffer{}})
			cmdutil.RegisterGlobalFlagCompletion(root, f)
			root.SetArgs(append([]string{"__complete", "--kubeconfig", kubeconfig, "--cache-dir", t.TempDir()}, tc.args...))
			if err := root.Execute(); err != nil {
				t.Fatalf("__complete: %v", err)
			}
			lines := strings.Split(out.String(), "\n")
			for _, w := range tc.want {
				if !hasLinePrefix(lines, w) {
					t.Errorf("missing candidate %q in:\n%s", w, out.String())
				}
			}
			for _, n := range tc.not {
				if hasLinePrefix(lines, n) {
					t.Errorf("unexpected candidate %q in:\n%s", n, out.String())
				}
			}
		})
	}
}

func hasLinePrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) || l == strings.TrimSuffix(prefix, "\t") {
			return true
		}
	}
	return false
}

// BenchmarkObjectNameCompletion completes names among 5,000 pods of one
// namespace from a local fake API server (discovery cached after the first
// call): the cost of one TAB, without the network.
func BenchmarkObjectNameCompletion(b *testing.B) {
	names := make([]string, 5000)
	for i := range names {
		names[i] = fmt.Sprintf("web-%04d", i)
	}
	srv := httptest.NewServer(&fakeAPIServer{objs: map[string][]string{"team-a/pods": names}})
	defer srv.Close()
	f := newCompletionFactory(b, srv)
	fn := cmdutil.ResourceTypeOrNameCompletion(f)
	c := newCompletionCmd()
	b.ReportAllocs()
	for b.Loop() {
		if got, _ := fn(c, []string{"pods"}, "web-49"); len(got) != 100 {
			b.Fatalf("got %d candidates, want 100", len(got))
		}
	}
}

// TestCompletionCommandPrintsThePluginSteps: kubectl rv completion SHELL
// registers no completion of an "rv" command (there is none); it prints the
// plugin's steps as comments, so that sourcing them, as cobra tools teach,
// changes nothing. Its --help says what to run after a krew install.
func TestCompletionCommandPrintsThePluginSteps(t *testing.T) {
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		root := NewCmdRV(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		root.SetArgs(args)
		code := cmdutil.HandleError(&errOut, root.Execute())
		return out.String(), errOut.String(), code
	}
	krewHelper := []string{
		`printf '#!/bin/sh\nexec kubectl-rv __complete "$@"\n' > "${KREW_ROOT:-$HOME/.krew}/bin/kubectl_complete-rv"`,
		`chmod +x "${KREW_ROOT:-$HOME/.krew}/bin/kubectl_complete-rv"`,
	}
	tests := []struct {
		shell string
		want  []string
	}{
		{"bash", append([]string{"source <(kubectl completion bash)"}, krewHelper...)},
		{"zsh", append([]string{"source <(kubectl completion zsh)"}, krewHelper...)},
		{"fish", []string{"kubectl completion fish | source", `printf '#!/bin/sh\nexec kubectl-rv __complete "$@"\n' > ~/.krew/bin/kubectl_complete-rv`}},
	}
	for _, tc := range tests {
		t.Run(tc.shell, func(t *testing.T) {
			out, errOut, code := run("completion", tc.shell)
			if code != 0 || errOut != "" {
				t.Fatalf("completion %s: exit %d, stderr %q", tc.shell, code, errOut)
			}
			for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if !strings.HasPrefix(l, "#") {
					t.Fatalf("completion %s: line %q is not a comment:\n%s", tc.shell, l, out)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(out, "#      "+w+"\n") {
					t.Errorf("completion %s lacks the command line %q:\n%s", tc.shell, w, out)
				}
			}
			for _, stock := range []string{"__start_rv", "complete -", "rv completion " + tc.shell + " >"} {
				if strings.Contains(out, stock) {
					t.Errorf("completion %s prints cobra's script for an rv command (%q):\n%s", tc.shell, stock, out)
				}
			}
		})
	}

	help, _, code := run("completion", "--help")
	if code != 0 {
		t.Fatalf("completion --help: exit %d", code)
	}
	for _, w := range append([]string{"After a krew install", "kubectl (1.26 or", "source <(kubectl completion bash)"}, krewHelper...) {
		if !strings.Contains(help, w) {
			t.Errorf("completion --help lacks %q:\n%s", w, help)
		}
	}
	if strings.Contains(help, "source <(rv ") || strings.Contains(help, "\n  rv ") {
		t.Errorf("completion --help speaks of an rv command:\n%s", help)
	}

	out, errOut, code := run("completion", "powershell")
	if code != 2 || out != "" || !strings.Contains(errOut, `unsupported shell "powershell": give bash, zsh, fish`) {
		t.Errorf("completion powershell: want exit 2 naming the shells and no output, got %d %q %q", code, out, errOut)
	}
}
