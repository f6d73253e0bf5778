//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-rv/kubectl-rv/krew"
)

// releaseVersion is the version the e2e run's release is built as.
const releaseVersion = "v0.0.0-e2e.1"

// releasePlatforms are the platforms the e2e run's release builds: this
// machine's, which the test installs and runs, and one foreign platform to
// catch code that builds only here. The foreign one is windows/amd64 (or
// linux/amd64 on windows): the only platform outside the unix build tag
// (pkg/audit's listen_files_other.go, and mmap_other.go, which darwin
// builds too), and the only one packed as a .zip of kubectl-rv.exe and
// kubectl_complete-rv.cmd, which the manifest's rules treat apart. All
// five are built and checked by make release-check; the other three
// differ from these two by GOARCH or by darwin, which keeps unix's files.
func releasePlatforms() []string {
	foreign := "windows/amd64"
	if runtime.GOOS == "windows" {
		foreign = "linux/amd64"
	}
	return []string{runtime.GOOS + "/" + runtime.GOARCH, foreign}
}

// releaseBuild is the run's release build. hack/release.sh cross-compiles
// kubectl-rv for releasePlatforms: it starts in the background as the run
// starts (TestMain), at the lowest CPU priority, so that it takes the
// cycles the other tests leave idle while they wait on their control
// planes; the release test, a parallel one, waits for it at the end of
// the run.
type releaseBuild struct {
	once sync.Once
	done chan struct{}
	// dir holds dist, the release; TestMain removes it.
	dir, dist string
	// commits are HEAD as the build started and as it ended.
	commits []string
	out     []byte
	err     error
	took    time.Duration
	cancel  context.CancelFunc
}

var release = &releaseBuild{done: make(chan struct{})}

// startRelease starts the release build once and returns it.
func startRelease() *releaseBuild {
	b := release
	b.once.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		b.cancel = cancel
		go func() {
			defer close(b.done)
			b.err = b.build(ctx)
		}()
	})
	return b
}

func (b *releaseBuild) build(ctx context.Context) error {
	start := time.Now()
	defer func() { b.took = time.Since(start) }()
	head := func() error {
		out, err := exec.Command("git", "-C", cluster.Root, "rev-parse", "HEAD").Output()
		if err != nil {
			return fmt.Errorf("git rev-parse HEAD: %v", err)
		}
		b.commits = append(b.commits, strings.TrimSpace(string(out)))
		return nil
	}
	if err := head(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "rv-e2e-release-")
	if err != nil {
		return err
	}
	b.dir, b.dist = dir, filepath.Join(dir, "dist")
	cmd := exec.CommandContext(ctx, "nice", "-n", "19", filepath.Join(cluster.Root, "hack", "release.sh"), releaseVersion)
	cmd.Dir = cluster.Root
	cmd.Env = append(os.Environ(), "DIST="+b.dist, "PLATFORMS="+strings.Join(releasePlatforms(), " "))
	// The script's go builds are its children: cancel kills them all.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if b.out, err = cmd.CombinedOutput(); err != nil {
		return err
	}
	return head()
}

