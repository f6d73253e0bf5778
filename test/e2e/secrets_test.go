//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Secret values of TestSecretsNeverPrinted. Each is long enough that
// no hash, name or message contains it by chance.
const (
	secOld     = "hunter2-e2e-old-value"
	secNew     = "hunter2-e2e-new-value"
	secToken   = "tok3n-e2e-new-value"
	secBad     = "hunter2-e2e-not-base64!"
	secRotated = "hunter2-e2e-rotated-value"
	secPatched = "hunter2-e2e-patched-value"
)

func secB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// secLeaks lists the known values found in out, plain or base64. Every
// value but the token starts with "hunter2-e2e-", and the base64 of a
// value starts with the base64 of those 12 bytes.
func secLeaks(out string) []string {
	var found []string
	for _, f := range []string{"hunter2-e2e", secB64("hunter2-e2e-"), secToken, secB64(secToken)} {
		if strings.Contains(out, f) {
			found = append(found, f)
		}
	}
	return found
}

// secRun runs kubectl rv args and fails the test if its output (both
// streams) holds a known value, or if the command failed (exit 0 or 1 are
// success) unless mayFail; it returns both streams.
func secRun(t *testing.T, mayFail bool, args ...string) string {
	t.Helper()
	r := cluster.RV(t, args...)
	if r.Code != 0 && r.Code != 1 && !mayFail {
		t.Errorf("kubectl rv %s: %s", strings.Join(args, " "), r)
	}
	all := r.Stdout + r.Stderr
	if l := secLeaks(all); len(l) > 0 {
		t.Errorf("kubectl rv %s shows the Secret values %q:\n%s", strings.Join(args, " "), l, all)
	}
	return all
}

func secFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecretsNeverPrinted runs every command that prints object content
// on a Secret with known values (issue #19): owners in every view and
// format, predict in both engines, every method and every -o (a stringData
// manifest, a data manifest, a List, a multi-document file, an invalid
// base64 value and a JSON patch with a test operation), watch with --diff,
// -o json and --record, and the replay of that recording. No output holds
// a value, in plain text or base64, unless --show-secrets is given.
func TestSecretsNeverPrinted(t *testing.T) {
	ns := cluster.Namespace(t)
	dir := t.TempDir()
	// kubectl apply keeps the old value in the last-applied annotation too.
	cluster.KubectlStdin(t, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: %s}\nstringData: {password: %s}\n", ns, secOld), "apply", "-f", "-")
	cluster.KubectlStdin(t, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s2, namespace: %s}\ndata: {token: %s}\n", ns, secB64(secOld)), "apply", "-f", "-")
	live := secFile(t, dir, "live.yaml", cluster.MustKubectl(t, "get", "secrets", "s1", "s2", "-n", ns, "-o", "yaml", "--show-managed-fields"))

	t.Run("owners", func(t *testing.T) {
		for _, view := range []string{"tree", "blame", "table", "summary"} {
			secRun(t, false, "owners", "secret/s1", "-n", ns, "--view", view)
		}
		for _, o := range []string{"json", "yaml"} {
			secRun(t, false, "owners", "secret/s1", "-n", ns, "-o", o)
		}
		if out := cluster.RV(t, "owners", "secret/s1", "-n", ns, "--view", "blame", "--show-secrets").Stdout; !strings.Contains(out, secB64(secOld)) {
			t.Errorf("owners --show-secrets should show the value:\n%s", out)
		}
	})

	manifests := map[string]string{
		"stringData": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: %s}\nstringData: {password: %s}\n", ns, secNew),
		"data":       fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: %s}\ndata: {password: %s, token: %s}\n", ns, secB64(secNew), secB64(secToken)),
		"list": fmt.Sprintf(`{"apiVersion":"v1","kind":"List","items":[`+
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s1","namespace":%q},"stringData":{"password":%q}},`+
			`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s2","namespace":%q},"data":{"token":%q}}]}`, ns, secNew, ns, secB64(secToken)),
		"multi-document": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: %s}\nstringData: {password: %s}\n---\n"+
			"apiVersion: v1\nkind: Secret\nmetadata: {name: s2, namespace: %s}\ndata: {token: %s}\n", ns, secNew, ns, secB64(secToken)),
		"invalid-base64": fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: %s}\ndata: {password: %q}\n", ns, secBad),
	}
	engines := map[string][]string{"server": nil, "offline": {"--offline", "--live", live}}
	t.Run("predict", func(t *testing.T) {
		for name, m := range manifests {
			f := secFile(t, dir, name+".yaml", m)
			for _, flags := range engines {
				for _, o := range []string{"table", "wide", "json", "yaml"} {
					args := append([]string{"predict", "-f", f, "--field-manager", "ci", "-o", o}, flags...)
					// The server answers an invalid base64 value with a 500.
					out := secRun(t, name == "invalid-base64", args...)
					if name != "invalid-base64" && !strings.Contains(out, "s1") {
						t.Errorf("%s: no prediction for s1:\n%s", strings.Join(args, " "), out)
					}
				}
			}
		}
		patch := fmt.Sprintf(`[{"op":"test","path":"/data/password","value":%q},{"op":"replace","path":"/data/password","value":%q}]`, secB64(secNew), secB64(secPatched))
		for engine, flags := range engines {
			for _, o := range []string{"table", "json", "yaml"} {
				out := secRun(t, false, append([]string{"predict", "secret/s1", "-n", ns, "--type", "json", "--patch", patch, "-o", o}, flags...)...)
				if !strings.Contains(out, "invalid") {
					t.Errorf("%s: the test operation should fail:\n%s", engine, out)
				}
			}
		}
	})
	t.Run("predict --show-secrets", func(t *testing.T) {
		f := secFile(t, dir, "shown.yaml", manifests["stringData"])
		for engine, flags := range engines {
			out := cluster.RV(t, append([]string{"predict", "-f", f, "--field-manager", "ci", "-o", "json", "--show-secrets"}, flags...)...).Stdout
			if !strings.Contains(out, secNew) {
				t.Errorf("%s: --show-secrets should show the value in the requests:\n%s", engine, out)
			}
		}
	})

	record := filepath.Join(dir, "secrets.jsonl")
	t.Run("watch", func(t *testing.T) {
		bg := cluster.StartRV(t, "watch", "secret/s1", "-n", ns, "--diff", "--record", record)
		bg.WaitFor(t, time.Minute, "the initial row", func(l string) bool { return strings.Contains(l, "secret/s1") })
		// The rotation may be missed while the watch starts: rotate until
		// a MODIFIED row appears.
		deadline := time.Now().Add(time.Minute)
		for i := 0; ; i++ {
			cluster.KubectlStdin(t, fmt.Sprintf("apiVersion: v1\nkind: Secret\nmetadata: {name: s1, namespace: %s}\nstringData: {password: %s-%d}\n", ns, secRotated, i), "apply", "-f", "-")
			done := false
			for _, l := range bg.Lines() {
				done = done || strings.Contains(l, "MODIFIED")
			}
			if done || time.Now().After(deadline) {
				break
			}
			time.Sleep(2 * time.Second)
		}
		res := bg.Stop(t)
		rec, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		all := res.Stdout + res.Stderr + string(rec)
		if l := secLeaks(all); len(l) > 0 {
			t.Errorf("watch shows %q:\n%s", l, all)
		}
		if !strings.Contains(res.Stdout, "MODIFIED") || !strings.Contains(string(rec), "sha256:") {
			t.Errorf("the rotation should show as a change of hashes:\n%s\nrecording:\n%s", res.Stdout, rec)
		}
		secRun(t, false, "watch", "secret/s1", "-n", ns, "-o", "json", "--for", "2s")
	})
	t.Run("replay", func(t *testing.T) {
		secRun(t, false, "watch", "--replay", record)
		for _, o := range []string{"table", "json", "yaml"} {
			secRun(t, false, "simulate", "replay", record, "-o", o)
			out := secRun(t, false, "simulate", "replay", record, "--object", "secrets/"+ns+"/s1", "-o", o)
			if !strings.Contains(out, "sha256:") {
				t.Errorf("replay -o %s should show the hashes:\n%s", o, out)
			}
		}
	})
}
