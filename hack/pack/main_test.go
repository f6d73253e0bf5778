package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-rv/kubectl-rv/krew"
)

func writeInputs(t *testing.T) (dir string, entries []entry) {
	t.Helper()
	dir = t.TempDir()
	for name, mode := range map[string]os.FileMode{"kubectl-rv": 0o755, "LICENSE": 0o644} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("content of "+name), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir, []entry{{"kubectl-rv", filepath.Join(dir, "kubectl-rv")}, {"LICENSE", filepath.Join(dir, "LICENSE")}}
}

type file struct {
	Mode    os.FileMode
	Content string
	ModTime time.Time
}

func TestArchivesKeepContentModeAndTime(t *testing.T) {
	_, entries := writeInputs(t)
	mtime := time.Unix(1763737200, 0).UTC()
	want := map[string]file{
		"kubectl-rv": {0o755, "content of kubectl-rv", mtime},
		"LICENSE":    {0o644, "content of LICENSE", mtime},
	}

	var tgz bytes.Buffer
	if err := writeTarGz(&tgz, entries, mtime); err != nil {
		t.Fatal(err)
	}
	gz, err := gzip.NewReader(bytes.NewReader(tgz.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]file{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got[h.Name] = file{h.FileInfo().Mode().Perm(), string(data), h.ModTime.UTC()}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tar.gz entries (-want +got):\n%s", diff)
	}

	var zbuf bytes.Buffer
	if err := writeZip(&zbuf, entries, mtime); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]file{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		got[f.Name] = file{f.Mode().Perm(), string(data), f.Modified.UTC()}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zip entries (-want +got):\n%s", diff)
	}
}