// stopRelease stops a build still running (the release test was not run)
// and removes what it built.
func stopRelease() {
	b := release
	if b.cancel == nil {
		return
	}
	b.cancel()
	<-b.done
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// TestReleaseInstallsLikeKrewAndRunsThroughKubectl checks the release
// hack/release.sh built (releaseBuild): the rendered krew manifest, the
// checksums and every archive (krew.CheckRelease), then installs the
// archive of this machine's platform the way krew does (the manifest's
// files and bin, the caveats' completion helper) into an empty PATH and
// runs kubectl rv through kubectl.
func TestReleaseInstallsLikeKrewAndRunsThroughKubectl(t *testing.T) {
	t.Parallel()
	b := startRelease()
	<-b.done
	if b.err != nil {
		t.Fatalf("hack/release.sh %s: %v\n%s", releaseVersion, b.err, b.out)
	}
	t.Logf("hack/release.sh took %s (in the background, at the lowest CPU priority)", b.took.Round(time.Second))
	// Other commits may land while the release builds: either is fine.
	commits := b.commits
	tmp := t.TempDir()
	dist := b.dist

	license, err := os.ReadFile(filepath.Join(cluster.Root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(license, []byte("Apache License")) || !bytes.Contains(license, []byte("Version 2.0, January 2004")) {
		t.Fatal("LICENSE is not the Apache License 2.0")
	}
	// The manifest passes every krew rule, names this release and lists
	// exactly the platforms built; the checksums and every archive agree
	// with it (hack/release.sh ran the same check; this one reports here).
	m, err := krew.CheckRelease(krew.Release{Dir: dist, Version: releaseVersion, Platforms: releasePlatforms(), License: license})
	if err != nil {
		t.Fatalf("the release in %s:\n%v", dist, err)
	}
	var host *krew.Platform
	for i, p := range m.Spec.Platforms {
		if p.Selector.MatchLabels["os"] == runtime.GOOS && p.Selector.MatchLabels["arch"] == runtime.GOARCH {
			host = &m.Spec.Platforms[i]
		}
	}
	if host == nil {
		t.Fatalf("no archive for this machine's platform %s/%s", runtime.GOOS, runtime.GOARCH)
	}

	// Install like krew: unpack, apply the file operations into the
	// plugin's version folder, link bin into krew's bin folder as
	// kubectl-<plugin name>.
	store := filepath.Join(tmp, "krew", "store", m.Metadata.Name, releaseVersion)
	binDir := filepath.Join(tmp, "krew", "bin")
	for _, d := range []string{store, binDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files, err := krew.ReadArchive(filepath.Join(dist, path.Base(host.URI)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range host.Files {
		dst := filepath.Join(store, f.To, path.Base(f.From))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, files[f.From].Data, files[f.From].Mode.Perm()); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(store, host.Bin), filepath.Join(binDir, "kubectl-"+m.Metadata.Name)); err != nil {
		t.Fatal(err)
	}
	// The caveats' commands create the completion helper, as written: with
	// KREW_ROOT set (krew's own variable) they must write into $KREW_ROOT/bin.
	var caveat []string
	for _, l := range strings.Split(m.Spec.Caveats, "\n") {
		if strings.Contains(l, "/bin/kubectl_complete-rv") {
			caveat = append(caveat, strings.TrimSpace(l))
		}
	}
	if len(caveat) == 0 {
		t.Fatalf("the caveats give no command for the completion helper:\n%s", m.Spec.Caveats)
	}
	caveatCmd := exec.Command("sh", "-c", strings.Join(caveat, "\n"))
	caveatCmd.Env = append(os.Environ(), "KREW_ROOT="+filepath.Dir(binDir), "HOME="+filepath.Join(tmp, "home-without-krew"))
	if out, err := caveatCmd.CombinedOutput(); err != nil {
		t.Fatalf("the caveats' commands failed: %v\n%s\n%s", err, strings.Join(caveat, "\n"), out)
	}

	// Only krew's bin folder and kubectl on PATH: no other kubectl-rv.
	env := []string{"PATH=" + binDir + string(os.PathListSeparator) + cluster.BinDir + string(os.PathListSeparator) + "/usr/bin:/bin"}
	for _, e := range cluster.Env() {
		if !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	kubectl := func(args ...string) (string, error) {
		c := exec.Command(filepath.Join(cluster.BinDir, "kubectl"), args...)
		c.Env = env
		var stderr bytes.Buffer
		c.Stderr = &stderr
		out, err := c.Output()
		if err != nil {
			return string(out), errors.New(err.Error() + ": " + stderr.String())
		}
		return string(out), nil
	}
	out, err := kubectl("rv", "version")
	if err != nil {
		t.Fatalf("kubectl rv version from the installed archive: %v\n%s", err, out)
	}
	for _, want := range []string{"Client Version: " + releaseVersion + "\n", "Server Version: v1.36."} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl rv version should print %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "Git Commit: "+commits[0]+"\n") && !strings.Contains(out, "Git Commit: "+commits[1]+"\n") {
		t.Errorf("kubectl rv version should print the commit %s:\n%s", commits[1], out)
	}
	out, err = kubectl("rv", "version", "--client", "-o", "json")
	if err != nil || !strings.Contains(out, `"platform": "`+runtime.GOOS+"/"+runtime.GOARCH+`"`) || !strings.Contains(out, `"buildDate": "`) {
		t.Errorf("kubectl rv version --client -o json: %v\n%s", err, out)
	}
	// simulate runs the API server's rules, linked in the one executable.
	out, err = kubectl("rv", "simulate")
	if err != nil || !strings.Contains(out, "409 Conflict") {
		t.Errorf("kubectl rv simulate from the installed archive: %v\n%s", err, out)
	}
	// conflicts --source: a closed port makes the log service's reader
	// itself answer.
	out, err = kubectl("rv", "conflicts", "--source", "elasticsearch:http://127.0.0.1:1/audit")
	if err == nil || !strings.Contains(err.Error(), "open a point in time") || strings.Contains(err.Error(), "is missing") {
		t.Errorf("kubectl rv conflicts --source from the installed archive: want the reader's connection error, got %v\n%s", err, out)
	}
	// predict --offline --schema runs custom resources' rules: a CEL rule
	// of the CRD refuses the write.
	inputs := map[string]string{"crd.yaml": dialCRD, "live.yaml": releaseDialLive, "m.yaml": "apiVersion: predict.example.com/v1\nkind: Dial\nmetadata: {name: d, namespace: ns}\nspec: {size: 9}\n"}
	for name, data := range inputs {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err = kubectl("rv", "predict", "-f", filepath.Join(tmp, "m.yaml"), "--offline", "--live", filepath.Join(tmp, "live.yaml"), "--schema", filepath.Join(tmp, "crd.yaml"), "--method", "update", "--fail-on", "none")
	if err != nil || !strings.Contains(out, "invalid   422") || !strings.Contains(out, "size is at most 8") {
		t.Errorf("kubectl rv predict --offline --schema from the installed archive: want the CRD's CEL rule's 422, got %v\n%s", err, out)
	}
	out, err = kubectl("__complete", "rv", "vers")
	if err != nil || !strings.HasPrefix(out, "version\t") {
		t.Errorf("completion through the caveats' helper: %v\n%s", err, out)
	}
}

// releaseDialLive is a Dial (dialCRD) as kubectl get --show-managed-fields
// prints it, for the release test's predict --offline --schema.
const releaseDialLive = `apiVersion: predict.example.com/v1
kind: Dial
metadata:
  name: d
  namespace: ns
  resourceVersion: "7"
  generation: 1
  managedFields:
  - apiVersion: predict.example.com/v1
    fieldsType: FieldsV1
    fieldsV1: {"f:spec": {"f:size": {}}}
    manager: owner
    operation: Apply
    time: "2026-11-24T13:34:42Z"
spec: {size: 2, color: blue}
`
