//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestConflictsNeverPrintsSecrets writes a Secret with known values in the
// namespace the test control plane audits at RequestResponse level (so the
// log holds the bodies: the test checks that it does), with a 409 among the
// writes, and runs kubectl rv conflicts over that log in every view and
// format and with a report picture: no output holds a value (issue #19).
func TestConflictsNeverPrintsSecrets(t *testing.T) {
	const ns = "rv-audit-rr"
	cs := cluster.Clientset(t, "secret-writer")
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	segment := auditSegment(t)
	s, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "conflicted"},
		StringData: map[string]string{"password": secOld},
	}, metav1.CreateOptions{FieldManager: "secret-writer"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Secrets(ns).Delete(context.Background(), s.Name, metav1.DeleteOptions{}) })
	fresh := s.DeepCopy()
	fresh.Data = map[string][]byte{"password": []byte(secNew)}
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, fresh, metav1.UpdateOptions{FieldManager: "secret-writer"}); err != nil {
		t.Fatal(err)
	}
	stale := s.DeepCopy() // still at the create's resourceVersion
	stale.Data = map[string][]byte{"password": []byte(secRotated)}
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, stale, metav1.UpdateOptions{FieldManager: "secret-writer"}); !apierrors.IsConflict(err) {
		t.Fatalf("the stale update: want 409, got %v", err)
	}
	log := segment()
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), secB64(secNew)) {
		t.Fatalf("the audit log of %s holds no Secret body: the test would prove nothing", ns)
	}
	dir := t.TempDir()
	for _, view := range []string{"objects", "writers", "timeline", "causes"} {
		for _, o := range []string{"table", "json", "yaml"} {
			args := []string{"conflicts", "--audit-log", log, "--view", view, "-o", o, "--top", "0"}
			if view == "timeline" {
				args = append(args, "--object", "secrets/conflicted", "-n", ns)
			}
			out := secRun(t, false, args...)
			if view == "causes" && o == "json" && !strings.Contains(out, "409") && !strings.Contains(out, "stale") {
				t.Errorf("conflicts --view causes saw no 409 of the stale update:\n%s", out)
			}
		}
	}
	report := filepath.Join(dir, "conflicts.html")
	secRun(t, false, "conflicts", "--audit-log", log, "--report", report)
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if l := secLeaks(string(b)); len(l) > 0 {
		t.Errorf("the report picture shows the Secret values %q", l)
	}
}