func TestArchivesAreReproducible(t *testing.T) {
	_, entries := writeInputs(t)
	for _, write := range []func(io.Writer, []entry, time.Time) error{writeTarGz, writeZip} {
		var a, b bytes.Buffer
		if err := write(&a, entries, time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		if err := write(&b, entries, time.Unix(1, 0)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Error("two archives of the same files differ")
		}
	}
}

func TestManifestRendersFromArchives(t *testing.T) {
	dir := t.TempDir()
	var archives []string
	for _, p := range krew.Platforms {
		os_, arch, _ := strings.Cut(p, "/")
		ext := ".tar.gz"
		if os_ == "windows" {
			ext = ".zip"
		}
		a := filepath.Join(dir, "kubectl-rv_v0.1.0_"+os_+"_"+arch+ext)
		if err := os.WriteFile(a, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
		archives = append(archives, a)
	}
	out := filepath.Join(dir, "rv.yaml")
	m := renderManifest(t, out, "https://example.com/dl/", archives)
	sum := sha256.Sum256([]byte("linux/amd64"))
	p := m.Spec.Platforms[0]
	if p.URI != "https://example.com/dl/kubectl-rv_v0.1.0_linux_amd64.tar.gz" {
		t.Errorf("uri = %q", p.URI)
	}
	if want := hex.EncodeToString(sum[:]); p.SHA256 != want {
		t.Errorf("sha256 = %q, want %q", p.SHA256, want)
	}

	// A platform the template does not list, a bad version or a foreign
	// archive name fail.
	plan9 := filepath.Join(dir, "kubectl-rv_v0.1.0_plan9_amd64.tar.gz")
	if err := os.WriteFile(plan9, []byte("plan9"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, args := range map[string][]string{
		"unknown platform": append([]string{"-template", "../../krew/rv.yaml", "-version", "v0.1.0", "-base-url", "https://example.com", "-o", out}, append(archives, plan9)...),
		"bad version":      append([]string{"-template", "../../krew/rv.yaml", "-version", "0.1", "-base-url", "https://example.com", "-o", out}, archives...),
		"other version":    {"-template", "../../krew/rv.yaml", "-version", "v0.2.0", "-base-url", "https://example.com", "-o", out, archives[0]},
	} {
		if err := manifestCmd(args); err == nil {
			t.Errorf("%s: manifest succeeded", name)
		}
	}
}

// TestManifestOfSomePlatforms is hack/release.sh with PLATFORMS set: the
// manifest lists exactly the platforms built, in the template's order.
func TestManifestOfSomePlatforms(t *testing.T) {
	dir := t.TempDir()
	var archives []string
	for _, name := range []string{"kubectl-rv_v0.1.0_windows_amd64.zip", "kubectl-rv_v0.1.0_linux_arm64.tar.gz"} {
		a := filepath.Join(dir, name)
		if err := os.WriteFile(a, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		archives = append(archives, a)
	}
	out := filepath.Join(dir, "rv.yaml")
	m := renderManifest(t, out, "https://example.com/dl", archives)
	var got []string
	for _, p := range m.Spec.Platforms {
		got = append(got, p.Selector.MatchLabels["os"]+"/"+p.Selector.MatchLabels["arch"]+" "+p.URI)
	}
	want := []string{
		"linux/arm64 https://example.com/dl/kubectl-rv_v0.1.0_linux_arm64.tar.gz",
		"windows/amd64 https://example.com/dl/kubectl-rv_v0.1.0_windows_amd64.zip",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("platforms (-want +got):\n%s", diff)
	}
	if err := krew.Validate(m, out); err == nil {
		t.Error("Validate accepted a manifest without all five platforms; only ValidateFor should")
	}
}

// renderManifest runs pack manifest for v0.1.0 over the archives into out
// and parses what it wrote.
func renderManifest(t *testing.T, out, baseURL string, archives []string) *krew.Manifest {
	t.Helper()
	args := append([]string{"-template", "../../krew/rv.yaml", "-version", "v0.1.0", "-base-url", baseURL, "-o", out}, archives...)
	if err := manifestCmd(args); err != nil {
		t.Fatalf("manifest: %v", err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := krew.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestVerifyChecksWhatReleaseBuilt is hack/release.sh's last step on a
// release of two platforms packed by pack archive and pack manifest: it
// passes for those two, and fails when all five are wanted (make
// release-check) or an archive changed after the manifest.
func TestVerifyChecksWhatReleaseBuilt(t *testing.T) {
	dir := t.TempDir()
	_, entries := writeInputs(t)
	in := filepath.Dir(entries[0].path)
	for name, data := range map[string]string{"kubectl-rv": "built as v0.1.0", "kubectl-rv.exe": "built as v0.1.0", "kubectl_complete-rv": "helper", "kubectl_complete-rv.cmd": "helper", "README.md": "# kubectl rv"} {
		if err := os.WriteFile(filepath.Join(in, name), []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var archives []string
	var sums strings.Builder
	for _, a := range []struct{ name, exe, complete string }{
		{"kubectl-rv_v0.1.0_linux_amd64.tar.gz", "kubectl-rv", "kubectl_complete-rv"},
		{"kubectl-rv_v0.1.0_windows_amd64.zip", "kubectl-rv.exe", "kubectl_complete-rv.cmd"},
	} {
		out := filepath.Join(dir, a.name)
		args := []string{"-o", out, "-mtime", "1"}
		for _, f := range []string{a.exe, a.complete, "LICENSE", "README.md"} {
			args = append(args, f+"="+filepath.Join(in, f))
		}
		if err := archiveCmd(args); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		sums.WriteString(hex.EncodeToString(sum[:]) + "  " + a.name + "\n")
		archives = append(archives, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubectl-rv_v0.1.0_checksums.txt"), []byte(sums.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	renderManifest(t, filepath.Join(dir, "rv.yaml"), "https://example.com/dl", archives)

	verify := func(platforms string) error {
		return verifyCmd([]string{"-dir", dir, "-version", "v0.1.0", "-license", filepath.Join(in, "LICENSE"), "-platforms", platforms})
	}
	if err := verify("linux/amd64 windows/amd64"); err != nil {
		t.Fatalf("verify of the two platforms built: %v", err)
	}
	if err := verify(strings.Join(krew.Platforms, " ")); err == nil || !strings.Contains(err.Error(), "no archive for linux/arm64") {
		t.Errorf("verify wanting all five platforms of a release of two: want linux/arm64 named, got %v", err)
	}
	if err := archiveCmd([]string{"-o", archives[0], "-mtime", "2", "kubectl-rv=" + filepath.Join(in, "kubectl-rv"), "LICENSE=" + filepath.Join(in, "LICENSE")}); err != nil {
		t.Fatal(err)
	}
	err := verify("linux/amd64 windows/amd64")
	for _, want := range []string{"linux_amd64.tar.gz: sha256 of the file", "installs kubectl_complete-rv, which the archive lacks", "linux_amd64.tar.gz: no README.md"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("verify after the linux archive was repacked without README.md: want %q, got %v", want, err)
		}
	}
}
